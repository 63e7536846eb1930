// Failures: every exit status of the table (64, 65, 66, 69, 73, 74), one line on stderr naming the
// option or file and the reason, nothing on stdout, and never a partial output file.
#include <cctype>
#include <fstream>

#include "cli_test_support.hpp"
#include "cuda_info.hpp"

namespace pagh_mm_test {
namespace {

struct BadOption {
  std::vector<std::string> args;  // before A.mtx B.mtx
  std::string mentions;           // in the one-line message
};

// Test names and failure messages show the arguments, not the struct's bytes.
void PrintTo(const BadOption& bad, std::ostream* out) {
  for (const auto& a : bad.args) *out << a << ' ';
}

class BadOptions : public Cli, public ::testing::WithParamInterface<BadOption> {};

TEST_P(BadOptions, AreUsageErrorsNamingTheOption) {
  std::vector<std::string> args = GetParam().args;
  args.push_back(A());
  args.push_back(B());
  const Result r = run(args);
  EXPECT_EQ(r.status, 64) << r.err;
  EXPECT_EQ(r.out, "");
  expect_one_line_error(r, {GetParam().mentions, "(see pagh-mm --help)"});
}

INSTANTIATE_TEST_SUITE_P(
    Cli, BadOptions,
    ::testing::Values(BadOption{{"--pad", "-1"}, "--pad: must be a positive number, got '-1'"},
                      BadOption{{"--pad", "x"}, "--pad: expected a number, got 'x'"},
                      BadOption{{"--buckets", "100"}, "--buckets: must be a power of two"},
                      BadOption{{"--pad", "2", "--buckets", "64"}, "--pad: cannot be combined with --buckets"},
                      BadOption{{"--sketches", "0"}, "--sketches: must be between 1 and 1024"},
                      BadOption{{"--seed", "-3"}, "--seed: expected an integer"},
                      BadOption{{"--precision", "fp8"}, "--precision: unknown precision 'fp8'"},
                      BadOption{{"--stabilize", "always"}, "--stabilize: unknown stabilization 'always'"},
                      BadOption{{"--algorithm", "fft"}, "--algorithm: unknown algorithm 'fft'"},
                      BadOption{{"--algorithm", "alman-rao", "--stabilize", "kahan"}, "no stabilized variant"},
                      BadOption{{"--threads", "-1"}, "--threads: must be between 0 and 1024"},
                      BadOption{{"--top", "0"}, "--top: must be between 1"},
                      BadOption{{"--threshold", "-2"}, "--threshold: must be zero or positive"},
                      BadOption{{"--full"}, "--full: needs -o FILE"},
                      BadOption{{"--full", "-o", "x.mtx", "--threshold", "3"}, "--full: cannot be combined with --threshold"},
                      BadOption{{"--format", "xml"}, "--format: unknown format 'xml'"},
                      BadOption{{"--progress", "sometimes"}, "--progress: unknown value 'sometimes'"},
                      BadOption{{"--backend", "gpu"}, "--backend: unknown backend 'gpu'"},
                      BadOption{{"-q", "-v"}, "-q: cannot be combined with -v"},
                      BadOption{{"--frobnicate"}, "unrecognised option '--frobnicate'"},
                      BadOption{{"--thread", "2"}, "unrecognised option '--thread'"},  // no prefix guessing
                      BadOption{{"--pad"}, "--pad: expected a number"},                 // took A.mtx as its value
                      BadOption{{"--pad", "1e12"}, "--pad: pad * max(m, p)"}),            // sketch longer than 2^32
    [](const ::testing::TestParamInfo<BadOption>& info) {
      // "3_buckets": the index keeps names unique, the first option makes them readable.
      std::string name = std::to_string(info.index) + "_";
      for (char c : info.param.args.front())
        if (std::isalnum(static_cast<unsigned char>(c))) name += c;
      return name;
    });

TEST_F(Cli, WrongNumberOfInputsIsAUsageError) {
  for (const auto& args : std::vector<std::vector<std::string>>{{}, {A()}, {A(), B(), A()}}) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 64);
    expect_one_line_error(r, {"expected two input files A.mtx B.mtx, got " + std::to_string(args.size())});
  }
}

TEST_F(Cli, MismatchedDimensionsAreBadData) {
  const Result r = run({"-o", "out.mtx", "--save-sketch", "s.pagh", A(), A()});
  EXPECT_EQ(r.status, 65);
  EXPECT_EQ(r.out, "");
  expect_one_line_error(r, {A(), "cannot multiply: A is 64 x 96 but B is 64 x 96", "cols(A) must equal rows(B)"});
  EXPECT_TRUE(work_files().empty());  // neither output, nor a staged leftover
}

TEST_F(Cli, MalformedMatrixIsBadDataWithFileAndLine) {
  {
    std::ofstream bad(work("bad.mtx"));
    bad << "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 2.5\n4 1 1.0\n";
  }
  const Result r = run({"-o", "out.mtx", work("bad.mtx").string(), B()});
  EXPECT_EQ(r.status, 65);
  expect_one_line_error(r, {work("bad.mtx").string() + ":4:"});
  EXPECT_EQ(work_files(), std::vector<std::string>{"bad.mtx"});
  const Result banner = run({(kData / "README.md").string(), B()});
  EXPECT_EQ(banner.status, 65);
  expect_one_line_error(banner, {"README.md:1:", "banner"});
}

TEST_F(Cli, MissingOrUnreadableInputCannotBeOpened) {
  const Result missing = run({"no-such.mtx", B()});
  EXPECT_EQ(missing.status, 66);
  expect_one_line_error(missing, {"no-such.mtx: cannot open file"});
  const Result directory = run({A(), kData.string()});
  EXPECT_EQ(directory.status, 66);
  expect_one_line_error(directory, {kData.string(), "directory"});
}

// --backend cuda is refused with 69 when it cannot run: a build without the CUDA backend says so,
// a build with it says that no device is usable (this test needs a machine without a GPU then).
TEST_F(Cli, CudaBackendIsUnavailableWithoutItOrWithoutADevice) {
#ifdef PAGH_MM_HAVE_SKETCH_CUDA
  if (!pagh_mm::query_cuda().devices.empty()) GTEST_SKIP() << "a CUDA device is usable here, so --backend cuda runs";
  const char* reason = "no usable CUDA device";
#else
  const char* reason = "CUDA backend is not available in this build";
#endif
  const Result r = run({"--method", "sketch", "--backend", "cuda", A(), B()});
  EXPECT_EQ(r.status, 69);
  EXPECT_EQ(r.out, "");
  expect_one_line_error(r, {"--backend cuda", reason});
  // auto falls back to the CPU and says so; cpu says nothing (unless -v).
  EXPECT_NE(run({"--method", "sketch", "--backend", "auto", A(), B()}).err.find("backend cpu (auto:"), std::string::npos);
  EXPECT_EQ(run({"--method", "sketch", "--pad", "8", "--backend", "cpu", A(), B()}).err, "");
  const Result study = run({"study", "--backend", "cuda", "--preset", "smoke", "--out", "s"});
  EXPECT_EQ(study.status, 69);
  expect_one_line_error(study, {"--backend cuda", reason});
  EXPECT_TRUE(work_files().empty());
}

TEST_F(Cli, UncreatableOutputFailsBeforeAnyWorkAndLeavesNothing) {
  const Result dir = run({"--save-sketch", "s.pagh", "-o", "missing-dir/out.mtx", A(), B()});
  EXPECT_EQ(dir.status, 73);
  EXPECT_EQ(dir.out, "");
  expect_one_line_error(dir, {"-o missing-dir/out.mtx", "directory missing-dir does not exist"});
  EXPECT_TRUE(work_files().empty());  // the sketch was not written either: all or nothing
  fs::create_directory(work("taken"));
  const Result is_dir = run({"--save-sketch", "taken", A(), B()});
  EXPECT_EQ(is_dir.status, 73);
  expect_one_line_error(is_dir, {"--save-sketch taken", "is a directory"});
  const Result same = run({"--save-sketch", "x", "-o", "x", A(), B()});
  EXPECT_EQ(same.status, 64);
  expect_one_line_error(same, {"also the output of"});
  EXPECT_EQ(work_files(), std::vector<std::string>{"taken"});
}

TEST_F(Cli, ExistingOutputIsReplacedOnlyOnSuccess) {
  { std::ofstream(work("out.mtx")) << "precious\n"; }
  EXPECT_EQ(run({"-o", "out.mtx", A(), A()}).status, 65);
  EXPECT_EQ(slurp(work("out.mtx")), "precious\n");
  EXPECT_EQ(run({"-o", "out.mtx", A(), B()}).status, 0);
  EXPECT_EQ(slurp(work("out.mtx")).rfind("%%MatrixMarket matrix coordinate", 0), 0u);
}

TEST_F(Cli, DenseResultsTooLargeForMemoryAreRefused) {
  // 100000 x 100000 sparse operands: the sketch is small, a dense product would take 75 GiB.
  for (const char* name : {"big_a.mtx", "big_b.mtx"})
    std::ofstream(work(name)) << "%%MatrixMarket matrix coordinate real general\n100000 100000 1\n7 9 2.0\n";
  const Result full = run({"--full", "-o", "C.mtx", "big_a.mtx", "big_b.mtx"});
  EXPECT_EQ(full.status, 64);
  expect_one_line_error(full, {"--full", "100000 x 100000", "GiB"});
  EXPECT_EQ(work_files(), (std::vector<std::string>{"big_a.mtx", "big_b.mtx"}));
  // --verify of sparse operands falls back to the exact sparse product, which is tiny here.
  const Result verify = run({"--verify", "--format", "json", "big_a.mtx", "big_b.mtx"});
  EXPECT_EQ(verify.status, 0) << verify.err;
  EXPECT_NE(verify.out.find("nonzeros of C and the reported top-k"), std::string::npos) << verify.out;
}

TEST_F(Cli, OverflowOfANarrowPrecisionIsBadDataNotNaNs) {
  // Entries of size ~1e5: the transformed vectors exceed fp16's 65504 and become inf/NaN.
  ASSERT_EQ(run({"generate", "planted-dense", "--scale", "100000", "--out-a", "A.mtx", "--out-b", "B.mtx", "-q"}).status, 0);
  const Result r = run({"--precision", "fp16", "-o", "C.mtx", "--save-sketch", "C.pagh", "A.mtx", "B.mtx"});
  EXPECT_EQ(r.status, 65);
  EXPECT_EQ(r.out, "");
  expect_one_line_error(r, {"--precision fp16: the sketch overflowed"});
  EXPECT_EQ(work_files(), (std::vector<std::string>{"A.mtx", "B.mtx"}));
  EXPECT_EQ(run({"--precision", "fp32", "A.mtx", "B.mtx"}).status, 0);
}

TEST_F(Cli, WriteErrorOnStandardOutputIsAnIoError) {
  const Result r = run({A(), B()}, "/dev/full");
  EXPECT_EQ(r.status, 74);
  EXPECT_NE(r.err.find("pagh-mm: standard output: write error"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pagh_mm_test
