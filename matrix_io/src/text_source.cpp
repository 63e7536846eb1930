#include "text_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "matrix_io/error.hpp"

namespace pagh::matrix_io::detail {
namespace {

// Large enough that the per-block overhead (a system call, one memchr from the end) vanishes next to
// parsing, small enough to stay in the L2/L3 cache while the parser walks it.
constexpr std::size_t block_bytes = std::size_t{1} << 20;

// Whether text could still be the start of "%%MatrixMarket" (any case, as the parser accepts it).
bool could_be_banner(std::string_view text) {
  constexpr std::string_view banner = "%%matrixmarket";
  for (std::size_t i = 0; i < std::min(text.size(), banner.size()); ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) != banner[i]) return false;
  return true;
}

[[noreturn]] void fail_system(const std::string& name, const char* what) {
  throw MatrixMarketError(name, 0, std::string(what) + ": " + std::strerror(errno));
}

}  // namespace

TextSource::TextSource(std::string_view text, std::string_view name)
    : name_(name), total_bytes_(text.size()), memory_(text), end_of_file_(true) {}

TextSource::TextSource(const std::filesystem::path& path) : name_(path.string()) {
  descriptor_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor_ < 0) fail_system(name_, "cannot open file");
  struct stat status {};
  if (::fstat(descriptor_, &status) != 0) {
    ::close(descriptor_);
    fail_system(name_, "cannot inspect file");
  }
  if (S_ISDIR(status.st_mode)) {
    ::close(descriptor_);
    throw MatrixMarketError(name_, 0, "cannot read file: it is a directory");
  }
  // A regular file of size 0 may still have content (files under /proc): read those whole too.
  if (S_ISREG(status.st_mode) && status.st_size > 0) {
    total_bytes_ = static_cast<std::uint64_t>(status.st_size);
    ::posix_fadvise(descriptor_, 0, 0, POSIX_FADV_SEQUENTIAL);
    buffer_.resize(block_bytes);
    return;
  }
  // A pipe or device: its size is unknown until read, and the reader needs it to refuse headers
  // that declare more entries than the input holds. Read it whole, within bounds: a device such as
  // /dev/zero or an endless pipe must not be read until memory runs out. Input that does not start
  // like a banner is not read past its first bytes (the parser then refuses it), and no more than
  // max_stream_bytes is ever held.
  char chunk[1 << 16];
  for (;;) {
    if (!could_be_banner(slurped_)) break;
    if (slurped_.size() > max_stream_bytes) {
      ::close(descriptor_);
      descriptor_ = -1;
      throw MatrixMarketError(name_, 0, "input larger than " + std::to_string(max_stream_bytes >> 30) +
                                            " GiB from a pipe or device (the most read from one; save it to a regular file)");
    }
    const ssize_t got = ::read(descriptor_, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      ::close(descriptor_);
      fail_system(name_, "cannot read file");
    }
    if (got == 0) break;
    slurped_.append(chunk, static_cast<std::size_t>(got));
  }
  ::close(descriptor_);
  descriptor_ = -1;
  end_of_file_ = true;
  total_bytes_ = slurped_.size();
  memory_ = slurped_;
}

TextSource::~TextSource() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

void TextSource::read_more() {
  // Move the unfinished line to the front, grow when one line fills the whole buffer, then fill.
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, filled_ - begin_);
    filled_ -= begin_;
    begin_ = 0;
  }
  if (filled_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
  while (filled_ < buffer_.size()) {
    const ssize_t got = ::read(descriptor_, buffer_.data() + filled_, buffer_.size() - filled_);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail_system(name_, "cannot read file");
    if (got == 0) {
      end_of_file_ = true;
      break;
    }
    filled_ += static_cast<std::size_t>(got);
  }
}

std::string_view TextSource::next_block() {
  if (descriptor_ < 0) {  // in memory: everything at once
    const std::string_view block = memory_;
    memory_ = {};
    return block;
  }
  for (;;) {
    const char* begin = buffer_.data() + begin_;
    const std::size_t pending = filled_ - begin_;
    if (end_of_file_) {  // hand out the rest, last line with or without its '\n'
      begin_ = filled_;
      return {begin, pending};
    }
    // Hand out up to the last '\n' of what is buffered; keep the unfinished line for later.
    for (std::size_t i = pending; i > 0; --i) {
      if (begin[i - 1] == '\n') {
        begin_ += i;
        return {begin, i};
      }
    }
    read_more();
  }
}

}  // namespace pagh::matrix_io::detail
