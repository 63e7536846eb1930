// Where pagh-mm's outputs go (app/README.md, "Output files never appear half-written"), end to end:
// every writer (-o, --save-sketch, top -o, generate --out-a/--out-b) against a regular file, a
// symbolic link, a FIFO, a device that accepts writes and one that fails, a directory and a
// missing directory; standard output ("-"); outputs that are inputs; and Ctrl-C.
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <thread>

#include "../special_files.hpp"
#include "cli_test_support.hpp"
#include "cli_error.hpp"
#include "matrix_io/read.hpp"
#include "output_files.hpp"

namespace pagh_mm_test {
namespace {

namespace mio = pagh::matrix_io;

bool has_hidden(const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(), [](const std::string& n) { return n[0] == '.'; });
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Every writer's option with a command that uses it, the output's path put in at "@".
struct Writer {
  const char* label;
  std::vector<std::string> args;
};
std::vector<Writer> writers(const std::string& a, const std::string& b, const std::string& sketch) {
  return {{"-o", {"-k", "3", "-o", "@", a, b}},
          {"--save-sketch", {"--save-sketch", "@", a, b}},
          {"top -o", {"top", sketch, "-k", "3", "-o", "@"}},
          {"generate --out-b", {"generate", "planted-dense", "--out-a", "gen-a.mtx", "--out-b", "@", "--force", "-q"}}};
}
std::vector<std::string> with_output(std::vector<std::string> args, const std::string& output) {
  std::replace(args.begin(), args.end(), std::string("@"), output);
  return args;
}

class Outputs : public Cli {
 protected:
  // A saved sketch of A*B for the top command, outside the work directory.
  std::string sketch() {
    const fs::path path = dir_ / "C.pagh";
    if (!fs::exists(path)) EXPECT_EQ(run({"--save-sketch", path.string(), "-q", A(), B()}).status, 0);
    return path.string();
  }
};

TEST_F(Outputs, RegularFilesAreReplacedKeepingTheirPermissions) {
  for (const auto& w : writers(A(), B(), sketch())) {
    SCOPED_TRACE(w.label);
    const fs::path target = work("out");
    { std::ofstream(target) << "old\n"; }
    ::chmod(target.c_str(), 0600);
    const Result r = run(with_output(w.args, target.string()));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(slurp(target), "old\n");
    struct stat st {};
    ASSERT_EQ(::stat(target.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_FALSE(has_hidden(work_files()));
    fs::remove_all(dir_ / "work");
    fs::create_directories(dir_ / "work");
  }
}

TEST_F(Outputs, SymbolicLinksKeepTheLinkAndReplaceTheTarget) {
  for (const auto& w : writers(A(), B(), sketch())) {
    SCOPED_TRACE(w.label);
    fs::create_directories(work("real"));
    { std::ofstream(work("real/out")) << "old\n"; }
    fs::create_symlink("real/out", work("link"));
    const Result r = run(with_output(w.args, "link"));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(fs::is_symlink(work("link")));
    const std::string written = slurp(work("real/out"));
    EXPECT_TRUE(written.starts_with("%%MatrixMarket") || written.starts_with("PAGHSKCH")) << written.substr(0, 40);
    EXPECT_EQ(files_in(work("real")), std::vector<std::string>{"out"});
    EXPECT_FALSE(has_hidden(work_files()));
    fs::remove_all(dir_ / "work");
    fs::create_directories(dir_ / "work");
  }
}

TEST_F(Outputs, FifosAreWrittenDirectly) {
  for (const auto& w : writers(A(), B(), sketch())) {
    SCOPED_TRACE(w.label);
    pagh_test::FifoReader reader(work("pipe"));
    ASSERT_EQ(reader.error(), "");
    const Result r = run(with_output(w.args, "pipe"));
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string bytes = reader.bytes();
    if (std::string(w.label) == "--save-sketch") EXPECT_TRUE(bytes.starts_with("PAGHSKCH"));
    else EXPECT_TRUE(bytes.starts_with("%%MatrixMarket matrix ")) << bytes.substr(0, 40);
    EXPECT_TRUE(pagh_test::is_fifo(work("pipe")));
    EXPECT_FALSE(has_hidden(work_files()));
    fs::remove_all(dir_ / "work");
    fs::create_directories(dir_ / "work");
  }
}

TEST_F(Outputs, DevicesAreWrittenDirectlyNeverReplaced) {
  for (const auto& w : writers(A(), B(), sketch())) {
    SCOPED_TRACE(w.label);
    const std::string why = pagh_test::make_null_twin(work("null"));
    if (!why.empty()) GTEST_SKIP() << why;
    const Result r = run(with_output(w.args, "null"));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(pagh_test::is_character_device(work("null")));
    EXPECT_FALSE(has_hidden(work_files()));
    fs::remove_all(dir_ / "work");
    fs::create_directories(dir_ / "work");
  }
}

TEST_F(Outputs, AFailingDeviceEndsWith74AndLeavesNothing) {
  const std::string sketch_path = sketch();
  for (const auto& w : writers(A(), B(), sketch_path)) {
    SCOPED_TRACE(w.label);
    const std::string why = pagh_test::make_full_twin(work("full"));
    if (!why.empty()) GTEST_SKIP() << why;
    const Result r = run(with_output(w.args, "full"));
    EXPECT_EQ(r.status, 74);
    // The message names the option and the path given, never a staging name.
    const std::string label = w.label;
    const std::string option = label == "top -o" ? "-o" : label == "generate --out-b" ? "--out-b" : label;
    expect_one_line_error(r, {option + " full: cannot write: No space left on device"});
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(work_files(), std::vector<std::string>{"full"});  // generate: no gen-a.mtx either
    fs::remove_all(dir_ / "work");
    fs::create_directories(dir_ / "work");
  }
  // The failing output written after a staged one: the staged one is not committed.
  ASSERT_EQ(pagh_test::make_full_twin(work("full")), "");
  const Result r = run({"-o", "top.mtx", "--save-sketch", "full", A(), B()});
  EXPECT_EQ(r.status, 74);
  expect_one_line_error(r, {"--save-sketch full", "No space left on device"});
  EXPECT_EQ(work_files(), std::vector<std::string>{"full"});
}

TEST_F(Outputs, DirectoriesAndMissingDirectoriesAre73BeforeAnyWork) {
  fs::create_directories(work("dir"));
  for (const auto& w : writers(A(), B(), sketch())) {
    SCOPED_TRACE(w.label);
    for (const std::string target : {"dir", "missing/out"}) {
      const Result r = run(with_output(w.args, target));
      EXPECT_EQ(r.status, 73);
      expect_one_line_error(r, {target, "cannot create output",
                                target == "dir" ? "it is a directory" : "directory missing does not exist"});
      EXPECT_EQ(r.out, "");
      EXPECT_EQ(work_files(), std::vector<std::string>{"dir"});
      EXPECT_TRUE(fs::is_empty(work("dir")));
    }
  }
}

TEST_F(Outputs, DashIsStandardOutputInPlaceOfTheReport) {
  const Result matrix = run({"-k", "3", "-o", "-", A(), B()});
  ASSERT_EQ(matrix.status, 0) << matrix.err;
  const auto entries = mio::parse_sparse<double>(matrix.out, "stdout");
  EXPECT_EQ(entries.rows(), 64);
  EXPECT_EQ(entries.nonZeros(), 3);
  const Result top = run({"top", sketch(), "-k", "2", "-o", "-"});
  ASSERT_EQ(top.status, 0) << top.err;
  EXPECT_EQ(mio::parse_sparse<double>(top.out, "stdout").nonZeros(), 2);
  const Result saved = run({"--save-sketch", "-", A(), B()});
  ASSERT_EQ(saved.status, 0) << saved.err;
  EXPECT_EQ(saved.out, slurp(sketch()));  // the same bytes as a saved file
  const Result both = run({"-o", "-", "--save-sketch", "-", A(), B()});
  EXPECT_EQ(both.status, 64);
  expect_one_line_error(both, {"--save-sketch -", "also the output of -o"});
  EXPECT_TRUE(work_files().empty());  // nothing staged is left anywhere we look
}

TEST_F(Outputs, AnOutputThatIsAnInputIsRefused) {
  fs::copy_file(A(), work("a.mtx"));
  fs::copy_file(B(), work("b.mtx"));
  fs::create_symlink("a.mtx", work("alias.mtx"));
  fs::create_hard_link(work("b.mtx"), work("hard.mtx"));
  const std::string a_before = slurp(work("a.mtx")), b_before = slurp(work("b.mtx"));
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"--save-sketch", "a.mtx", "a.mtx", "b.mtx"}, {"--save-sketch a.mtx", "the input A a.mtx"}},
      {{"-o", "b.mtx", "a.mtx", "b.mtx"}, {"-o b.mtx", "the input B b.mtx"}},
      {{"-o", "alias.mtx", "a.mtx", "b.mtx"}, {"-o alias.mtx", "the input A"}},
      {{"--save-sketch", "hard.mtx", "a.mtx", "b.mtx"}, {"--save-sketch hard.mtx", "the input B"}},
  };
  for (const auto& [args, fragments] : cases) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 64) << args[1];
    expect_one_line_error(r, fragments);
  }
  EXPECT_EQ(slurp(work("a.mtx")), a_before);
  EXPECT_EQ(slurp(work("b.mtx")), b_before);
  ASSERT_EQ(run({"--save-sketch", "C.pagh", "-q", "a.mtx", "b.mtx"}).status, 0);
  const std::string sketch_before = slurp(work("C.pagh"));
  const Result top = run({"top", "C.pagh", "-o", "C.pagh"});
  EXPECT_EQ(top.status, 64);
  expect_one_line_error(top, {"-o C.pagh", "the sketch C.pagh"});
  EXPECT_EQ(slurp(work("C.pagh")), sketch_before);
  EXPECT_FALSE(has_hidden(work_files()));
}

// Starts pagh-mm in the work directory without waiting for it.
pid_t spawn(const fs::path& work_dir, const std::vector<std::string>& args) {
  std::vector<std::string> words = {kBinary};
  words.insert(words.end(), args.begin(), args.end());
  return start_process(kBinary, words, work_dir, work_dir.parent_path() / "stdout.txt", work_dir.parent_path() / "stderr.txt");
}

TEST_F(Outputs, InterruptedRunsLeaveNoStagedFiles) {
  // -o is staged first; the sketch then goes into a FIFO that nobody reads, so the run stops in
  // open() with the staged -o file on disk: the moment a long write would be interrupted.
  for (const int signal_number : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(strsignal(signal_number));
    ASSERT_EQ(::mkfifo(work("sketch.pagh").c_str(), 0666), 0);
    const pid_t pid = spawn(dir_ / "work", {"-o", "top.mtx", "--save-sketch", "sketch.pagh", A(), B()});
    ASSERT_GT(pid, 0);
    const auto staged_seen = [&] {
      for (const auto& n : work_files())
        if (n.find("pagh-mm-staged") != std::string::npos) return true;
      return false;
    };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!staged_seen() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(staged_seen()) << "the run never staged its output: " << slurp(dir_ / "stderr.txt");
    ::kill(pid, signal_number);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal_number) << status;
    EXPECT_EQ(work_files(), std::vector<std::string>{"sketch.pagh"});  // the FIFO, nothing else
    fs::remove(work("sketch.pagh"));
  }
}

}  // namespace
}  // namespace pagh_mm_test

namespace pagh_mm_test {
namespace {

// The study's writer (write_text_file_atomically: results.csv, summary.md) by the same rule.
TEST_F(Outputs, StudyFilesFollowTheOutputRule) {
  const auto code_of = [](const fs::path& path, const std::string& text) {
    try {
      pagh_mm::write_text_file_atomically(path, text, "--out");
    } catch (const pagh_mm::CliError& e) {
      return pagh_mm::to_int(e.code());
    }
    return 0;
  };
  fs::create_directories(work("real"));
  { std::ofstream(work("real/results.csv")) << "old\n"; }
  fs::create_symlink("real/results.csv", work("results.csv"));
  EXPECT_EQ(code_of(work("results.csv"), "a,b\n"), 0);
  EXPECT_TRUE(fs::is_symlink(work("results.csv")));
  EXPECT_EQ(slurp(work("real/results.csv")), "a,b\n");
  {
    pagh_test::FifoReader reader(work("summary.md"));
    ASSERT_EQ(reader.error(), "");
    EXPECT_EQ(code_of(work("summary.md"), "# summary\n"), 0);
    EXPECT_EQ(reader.bytes(), "# summary\n");
  }
  EXPECT_TRUE(pagh_test::is_fifo(work("summary.md")));
  EXPECT_EQ(code_of(work("real"), "x"), 73);
  EXPECT_EQ(code_of(work("missing/x.csv"), "x"), 73);
  const std::string why = pagh_test::make_full_twin(work("full"));
  if (!why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(code_of(work("full"), "x"), 74);
  EXPECT_TRUE(pagh_test::is_character_device(work("full")));
  EXPECT_FALSE(has_hidden(work_files()));
  EXPECT_FALSE(has_hidden(files_in(work("real"))));
}

}  // namespace
}  // namespace pagh_mm_test
