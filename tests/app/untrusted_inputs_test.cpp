// pagh-mm given inputs from anyone (issue 29): crafted sketch files (every header field at hostile
// values, the checksum recomputed) are refused with 65, or 71 when valid but too large for the
// memory available, or answered correctly; never a signal. Small files claiming huge products are
// refused quickly under an address-space limit; options that ask for the impossible are usage
// errors; devices are not read until memory runs out; nothing is printed or written before a
// command has succeeded.
#include <chrono>
#include <cmath>
#include <fstream>

#include "cli_test_support.hpp"
#include "crafted_sketch.hpp"
#include "sketch/compressed_product.hpp"

namespace pagh_mm_test {
namespace {

using nlohmann::json;

class Untrusted : public Cli {
 protected:
  std::string craft(const crafted::Fields& f, const std::string& name = "crafted.pagh") const {
    const auto bytes = crafted::file_bytes(f, crafted::payload_values(f));
    std::ofstream out(work(name), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return work(name).string();
  }


  // query and top on one crafted file: 65, 71 ("insufficient memory") or a correct answer.
  void expect_refused_or_correct(const crafted::Fields& f, const std::string& what) const {
    const std::string path = craft(f);
    const Result q = run({"query", path, "1", "1", "--format", "json"});
    const Result t = run({"top", path, "-k", "3", "--format", "json"});
    for (const Result* r : {&q, &t}) {
      ASSERT_NE(r->status, -1) << what << ": killed by a signal";
      if (r->status == 0) continue;
      EXPECT_TRUE(r->status == 65 || r->status == 71 || (r->status == 64 && r == &q)) << what << ": " << r->err;
      if (r->status == 71) EXPECT_NE(r->err.find("insufficient memory"), std::string::npos) << r->err;
      EXPECT_EQ(r->out, "") << what;
      // 64: a valid file of an empty product, whose entry (1, 1) does not exist.
      expect_one_line_error(*r, {r->status == 64 ? std::string("outside the") : path});
    }
    if (q.status == 0) {
      EXPECT_TRUE(crafted::valid(f)) << what << ": answered from a file the format refuses";
      // The same numbers as the library's loader gives (which sketch_file_test checks field by field).
      const auto product = pagh::CompressedProduct::load(path);
      const json answer = json::parse(q.out);
      EXPECT_EQ(answer["entries"][0]["estimate"].get<double>(), product.estimate(0, 0)) << what;
    } else if (q.status == 65) {
      EXPECT_NE(q.err.find("not a usable sketch"), std::string::npos) << q.err;
    }
    if (crafted::valid(f) && static_cast<double>(crafted::payload_values(f)) == static_cast<double>(f.repetitions) * static_cast<double>(f.buckets) &&
        crafted::loaded_bytes(f) < 1e8 && f.rows > 0 && f.cols > 0)
      EXPECT_EQ(q.status, 0) << what << ": refused a valid small file: " << q.err;
  }
};

TEST_F(Untrusted, EveryHeaderFieldAtHostileValuesIsRefusedOrAnswered) {
  for (const auto& name : crafted::kFieldNames) {
    if (crafted::is_double_field(name)) {
      for (double v : crafted::kDoubleValues) {
        crafted::Fields f;
        f.pad = v;
        expect_refused_or_correct(f, name + " = " + std::to_string(v));
      }
      continue;
    }
    for (std::int64_t v : crafted::kIntegerValues) {
      crafted::Fields f;
      crafted::set_integer(f, name, v);
      expect_refused_or_correct(f, name + " = " + std::to_string(v));
    }
  }
}

// Pairs of fields through the command line: the size fields against each other (the library test
// covers every pair; each case here starts two processes).
TEST_F(Untrusted, PairsOfSizeFieldsAreRefusedOrAnswered) {
  const std::vector<std::string> sizes = {"rows", "cols", "buckets", "repetitions"};
  for (std::size_t x = 0; x < sizes.size(); ++x)
    for (std::size_t y = x + 1; y < sizes.size(); ++y)
      for (std::int64_t vx : crafted::kPairIntegerValues)
        for (std::int64_t vy : crafted::kPairIntegerValues) {
          crafted::Fields f;
          crafted::set_integer(f, sizes[x], vx);
          crafted::set_integer(f, sizes[y], vy);
          expect_refused_or_correct(f, sizes[x] + " = " + std::to_string(vx) + ", " + sizes[y] + " = " + std::to_string(vy));
        }
}

// 2 GiB of address space: room for pagh-mm's own shared libraries (a build with the CUDA backends and
// NCCL maps about 1 GB of them before main: cuBLASLt 0.54 GB, NCCL 0.22 GB, cuRAND 0.13 GB), far
// below what the crafted files below claim (10.7 GB and more).
constexpr const char* kAddressCap = "ulimit -v 2097152";

// An 8 KB file claiming d = 1024 and a 2^20 x 2^20 product (10.7 GB of hash tables), and one
// claiming 2^47 x 2^47: refused at once, under an address-space limit, not killed.
TEST_F(Untrusted, SmallFilesClaimingHugeProductsAreRefusedQuicklyUnderAMemoryCap) {
  crafted::Fields wide;
  wide.rows = wide.cols = std::int64_t{1} << 20, wide.repetitions = 1024, wide.buckets = 1;
  crafted::Fields huge;
  huge.rows = huge.cols = std::int64_t{1} << 47;
  for (const auto& [fields, name] : {std::pair{wide, "wide.pagh"}, std::pair{huge, "huge.pagh"}}) {
    const std::string path = craft(fields, name);
    EXPECT_LT(fs::file_size(path), 9000u);
    for (const auto& command : {"query", "top"}) {
      std::vector<std::string> args = {command, path};
      if (std::string(command) == "query") args.insert(args.end(), {"1", "1"});
      const auto start = std::chrono::steady_clock::now();
      const Result r = run_limited(kAddressCap, args);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_EQ(r.status, 71) << name << " " << command << ": " << r.err;
      expect_one_line_error(r, {path, "insufficient memory: needs", "GB available"});
      EXPECT_EQ(r.out, "");
      EXPECT_LT(seconds, 10) << "refusing must not take the time of the work";
    }
  }
  // The limit alone is harmless: a valid small file answers under it.
  const Result fine = run_limited(kAddressCap, {"query", craft({}, "small.pagh"), "1", "1"});
  EXPECT_EQ(fine.status, 0) << fine.err;
}

// A 112-byte sketch of a 2^20 x 2^20 product with b = 2: every bucket holds 2^39 candidates, so top
// would run for hours; it is refused at once, while query still answers single entries.
TEST_F(Untrusted, ASketchTooShortToRankIsRefusedByTop) {
  crafted::Fields f;
  f.rows = f.cols = std::int64_t{1} << 20, f.buckets = 2, f.repetitions = 1;
  const std::string path = craft(f);
  EXPECT_EQ(fs::file_size(path), 112u);
  const auto start = std::chrono::steady_clock::now();
  const Result top = run({"top", path, "-k", "3"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10);
  EXPECT_EQ(top.status, 65) << top.err;
  expect_one_line_error(top, {path, "too short to rank", "b = 2 buckets"});
  EXPECT_EQ(run({"top", path, "--threshold", "1"}).status, 65);
  EXPECT_EQ(run({"query", path, "1048576", "1048576"}).status, 0);
}

// The same for the main command, before any work: --buckets 1 (or a tiny --pad) on a 300000 x 300000
// product puts 9e10 candidates in the one bucket.
TEST_F(Untrusted, ASketchLengthTooShortToRankIsAUsageError) {
  std::ofstream(work("a.mtx")) << "%%MatrixMarket matrix coordinate real general\n300000 1 1\n1 1 1\n";
  std::ofstream(work("b.mtx")) << "%%MatrixMarket matrix coordinate real general\n1 300000 1\n1 1 1\n";
  for (const auto& option : {std::vector<std::string>{"--buckets", "1"}, std::vector<std::string>{"--pad", "1e-9"}}) {
    std::vector<std::string> args = option;
    args.insert(args.end(), {"--save-sketch", "s.pagh", "a.mtx", "b.mtx"});
    const Result r = run(args);
    EXPECT_EQ(r.status, 64) << r.err;
    expect_one_line_error(r, {option[0], "too short a sketch to rank"});
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(fs::exists(work("s.pagh")));
  }
  EXPECT_EQ(run({"-q", "a.mtx", "b.mtx"}).status, 0);  // the default length ranks it
}

TEST_F(Untrusted, DevicesAreNotReadUntilMemoryRunsOut) {
  const Result sketch = run_limited(kAddressCap, {"query", "/dev/zero", "1", "1"});
  EXPECT_EQ(sketch.status, 65) << sketch.err;
  expect_one_line_error(sketch, {"/dev/zero", "not a pagh sketch file"});
  const Result matrix = run_limited(kAddressCap, {"--backend", "cpu", "/dev/zero", B()});
  EXPECT_EQ(matrix.status, 65) << matrix.err;
  expect_one_line_error(matrix, {"/dev/zero", "banner"});
}

// A sketch that cannot be read (offset 0 of a process's memory reads as EIO) is an I/O error (74),
// not bad data.
TEST_F(Untrusted, AnUnreadableSketchIsAnIoError) {
  const Result r = run({"query", "/proc/self/mem", "1", "1"});
  EXPECT_EQ(r.status, 74) << r.err;
  expect_one_line_error(r, {"/proc/self/mem", "read failed"});
}

TEST_F(Untrusted, ImpossibleOptionsAreUsageErrors) {
  const auto expect_usage = [&](const std::vector<std::string>& args, const std::vector<std::string>& fragments) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 64) << r.err;
    EXPECT_EQ(r.out, "");
    expect_one_line_error(r, fragments);
    EXPECT_TRUE(work_files().empty());
  };
  expect_usage({"-k", "1099511627776", A(), B()}, {"--top", "67108864"});
  expect_usage({"--threads", "4096", A(), B()}, {"--threads", "1024"});
  expect_usage({"--backend", "cpu", "--buckets", "4294967296", "--sketches", "8", "--save-sketch", "t.pagh", A(), B()},
               {"--buckets 4294967296", "insufficient memory: needs", "GB available"});
  expect_usage({"top", "absent.pagh", "-k", "1099511627776"}, {"-k", "67108864"});  // before the file is opened
  expect_usage({"generate", "low-rank-sparse", "--rank", "1000000", "-q"}, {"--rank", "256"});
  expect_usage({"generate", "planted-dense", "--scale", "1e308", "-q"}, {"--scale", "overflow"});
  const Result r = run({"generate", "planted-dense", "--scale", "1e308", "-q"});
  EXPECT_EQ(r.err.find("staged"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("Options::"), std::string::npos) << r.err;
}

// Threads the system cannot grant (here: 1000 stacks of 8 MiB under 2 GB of address space) are
// reported by pagh-mm (71), not by the OpenMP runtime, which would exit with status 1.
TEST_F(Untrusted, ThreadsTheSystemCannotStartAreReportedCleanly) {
  const Result r = run_limited("ulimit -v 2000000", {"--backend", "cpu", "--threads", "1000", A(), B()});
  EXPECT_EQ(r.status, 71) << r.err;
  expect_one_line_error(r, {"--threads", "cannot start 1000 threads"});
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(run({"--backend", "cpu", "--threads", "64", "-q", A(), B()}).status, 0);
}

// Work too large for the machine is refused before it starts, naming only options it has.
TEST_F(Untrusted, GeneratingMoreThanMemoryHoldsIsRefusedWithoutForeignAdvice) {
  const Result r = run({"generate", "planted-dense", "--m", "100000", "--k", "100000", "--p", "100000", "-q"});
  EXPECT_EQ(r.status, 71) << r.err;
  expect_one_line_error(r, {"generate planted-dense", "insufficient memory: needs 160 GB"});
  EXPECT_EQ(r.err.find("--pad"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--sketches"), std::string::npos) << r.err;
  EXPECT_TRUE(work_files().empty());
}

// A sketch with an explicit b whose stored pad would call for a length beyond 2^32 (as
// --buckets 1024 on a 536870913 x 1 product saves it): describing it must not fail midway through
// the report, so query and top print it whole.
TEST_F(Untrusted, AnExplicitLengthWithALargePadIsReportedWhole) {
  crafted::Fields f;
  f.rows = 8192, f.cols = 1, f.buckets = 1024, f.repetitions = 1, f.pad = 1e6;  // pad * rows > 2^32
  const std::string path = craft(f);
  for (const auto& args : {std::vector<std::string>{"query", path, "8192", "1"}, std::vector<std::string>{"top", path, "-k", "2"}}) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("b = 1024 buckets, d = 1 sketches"), std::string::npos) << r.out;
  }
}

// A failure after the inputs were read leaves nothing on stdout and no file.
TEST_F(Untrusted, NothingIsPrintedOrCreatedBeforeSuccess) {
  const Result r = run({"--backend", "cpu", "--buckets", "4294967296", "-o", "top.mtx", "--save-sketch", "t.pagh", A(), B()});
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(work_files().empty());
}

// Writes a Matrix Market array file of the given column-major values.
void write_array(const fs::path& path, int rows, int cols, const std::vector<double>& values) {
  std::ofstream out(path);
  out << "%%MatrixMarket matrix array real general\n" << rows << " " << cols << "\n";
  out.precision(17);
  for (double v : values) out << v << "\n";
}

// Entries near 1.2e154 are representable in fp64 although the sum of their squares is not (16 of
// them: ||C||_F^2 ~ 2.3e309): the fp64 sketch must accept them and estimate them correctly.
TEST_F(Untrusted, Fp64AcceptsEntriesWhoseSquaresOverflow) {
  write_array(work("A.mtx"), 4, 1, {1e77, -1e77, 1e77, 1e77});
  write_array(work("B.mtx"), 1, 4, {1.2e77, 1.2e77, -1.2e77, 1.2e77});
  const Result r = run({"--method", "sketch", "--backend", "cpu", "--precision", "fp64", "--buckets", "1024", "--sketches", "5", "-k", "16", "--format",
                        "json", work("A.mtx").string(), work("B.mtx").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["entries"].size(), 16u);
  const std::vector<double> a = {1e77, -1e77, 1e77, 1e77}, b = {1.2e77, 1.2e77, -1.2e77, 1.2e77};
  for (const auto& e : j["entries"]) {
    const double exact = a[e["row"].get<std::size_t>() - 1] * b[e["col"].get<std::size_t>() - 1];
    EXPECT_NEAR(e["estimate"].get<double>() / exact, 1.0, 1e-12) << e.dump();
  }
  // ||C||_F = 4.8e154 is finite; its estimate from the sketch is a statistic (collisions move it).
  EXPECT_NEAR(j["estimates"]["frobenius"].get<double>() / 4.8e154, 1.0, 0.2);
}

// --full on a product whose dense array (7.2 GB) exceeds the memory available (under 3 GB of address
// space) is refused before the sketch, naming --full.
TEST_F(Untrusted, DenseResultsBeyondTheMemoryAvailableAreRefusedFirst) {
  write_array(work("A.mtx"), 30000, 1, std::vector<double>(30000, 1.0));
  write_array(work("B.mtx"), 1, 30000, std::vector<double>(30000, 1.0));
  const Result r = run_limited("ulimit -v 3000000", {"--backend", "cpu", "--full", "-o", "C.mtx", "A.mtx", "B.mtx"});
  EXPECT_EQ(r.status, 64) << r.err;
  expect_one_line_error(r, {"--full", "insufficient memory: needs 7.2 GB"});
  EXPECT_FALSE(fs::exists(work("C.mtx")));
}

// An fp64 sketch that overflows is refused without advising fp64 (or fp32) again.
TEST_F(Untrusted, Fp64OverflowAdvisesNoPrecisionAlreadyChosen) {
  write_array(work("A.mtx"), 1, 1, {1e200});
  write_array(work("B.mtx"), 1, 1, {1e200});
  const Result r = run({"--method", "sketch", "--backend", "cpu", "--precision", "fp64", work("A.mtx").string(), work("B.mtx").string()});
  EXPECT_EQ(r.status, 65) << r.err;
  expect_one_line_error(r, {"--precision fp64", "scale the inputs down"});
  EXPECT_EQ(r.err.find("use fp"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pagh_mm_test
