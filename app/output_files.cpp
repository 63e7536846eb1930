#include "output_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "cli_error.hpp"
#include "pagh/output_file.hpp"

namespace pagh_mm {
namespace fs = std::filesystem;

namespace {

std::string subject_of(std::string_view option, const std::string& target) {
  return option.empty() ? target : std::string(option) + " " + target;
}

// Whether two paths name the same file now (device and inode; both must exist).
bool same_file(const fs::path& a, const fs::path& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// A path for standard output's staged copy: in the temporary directory, never beside a target.
fs::path standard_output_staging() {
  std::error_code ec;
  fs::path directory = fs::temp_directory_path(ec);
  if (ec) directory = "/tmp";
  return pagh::sibling_name(directory / "pagh-mm-stdout", "staged");
}

// Copies a finished file to standard output.
void copy_to_standard_output(const fs::path& file) {
  std::FILE* in = std::fopen(file.c_str(), "rb");
  if (!in) throw CliError(ExitCode::io_error, "standard output", std::string("cannot read the staged output: ") + std::strerror(errno));
  char buffer[1 << 16];
  bool failed = false;
  for (std::size_t n; !failed && (n = std::fread(buffer, 1, sizeof buffer, in)) > 0;)
    failed = std::fwrite(buffer, 1, n, stdout) != n;
  failed = failed || std::ferror(in) || std::fflush(stdout) != 0;
  std::fclose(in);
  if (failed) throw CliError(ExitCode::io_error, "standard output", "write error");
}

}  // namespace

ExitCode classify_write_failure(std::string_view message) {
  return message.find("cannot create") != std::string_view::npos ? ExitCode::cannot_create : ExitCode::io_error;
}

OutputTransaction::~OutputTransaction() {
  for (const auto& s : staged_) {
    if (!committed_ && !s.direct) {
      std::error_code ignored;
      fs::remove(s.staging, ignored);
    }
    pagh::in_flight::forget(s.tracked);
  }
}

fs::path OutputTransaction::stage(const std::string& target, std::string_view option) {
  const std::string subject = subject_of(option, target);
  Staged s;
  s.target = target;
  s.option = std::string(option);
  if (is_standard_output(target)) {
    if (option == "--save-sketch" && ::isatty(STDOUT_FILENO))
      usage_error(subject, "standard output is a terminal; redirect it to a file (the sketch is binary)");
    s.staging = standard_output_staging();
  } else {
    pagh::OutputTarget resolved;
    try {
      resolved = pagh::resolve_output(target, "pagh-mm");
    } catch (const pagh::OutputError& e) {
      throw CliError(ExitCode::cannot_create, subject, e.reason());
    }
    s.destination = resolved.path;
    s.direct = resolved.kind == pagh::OutputTarget::Kind::direct;
    s.staging = s.direct ? resolved.path : pagh::sibling_name(resolved.path, "pagh-mm-staged");
  }
  // Two outputs naming one file (by path, or by device and inode when it exists) would overwrite
  // each other: the second is refused.
  const auto canonical = [](const fs::path& p) {
    std::error_code ec;
    fs::path c = fs::weakly_canonical(p, ec);
    return ec ? p.lexically_normal() : c;
  };
  for (const auto& other : staged_) {
    const bool same = other.target == target ||
                      (!s.destination.empty() && !other.destination.empty() &&
                       (canonical(other.destination) == canonical(s.destination) ||
                        same_file(other.destination, s.destination)));
    if (same) usage_error(subject, "the same file is also the output of " + other.option);
  }
  if (!s.direct) s.tracked = pagh::in_flight::track(s.staging);
  staged_.push_back(std::move(s));
  return staged_.back().staging;
}

void OutputTransaction::refuse_overwriting(const std::string& input, std::string_view what) const {
  for (const auto& s : staged_)
    if (!s.destination.empty() && same_file(s.destination, input))
      usage_error(subject_of(s.option, s.target),
                  "is " + std::string(what) + " " + input + " (writing it would destroy the input; choose another file)");
}

bool OutputTransaction::writes_standard_output() const {
  for (const auto& s : staged_)
    if (is_standard_output(s.target)) return true;
  return false;
}

void OutputTransaction::commit() {
  for (const auto& s : staged_) {
    if (s.direct) continue;  // written in place already
    if (is_standard_output(s.target)) {
      copy_to_standard_output(s.staging);
      std::error_code ignored;
      fs::remove(s.staging, ignored);
      continue;
    }
    // A replaced file keeps its permissions (a private file stays private).
    struct stat st {};
    if (::stat(s.destination.c_str(), &st) == 0 && S_ISREG(st.st_mode)) (void)::chmod(s.staging.c_str(), st.st_mode & 07777);
    if (std::rename(s.staging.c_str(), s.destination.c_str()) != 0)
      throw CliError(ExitCode::cannot_create, subject_of(s.option, s.target),
                     std::string("cannot move the finished output into place: ") + std::strerror(errno));
  }
  committed_ = true;
}

void write_text_file_atomically(const fs::path& path, std::string_view text, std::string_view option) {
  try {
    pagh::OutputFile file(path, "pagh-mm");
    file.write(text);
    file.commit();
  } catch (const pagh::OutputError& e) {
    throw CliError(e.cannot_create() ? ExitCode::cannot_create : ExitCode::io_error, subject_of(option, path.string()), e.reason());
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
