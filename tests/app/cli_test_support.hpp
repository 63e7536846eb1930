// End-to-end tests of pagh-mm: run the built binary (PAGH_MM_BINARY) as a user would, with its
// standard output and error captured to files, in a fresh directory per test.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_info.hpp"

extern char** environ;

namespace pagh_mm_test {

namespace fs = std::filesystem;

inline const std::string kBinary = PAGH_MM_BINARY;
inline const fs::path kData = PAGH_DATA_DIR;          // data/ (A.mtx, B.mtx)
inline const fs::path kFixtures = PAGH_FIXTURES_DIR;  // tests/matrix_io/fixtures

struct Result {
  int status = -1;  // exit status, or -1 when the process did not exit normally
  std::string out, err;
};

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Starts `program` with argument vector `words` (words[0] included) in directory `cwd`, stdin from
// /dev/null, stdout and stderr into files; returns its pid, or -1 if it cannot start. (spawn has
// no chdir in glibc 2.36's public API, so the directory is changed around the call; tests run
// single-threaded.)
inline pid_t start_process(const std::string& program, std::vector<std::string> words, const fs::path& cwd, const fs::path& out,
                           const fs::path& err) {
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const fs::path previous = fs::current_path();
  fs::current_path(cwd);
  pid_t pid = -1;
  if (posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ) != 0) pid = -1;
  fs::current_path(previous);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pagh_mm_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "work");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A path inside the test's (initially empty) working directory.
  fs::path work(const std::string& name) const { return dir_ / "work" / name; }
  std::string A() const { return (kData / "A.mtx").string(); }
  std::string B() const { return (kData / "B.mtx").string(); }

  // Runs pagh-mm with args in the work directory; stdout_to replaces the captured stdout (/dev/full).
  Result run(const std::vector<std::string>& args, const std::string& stdout_to = "") const {
    std::vector<std::string> words = {kBinary};
    words.insert(words.end(), args.begin(), args.end());
    return wait_for(start_process(kBinary, words, dir_ / "work", stdout_to.empty() ? out_path() : fs::path(stdout_to), err_path()),
                    !stdout_to.empty());
  }

  // Runs `sh -c '<setup>; exec "$0" "$@"' pagh-mm args...` in the work directory: a limit set up
  // there (ulimit) applies to pagh-mm only.
  Result run_limited(const std::string& setup, const std::vector<std::string>& args) const {
    std::vector<std::string> words = {"/bin/sh", "-c", setup + "; exec \"$0\" \"$@\"", kBinary};
    words.insert(words.end(), args.begin(), args.end());
    return wait_for(start_process("/bin/sh", words, dir_ / "work", out_path(), err_path()), false);
  }

  fs::path out_path() const { return dir_ / "stdout.txt"; }
  fs::path err_path() const { return dir_ / "stderr.txt"; }

  // Waits for a process started by start_process and collects its status and captured output.
  Result wait_for(pid_t pid, bool stdout_elsewhere) const {
    Result r;
    if (pid < 0) {
      ADD_FAILURE() << "cannot start the command";
      return r;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = stdout_elsewhere ? "" : slurp(out_path());
    r.err = slurp(err_path());
    return r;
  }

  // Runs with --format json and parses standard output (fails the test on invalid JSON).
  nlohmann::json run_json(std::vector<std::string> args) const {
    args.insert(args.end(), {"--format", "json"});
    const Result r = run(args);
    EXPECT_EQ(r.status, 0) << r.err;
    try {
      return nlohmann::json::parse(r.out);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "invalid JSON (" << e.what() << "):\n" << r.out;
      return {};
    }
  }

  // Names in the work directory, hidden ones included (leftovers of a failed write show here).
  std::vector<std::string> work_files() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_ / "work")) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

// The four entries planted in data/A.mtx * data/B.mtx (data/README.md), 1-based, and their values.
struct Planted {
  std::int64_t row, col;
  double value;
};
inline const std::vector<Planted> kPlanted = {{51, 46, 924}, {12, 8, -893}, {57, 33, -834}, {49, 2, 803}};

// Expects exactly one line on stderr, starting with "pagh-mm: " and containing every fragment.
inline void expect_one_line_error(const Result& r, const std::vector<std::string>& fragments) {
  const auto lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << "stderr:\n" << r.err;
  EXPECT_EQ(lines[0].rfind("pagh-mm: ", 0), 0u) << lines[0];
  for (const auto& f : fragments) EXPECT_NE(lines[0].find(f), std::string::npos) << "'" << f << "' not in: " << lines[0];
}

// The backend --backend auto picks here: cuda when this build has it and a device is usable.
inline std::string expected_auto_backend() {
#ifdef PAGH_MM_HAVE_SKETCH_CUDA
  if (!pagh_mm::query_cuda().devices.empty()) return "cuda";
#endif
  return "cpu";
}

}  // namespace pagh_mm_test
