// Special files for the tests of the output rule (pagh/output_file.hpp): twins of /dev/null and
// /dev/full made in the test's own directory, and a FIFO with a reader.
//
// Never the system's /dev/null or /dev/full: a writer that wrongly renames over its target would
// replace them for the whole machine. mknod needs root (CAP_MKNOD); elsewhere the tests that need
// a twin skip and say why.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

namespace pagh_test {

// Creates a character device with the numbers of /dev/null (1, 3) or /dev/full (1, 7) at path.
// Returns "" on success, otherwise why not (for GTEST_SKIP).
inline std::string make_device_twin(const std::filesystem::path& path, unsigned minor) {
  if (::geteuid() != 0) return "creating a device twin needs root (mknod); not root here";
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, minor)) != 0)
    return std::string("mknod ") + path.string() + " failed: " + std::strerror(errno);
  return "";
}
inline std::string make_null_twin(const std::filesystem::path& path) { return make_device_twin(path, 3); }
inline std::string make_full_twin(const std::filesystem::path& path) { return make_device_twin(path, 7); }

inline bool is_character_device(const std::filesystem::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

inline bool is_fifo(const std::filesystem::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

// A FIFO at path whose reader (a thread) collects everything written into it until the writer
// closes it; bytes() joins the reader. The reader opens the FIFO when it starts, so a writer's
// open does not block for long.
class FifoReader {
 public:
  explicit FifoReader(const std::filesystem::path& path) : path_(path) {
    if (::mkfifo(path.c_str(), 0666) != 0) {
      error_ = std::string("mkfifo failed: ") + std::strerror(errno);
      return;
    }
    reader_ = std::thread([this] {
      const int fd = ::open(path_.c_str(), O_RDONLY);
      if (fd < 0) {
        done_.store(true);
        return;
      }
      char buffer[1 << 16];
      for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        bytes_.append(buffer, static_cast<std::size_t>(n));
      }
      ::close(fd);
      done_.store(true);
    });
  }
  ~FifoReader() { bytes(); }
  const std::string& error() const { return error_; }
  // What the writer wrote; call it after the writer has finished (closed the FIFO or exited).
  const std::string& bytes() {
    if (reader_.joinable()) {
      // Unblock a reader whose writer never came: open the FIFO for writing once and close it
      // (a reader blocked in open() counts as a reader, so this open succeeds; data already in
      // the pipe is still read before the end of file).
      while (!done_.load()) {
        const int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK);
        if (fd >= 0) {
          ::close(fd);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the reader is not in open() yet
      }
      reader_.join();
    }
    return bytes_;
  }

 private:
  std::filesystem::path path_;
  std::thread reader_;
  std::string bytes_, error_;
  std::atomic<bool> done_{false};
};

}  // namespace pagh_test
