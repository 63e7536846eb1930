#include "sketch_file/bounded_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "pagh/error.hpp"

namespace pagh {

BoundedFile::BoundedFile(const std::string& path, const char* where) : path_(path), where_(where) {
  descriptor_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor_ < 0) throw Error(where_, path_ + ": cannot open file: " + std::strerror(errno));
  struct stat status {};
  if (::fstat(descriptor_, &status) != 0) {
    const int error = errno;
    ::close(descriptor_);
    throw Error(where_, path_ + ": cannot open file: " + std::strerror(error));
  }
  if (S_ISDIR(status.st_mode)) {
    ::close(descriptor_);
    throw Error(where_, path_ + ": cannot open file: it is a directory");
  }
  if (S_ISREG(status.st_mode)) size_ = static_cast<std::uint64_t>(status.st_size);
}

BoundedFile::~BoundedFile() { ::close(descriptor_); }

std::uint64_t BoundedFile::read(unsigned char* out, std::uint64_t bytes) {
  // One read() moves at most 1 GiB (Linux moves at most about 2 GiB per call anyway).
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 30;
  std::uint64_t done = 0;
  while (done < bytes) {
    const ssize_t got = ::read(descriptor_, out + done, static_cast<std::size_t>(std::min(bytes - done, kChunk)));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw Error(where_, path_ + ": read failed: " + std::strerror(errno));
    if (got == 0) break;
    done += static_cast<std::uint64_t>(got);
  }
  return done;
}

}  // namespace pagh
