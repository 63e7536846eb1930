#include "output_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "cli_error.hpp"

namespace pagh_mm {
namespace fs = std::filesystem;

namespace {

// A name in the target's directory that nothing else uses: hidden, with the pid and a counter.
fs::path sibling_name(const fs::path& target, std::string_view purpose) {
  static std::atomic<unsigned> counter{0};
  std::string name = "." + target.filename().string() + "." + std::string(purpose) + "-" + std::to_string(::getpid()) +
                     "-" + std::to_string(counter.fetch_add(1));
  return target.parent_path() / name;
}

fs::path directory_of(const fs::path& target) {
  return target.parent_path().empty() ? fs::path(".") : target.parent_path();
}

}  // namespace

ExitCode classify_write_failure(std::string_view message) {
  return message.find("cannot create") != std::string_view::npos ? ExitCode::cannot_create : ExitCode::io_error;
}

OutputTransaction::~OutputTransaction() {
  if (committed_) return;
  for (const auto& s : staged_) {
    std::error_code ignored;
    fs::remove(s.staging, ignored);
  }
}

fs::path OutputTransaction::stage(const std::string& target, std::string_view option) {
  const std::string subject = std::string(option) + " " + target;
  const fs::path path(target);
  if (target.empty() || path.filename().empty() || path.filename() == "." || path.filename() == "..")
    throw CliError(ExitCode::cannot_create, subject, "cannot create output: the path names no file");
  for (const auto& s : staged_)
    if (fs::weakly_canonical(s.target) == fs::weakly_canonical(path))
      throw CliError(ExitCode::usage, subject, "the same file is also the output of " + s.option);
  std::error_code ec;
  const fs::path directory = directory_of(path);
  if (!fs::is_directory(directory, ec))
    throw CliError(ExitCode::cannot_create, subject,
                   "cannot create output: directory " + directory.string() + " does not exist");
  if (::access(directory.c_str(), W_OK | X_OK) != 0)
    throw CliError(ExitCode::cannot_create, subject,
                   "cannot create output in " + directory.string() + ": " + std::strerror(errno));
  if (fs::is_directory(path, ec))
    throw CliError(ExitCode::cannot_create, subject, "cannot create output: it is a directory");
  staged_.push_back({path, sibling_name(path, "pagh-mm-staged"), std::string(option)});
  return staged_.back().staging;
}

void OutputTransaction::commit() {
  for (const auto& s : staged_) {
    if (std::rename(s.staging.c_str(), s.target.c_str()) != 0)
      throw CliError(ExitCode::cannot_create, s.option + " " + s.target.string(),
                     std::string("cannot move the finished output into place: ") + std::strerror(errno));
  }
  committed_ = true;
}

void write_text_file_atomically(const fs::path& path, std::string_view text) {
  const fs::path temporary = sibling_name(path, "tmp");
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) throw CliError(ExitCode::cannot_create, path.string(), std::string("cannot create file: ") + std::strerror(errno));
  const auto fail = [&](const char* what) {
    const std::string reason = std::string(what) + ": " + std::strerror(errno);
    ::close(fd);
    ::unlink(temporary.c_str());
    throw CliError(ExitCode::io_error, path.string(), reason);
  };
  while (!text.empty()) {
    const ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) fail("cannot write");
    text.remove_prefix(static_cast<std::size_t>(written));
  }
  // fsync before rename: after a crash the file holds either the old or the complete new text.
  if (::fsync(fd) != 0) fail("cannot flush");
  if (::close(fd) != 0) {
    ::unlink(temporary.c_str());
    throw CliError(ExitCode::io_error, path.string(), std::string("cannot close: ") + std::strerror(errno));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::string("cannot rename into place: ") + std::strerror(errno);
    ::unlink(temporary.c_str());
    throw CliError(ExitCode::cannot_create, path.string(), reason);
  }
}

void ensure_directory(const fs::path& directory, std::string_view option) {
  std::error_code ec;
  if (fs::is_directory(directory, ec)) return;
  fs::create_directories(directory, ec);
  if (ec || !fs::is_directory(directory))
    throw CliError(ExitCode::cannot_create, std::string(option) + " " + directory.string(),
                   "cannot create directory: " + (ec ? ec.message() : std::string("a file of that name exists")));
}

}  // namespace pagh_mm
