// A file read with explicit bounds: the caller says how many bytes it wants, never "until the end",
// so that a character device or an endless pipe given as a file cannot exhaust memory. Regular
// files report their size up front, so that a claim can be checked against it before reading.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace pagh {

class BoundedFile {
 public:
  // Throws pagh::Error(where, path + ": cannot open file: <reason>") when it cannot be opened or is
  // a directory.
  BoundedFile(const std::string& path, const char* where);
  ~BoundedFile();
  BoundedFile(const BoundedFile&) = delete;
  BoundedFile& operator=(const BoundedFile&) = delete;

  // The size of a regular file; nothing for pipes, devices and sockets.
  std::optional<std::uint64_t> size() const { return size_; }
  // Reads up to `bytes` bytes into out; fewer only at the end of the input. Throws pagh::Error when
  // reading fails.
  std::uint64_t read(unsigned char* out, std::uint64_t bytes);

 private:
  std::string path_;
  const char* where_;
  int descriptor_ = -1;
  std::optional<std::uint64_t> size_;
};

}  // namespace pagh
