// Where the text of a Matrix Market file comes from: a buffer already in memory, a regular file
// mapped into memory (never copied), or gzip-compressed input (recognised by its magic bytes, not
// its name) decompressed as a stream, in large blocks of whole lines, never whole.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

namespace pagh::matrix_io::detail {

class GzipBlocks;
class InputBytes;

class TextSource {
 public:
  // The text is borrowed: it must outlive the source. Compressed text is decompressed.
  TextSource(std::string_view text, std::string_view name);
  // Opens the file (input_bytes.hpp: mapped, or for a pipe or device read whole, stopping early
  // when its first bytes cannot start a banner or a gzip stream).
  explicit TextSource(const std::filesystem::path& path);
  ~TextSource();
  TextSource(const TextSource&) = delete;
  TextSource& operator=(const TextSource&) = delete;

  // The next block of complete lines: it ends just after a '\n', or at the end of the input. Empty
  // once the input is exhausted. The view stays valid until the next call. Uncompressed input comes
  // as one block.
  std::string_view next_block();

  // Size of the whole text in bytes, known before the first block; unknown_size for compressed
  // input (its decompressed size is only known at its end).
  static constexpr std::uint64_t unknown_size = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t total_bytes() const { return total_bytes_; }
  bool compressed() const { return gzip_ != nullptr; }
  const std::string& name() const { return name_; }

 private:
  void start(std::string_view bytes);

  std::unique_ptr<InputBytes> file_;
  std::string name_;
  std::uint64_t total_bytes_ = 0;
  std::string_view memory_;      // uncompressed input not yet handed out
  std::unique_ptr<GzipBlocks> gzip_;
};

}  // namespace pagh::matrix_io::detail
