#include "input_bytes.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "matrix_io/error.hpp"

namespace pagh::matrix_io::detail {
namespace {

[[noreturn]] void fail_system(const std::string& name, const char* what) {
  throw MatrixMarketError(name, 0, std::string(what) + ": " + std::strerror(errno));
}

// Closes the descriptor on every way out of the constructor.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

InputBytes::InputBytes(const std::filesystem::path& path, const std::function<bool(std::string_view)>& could_start_input)
    : name_(path.string()) {
  Descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) fail_system(name_, "cannot open file");
  struct stat status {};
  if (::fstat(file.fd, &status) != 0) fail_system(name_, "cannot inspect file");
  if (S_ISDIR(status.st_mode)) throw MatrixMarketError(name_, 0, "cannot read file: it is a directory");
  // A regular file of size 0 may still have content (files under /proc): read those whole too.
  if (S_ISREG(status.st_mode) && status.st_size > 0) {
    // Mapped, not read: parsing threads read their parts straight from the page cache, and the
    // bytes are never held twice.
    mapped_bytes_ = static_cast<std::size_t>(status.st_size);
    void* mapping = ::mmap(nullptr, mapped_bytes_, PROT_READ, MAP_PRIVATE, file.fd, 0);
    if (mapping == MAP_FAILED) fail_system(name_, "cannot read file");
    mapping_ = mapping;
    ::madvise(mapping_, mapped_bytes_, MADV_WILLNEED);
    bytes_ = {static_cast<const char*>(mapping_), mapped_bytes_};
    return;
  }
  char chunk[1 << 16];
  for (;;) {
    if (!could_start_input(slurped_)) break;
    if (slurped_.size() > max_stream_bytes)
      throw MatrixMarketError(name_, 0, "input larger than " + std::to_string(max_stream_bytes >> 30) +
                                            " GiB from a pipe or device (the most read from one; save it to a regular file)");
    const ssize_t got = ::read(file.fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail_system(name_, "cannot read file");
    if (got == 0) break;
    slurped_.append(chunk, static_cast<std::size_t>(got));
  }
  bytes_ = slurped_;
}

InputBytes::~InputBytes() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapped_bytes_);
}

}  // namespace pagh::matrix_io::detail
