// How every writer of the project puts bytes into a file the user named: matrix_io's writer, the
// sketch file (CompressedProduct::save), and the pagh-mm command line all go through OutputFile,
// so one rule holds everywhere:
//
//   a regular file, or a path that does not exist yet
//       written to a hidden temporary file beside it, flushed to disk and renamed over it: readers
//       see the old file or the complete new one, never half of it; a failure leaves the old file
//   a symbolic link (to any of these)
//       the file it finally points to is treated by this rule; the link itself stays a link
//   a character device, a FIFO, a socket or any other special file
//       opened and written directly: renaming over it would replace the device node by a plain
//       file (as root, /dev/null for the whole machine); write errors (ENOSPC on /dev/full) throw
//   a directory, or a path in a directory that does not exist
//       refused before anything is written
//
// Failures throw OutputError (a pagh::Error). Its reason starts with "cannot create" when the
// file could not be created or opened, and with something else ("cannot write", "cannot flush")
// when writing failed midway; callers that report exit statuses tell the two apart by
// OutputError::cannot_create() or, after a library re-wrapped the message, by that prefix.
//
// Header-only (pagh::error is an interface library), so matrix_io and sketch share it without
// depending on each other.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "pagh/error.hpp"

namespace pagh {

class OutputError : public Error {
 public:
  OutputError(std::string where, std::string path, std::string reason, bool cannot_create)
      : Error(where, path + ": " + reason), path_(std::move(path)), reason_(std::move(reason)), cannot_create_(cannot_create) {}
  const std::string& path() const noexcept { return path_; }
  const std::string& reason() const noexcept { return reason_; }
  bool cannot_create() const noexcept { return cannot_create_; }

 private:
  std::string path_, reason_;
  bool cannot_create_;
};

// Files that exist only while a write is in flight (temporaries, staged outputs). An interrupted
// process would leave them behind; the table lets a signal handler remove them. Recording is all
// the library does: it installs no handler (the application decides what a signal means, e.g.
// pagh-mm's interrupt_cleanup.cpp). The table is fixed storage and lock-free atomics, so that
// remove_all() is async-signal-safe.
namespace in_flight {

inline constexpr int kSlots = 64;
inline constexpr std::size_t kPathBytes = 4096;

struct Slot {
  std::atomic<int> state{0};  // 0 free, 1 being filled or emptied, 2 holds a path to remove
  char path[kPathBytes];
};
inline Slot slots[kSlots];

// Records `path`; returns a handle for forget(), or -1 when the table is full or the path too long
// (then the file is only not removed on a signal: writing works as before).
inline int track(const std::filesystem::path& path) noexcept {
  const std::string& text = path.native();
  if (text.size() + 1 > kPathBytes) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!slots[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(slots[i].path, text.c_str(), text.size() + 1);
    slots[i].state.store(2);
    return i;
  }
  return -1;
}

inline void forget(int handle) noexcept {
  if (handle >= 0 && handle < kSlots) slots[handle].state.store(0);
}

// Unlinks every recorded path. Async-signal-safe (atomic loads and unlink only).
inline void remove_all() noexcept {
  for (auto& slot : slots)
    if (slot.state.load() == 2) ::unlink(slot.path);
}

}  // namespace in_flight

// What a path given as an output is, after following symbolic links.
struct OutputTarget {
  enum class Kind { replace, direct } kind = Kind::replace;
  std::filesystem::path path;  // the file to replace or to open (links resolved)
  bool exists = false;         // replace: a regular file is there now
};

// Applies the rule above to `path` without writing anything. `where` names the calling API in
// messages. Throws OutputError (cannot create) for a directory, a missing directory, a symbolic
// link loop, or a directory that cannot be written.
inline OutputTarget resolve_output(const std::filesystem::path& path, const std::string& where) {
  namespace fs = std::filesystem;
  const auto refuse = [&](const std::string& reason) -> OutputTarget {
    throw OutputError(where, path.string(), "cannot create output: " + reason, true);
  };
  if (path.empty() || path.filename().empty() || path.filename() == "." || path.filename() == "..")
    return refuse("the path names no file");
  // Follow links by hand, one hop at a time: a dangling link's target is created, not the link
  // replaced (fs::weakly_canonical would stop at a dangling link).
  fs::path file = path;
  struct stat st {};
  int hops = 0;
  while (::lstat(file.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    if (++hops > 40) return refuse("too many levels of symbolic links");
    std::error_code ec;
    const fs::path next = fs::read_symlink(file, ec);
    if (ec) return refuse("cannot read the symbolic link: " + ec.message());
    file = next.is_absolute() ? next : file.parent_path() / next;
  }
  OutputTarget target;
  target.path = file;
  if (::stat(file.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return refuse(file == path ? "it is a directory" : file.string() + " is a directory");
    if (!S_ISREG(st.st_mode)) {
      target.kind = OutputTarget::Kind::direct;
      if (::access(file.c_str(), W_OK) != 0) return refuse(file.string() + ": " + std::strerror(errno));
      return target;
    }
    target.exists = true;
  } else if (errno != ENOENT) {
    return refuse(std::strerror(errno));
  }
  const fs::path directory = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) return refuse("directory " + directory.string() + " does not exist");
  if (::access(directory.c_str(), W_OK | X_OK) != 0)
    return refuse("cannot write in directory " + directory.string() + ": " + std::strerror(errno));
  return target;
}

// A hidden name beside `file` that no other writer uses: ".<name>.<purpose>-<pid>-<counter>".
inline std::filesystem::path sibling_name(const std::filesystem::path& file, std::string_view purpose) {
  static std::atomic<unsigned long> counter{0};
  std::string name(1, '.');
  name.append(file.filename().string()).append(".").append(purpose).append("-");
  name.append(std::to_string(::getpid())).append("-").append(std::to_string(counter.fetch_add(1)));
  return file.parent_path() / name;
}

// One output being written by the rule above. Nothing is visible under the target's name before
// commit() (for special files: nothing but the bytes written); the destructor of an uncommitted
// file removes its temporary.
class OutputFile {
 public:
  OutputFile(const std::filesystem::path& path, std::string where)
      : where_(std::move(where)), name_(path.string()), target_(resolve_output(path, where_)) {
    if (target_.kind == OutputTarget::Kind::direct) {
      // No O_CREAT, no O_TRUNC: the file exists and is not a regular file. A FIFO blocks here
      // until a reader opens it, as a shell redirection would.
      descriptor_ = ::open(target_.path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
      if (descriptor_ < 0) fail(std::string("cannot create output: ") + std::strerror(errno), true);
      return;
    }
    for (int attempt = 0; attempt < 100 && descriptor_ < 0; ++attempt) {
      temporary_ = sibling_name(target_.path, "tmp");
      // Tracked before it exists, so that no moment leaves an untracked file behind.
      tracked_ = in_flight::track(temporary_);
      descriptor_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (descriptor_ >= 0) break;
      const int error = errno;
      in_flight::forget(tracked_);
      tracked_ = -1;
      if (error != EEXIST) {
        temporary_.clear();
        fail("cannot create a temporary file beside it: " + std::string(std::strerror(error)), true);
      }
    }
    if (descriptor_ < 0) {
      temporary_.clear();
      fail("cannot create a temporary file beside it", true);
    }
    // A replaced file keeps its permissions (a private file stays private).
    struct stat st {};
    if (target_.exists && ::stat(target_.path.c_str(), &st) == 0) (void)::fchmod(descriptor_, st.st_mode & 07777);
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  ~OutputFile() {
    if (descriptor_ >= 0) ::close(descriptor_);
    if (!committed_ && !temporary_.empty()) ::unlink(temporary_.c_str());
    in_flight::forget(tracked_);
  }

  bool direct() const { return target_.kind == OutputTarget::Kind::direct; }

  void write(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t written = ::write(descriptor_, bytes.data(), bytes.size());
      if (written < 0 && errno == EINTR) continue;
      if (written < 0) fail(std::string("cannot write: ") + std::strerror(errno), false);
      bytes.remove_prefix(static_cast<std::size_t>(written));
    }
  }

  // Completes the file: a temporary is flushed to disk (so that after a crash the target holds the
  // old or the complete new bytes) and renamed over the target; a special file is closed, which
  // reports a device's deferred write errors.
  void commit() {
    if (!direct() && ::fsync(descriptor_) != 0) fail(std::string("cannot flush: ") + std::strerror(errno), false);
    const int descriptor = std::exchange(descriptor_, -1);
    if (::close(descriptor) != 0) fail(std::string("cannot write: ") + std::strerror(errno), false);
    if (!direct() && std::rename(temporary_.c_str(), target_.path.c_str()) != 0)
      fail(std::string("cannot create output: cannot rename the temporary file into place: ") + std::strerror(errno), true);
    committed_ = true;
  }

 private:
  [[noreturn]] void fail(const std::string& reason, bool cannot_create) const {
    throw OutputError(where_, name_, reason, cannot_create);
  }

  std::string where_, name_;
  OutputTarget target_;
  std::filesystem::path temporary_;
  int descriptor_ = -1;
  int tracked_ = -1;
  bool committed_ = false;
};

}  // namespace pagh
