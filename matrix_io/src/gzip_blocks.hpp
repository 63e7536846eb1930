// gzip-compressed Matrix Market text (how SuiteSparse and most public collections ship matrices),
// decompressed with zlib as a stream: blocks of whole lines, one buffer, never the whole text.
// Concatenated gzip members (gzip -c a b > c) read as one text, as gunzip reads them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace pagh::matrix_io::detail {

// Whether bytes start with the gzip magic number (1f 8b).
inline bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

class GzipBlocks {
 public:
  // The compressed bytes are borrowed. Errors (not gzip, corrupt, truncated, wrong checksum) throw
  // MatrixMarketError naming `name`, line 0.
  GzipBlocks(std::string_view compressed, const std::string& name);
  ~GzipBlocks();
  GzipBlocks(const GzipBlocks&) = delete;
  GzipBlocks& operator=(const GzipBlocks&) = delete;

  // The next block of whole lines (ends after a '\n', or at the end of the text); empty at the end.
  // Valid until the next call. A corrupt or truncated stream throws when decompression reaches the
  // damage, after the blocks before it were handed out: what was built from them must be dropped.
  std::string_view next_block();

  // Blocks are about this large; a line longer than max_line_bytes is refused (a compressed input
  // can expand to any size, and one line must fit the buffer).
  static constexpr std::size_t block_bytes = std::size_t{32} << 20;
  static constexpr std::size_t max_line_bytes = std::size_t{1} << 30;

 private:
  void fill();
  [[noreturn]] void fail(const std::string& reason) const;

  struct Stream;
  std::unique_ptr<Stream> stream_;
  std::string name_;
  // [begin_, filled_) decompressed, not yet handed out. Not value-initialized: a small input touches
  // only the pages it fills.
  std::unique_ptr<char[]> buffer_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;
  std::size_t filled_ = 0;
  bool finished_ = false;     // every member decompressed and verified
};

}  // namespace pagh::matrix_io::detail
