// Where the text of a Matrix Market file comes from: a buffer already in memory, or a file read in
// blocks of whole lines (so a file is read once, front to back, never held in memory whole).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace pagh::matrix_io::detail {

class TextSource {
 public:
  // The text is borrowed: it must outlive the source.
  TextSource(std::string_view text, std::string_view name);
  // Opens the file; throws MatrixMarketError (line 0) when it cannot be opened or read. A file that
  // is not a regular file (a pipe, a terminal) is read whole first, so that its size is known;
  // reading stops early when its first bytes cannot start a banner.
  // At most max_stream_bytes of such input is read (more throws MatrixMarketError, line 0).
  static constexpr std::uint64_t max_stream_bytes = std::uint64_t{1} << 30;
  explicit TextSource(const std::filesystem::path& path);
  ~TextSource();
  TextSource(const TextSource&) = delete;
  TextSource& operator=(const TextSource&) = delete;

  // The next block of complete lines: it ends just after a '\n', or at the end of the input. Empty
  // once the input is exhausted. The view stays valid until the next call.
  std::string_view next_block();

  // Size of the whole input in bytes, known before the first block.
  std::uint64_t total_bytes() const { return total_bytes_; }
  const std::string& name() const { return name_; }

 private:
  void read_more();

  std::string name_;
  std::uint64_t total_bytes_ = 0;
  std::string_view memory_;      // in-memory input not yet handed out
  int descriptor_ = -1;          // file input
  bool end_of_file_ = false;
  std::vector<char> buffer_;     // file input: [begin_, filled_) not yet handed out
  std::size_t begin_ = 0;
  std::size_t filled_ = 0;
  std::string slurped_;          // a non-regular file, read whole
};

}  // namespace pagh::matrix_io::detail
