// The bytes of an input file without copying them: a regular file is mapped into memory; a pipe or
// device (whose size is unknown until read) is read whole, within bounds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace pagh::matrix_io::detail {

class InputBytes {
 public:
  // Throws MatrixMarketError (line 0) when the file cannot be opened or read, or is a directory.
  // A non-regular file is read until its end, until more than max_stream_bytes were read (an error:
  // /dev/zero or an endless pipe must not be read until memory runs out), or until
  // could_start_input(bytes so far) is false (then the parser refuses what it got).
  static constexpr std::uint64_t max_stream_bytes = std::uint64_t{1} << 30;
  InputBytes(const std::filesystem::path& path, const std::function<bool(std::string_view)>& could_start_input);
  ~InputBytes();
  InputBytes(const InputBytes&) = delete;
  InputBytes& operator=(const InputBytes&) = delete;

  std::string_view bytes() const { return bytes_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::string_view bytes_;
  void* mapping_ = nullptr;
  std::size_t mapped_bytes_ = 0;
  std::string slurped_;
};

}  // namespace pagh::matrix_io::detail
