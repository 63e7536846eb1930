#include "text_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ostream>

#include "matrix_io/error.hpp"

namespace pagh::matrix_io::detail {

AtomicFileOutput::AtomicFileOutput(const std::filesystem::path& target)
    : TextOutput(target.string()), target_(target) {
  if (target.filename().empty()) throw MatrixMarketError(name(), 0, "cannot write: the path names no file");
  // A name unique among this process's writers (counter) and other processes (pid); O_EXCL makes
  // sure an existing file is never reused, whoever made it.
  static std::atomic<unsigned long> counter{0};
  const std::filesystem::path directory = target.parent_path();
  for (int attempt = 0; attempt < 100 && descriptor_ < 0; ++attempt) {
    std::string name(1, '.');  // hidden, and never mistaken for the target
    name.append(target.filename().string()).append(".tmp-").append(std::to_string(::getpid()));
    name.append("-").append(std::to_string(counter.fetch_add(1)));
    temporary_ = directory / name;
    descriptor_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (descriptor_ < 0 && errno != EEXIST) fail_system("cannot create temporary file " + temporary_.string());
  }
  if (descriptor_ < 0) fail_system("cannot create a temporary file next to it");
}

AtomicFileOutput::~AtomicFileOutput() {
  if (descriptor_ >= 0) ::close(descriptor_);
  if (!committed_ && !temporary_.empty()) ::unlink(temporary_.c_str());
}

void AtomicFileOutput::fail_system(const std::string& what) const {
  throw MatrixMarketError(name(), 0, what + ": " + std::strerror(errno));
}

void AtomicFileOutput::deliver(std::string_view text) {
  while (!text.empty()) {
    const ssize_t written = ::write(descriptor_, text.data(), text.size());
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) fail_system("cannot write temporary file " + temporary_.string());
    text.remove_prefix(static_cast<std::size_t>(written));
  }
}

void AtomicFileOutput::commit() {
  flush();
  // fsync before rename: after a crash the target holds either the old or the complete new text.
  if (::fsync(descriptor_) != 0) fail_system("cannot flush temporary file " + temporary_.string());
  const int descriptor = descriptor_;
  descriptor_ = -1;
  if (::close(descriptor) != 0) fail_system("cannot close temporary file " + temporary_.string());
  if (std::rename(temporary_.c_str(), target_.c_str()) != 0)
    fail_system("cannot rename " + temporary_.string() + " to the target");
  committed_ = true;
}

void StreamOutput::deliver(std::string_view text) {
  out_.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out_) throw MatrixMarketError(name(), 0, "cannot write to the output stream");
}

void StreamOutput::commit() {
  flush();
  out_.flush();
  if (!out_) throw MatrixMarketError(name(), 0, "cannot write to the output stream");
}

}  // namespace pagh::matrix_io::detail
