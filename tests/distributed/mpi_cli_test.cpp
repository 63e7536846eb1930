// mpirun -np N pagh-mm against one process: the same sketch file and outputs (bit for bit for integer
// inputs, to rounding for others), failures on one rank ending every rank with one line and the same
// status, ranks that own no inner index. Sparse coordinate files are read by byte ranges (each rank
// its share of the inner indices; the exact values of candidates and the known diagonal summed over
// the ranks), array files and --verify runs whole on every rank: both are tested. Every mpirun runs
// under timeout(1): a hang fails the test.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cli_test_support.hpp"
#include "matrix_io/read.hpp"
#include "matrix_io/synthetic.hpp"
#include "matrix_io/write.hpp"
#include "sketch/compressed_product.hpp"

namespace pagh_mm_test {
namespace {

namespace mio = pagh::matrix_io;

class MpiCli : public Cli {
 protected:
  // Ranks of one mpirun app context, started in their own directory (relative to the work
  // directory): mpirun's MPMD form lets ranks see different files.
  struct Group {
    int ranks;
    std::string directory;
  };
  Result mpirun(const std::vector<Group>& groups, const std::vector<std::string>& args) const {
    std::vector<std::string> words = {"/usr/bin/timeout", "-k", "5", "60", PAGH_MPIEXEC, "-q", "--allow-run-as-root", "--oversubscribe",
                                      "--mca", "btl_vader_single_copy_mechanism", "none"};
    words.insert(words.end(), launch_.begin(), launch_.end());
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (g > 0) words.push_back(":");
      words.insert(words.end(), {"-np", std::to_string(groups[g].ranks), "-wdir", (dir_ / "work" / groups[g].directory).string(), kBinary});
      words.insert(words.end(), args.begin(), args.end());
    }
    return wait_for(start_process(words[0], words, dir_ / "work", out_path(), err_path()), false);
  }
  Result mpirun(int ranks, const std::vector<std::string>& args) const { return mpirun({{ranks, "."}}, args); }
  std::vector<std::string> launch_;  // more mpirun options (a binding)

  // One process, then np ranks, on A.mtx and B.mtx of the work directory; both keep their sketch
  // (one.sketch, many.sketch) and entries (one.mtx, many.mtx).
  void run_both(int np, const std::vector<std::string>& extra = {}, const std::string& backend = "cpu",
                const std::vector<std::string>& method = {"--method", "sketch"}) const {
    std::vector<std::string> common = {"A.mtx", "B.mtx", "--backend", backend, "-k", "20", "-q"};
    common.insert(common.end(), method.begin(), method.end());
    common.insert(common.end(), extra.begin(), extra.end());
    const auto with = [&](const std::string& tag) {
      std::vector<std::string> args = common;
      args.insert(args.end(), {"--save-sketch", tag + ".sketch", "-o", tag + ".mtx"});
      return args;
    };
    const Result one = run(with("one"));
    ASSERT_EQ(one.status, 0) << one.err;
    const Result many = mpirun(np, with("many"));
    ASSERT_EQ(many.status, 0) << many.err;
    EXPECT_EQ(many.err, "");
    EXPECT_EQ(lines_of(many.out).size(), lines_of(one.out).size()) << "one report, from rank 0 only:\n" << many.out;
  }

  // np ranks (-v) read A.mtx and B.mtx by byte ranges, or not.
  void expect_read_by_ranges(int np, bool expected, const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args = {"A.mtx", "B.mtx", "--backend", "cpu", "-k", "3", "-v"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Result r = mpirun(np, args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.find("inputs read by byte ranges over " + std::to_string(np) + " ranks in ") != std::string::npos, expected) << r.err;
  }

  // The -o files of one.mtx and many.mtx: the same entries, values within rel of each other.
  void expect_close_entries(double rel, const std::string& what) const {
    const auto one = mio::read_sparse<double>(work("one.mtx"));
    const auto many = mio::read_sparse<double>(work("many.mtx"));
    ASSERT_EQ(one.nonZeros(), many.nonZeros()) << what;
    ASSERT_GT(one.nonZeros(), 0) << what;
    const Eigen::MatrixXd a(one), b(many);
    for (Eigen::Index j = 0; j < a.cols(); ++j)
      for (Eigen::Index i = 0; i < a.rows(); ++i) {
        EXPECT_EQ(a(i, j) == 0, b(i, j) == 0) << what << ": entry " << i << ", " << j;
        EXPECT_LE(std::fabs(a(i, j) - b(i, j)), rel * std::fabs(a(i, j))) << what << ": entry " << i << ", " << j;
      }
  }

  void expect_same_bytes(const std::string& what) const {
    EXPECT_EQ(slurp(work("many.sketch")), slurp(work("one.sketch"))) << what;
    EXPECT_EQ(slurp(work("many.mtx")), slurp(work("one.mtx"))) << what;
  }

  // Every sketch value is a sum of terms whose magnitudes add up to at most
  // S = sum_k ||A[:,k]||_1 ||B[k,:]||_1; sums of the same terms in other orders (K products, a
  // log2 b stage transform, np partial sketches) differ by at most (K + 2 log2 b + np) eps S.
  void expect_close_sketches(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, int np, double eps, const std::string& what) const {
    const auto one = pagh::CompressedProduct::load(work("one.sketch").string());
    const auto many = pagh::CompressedProduct::load(work("many.sketch").string());
    ASSERT_EQ(one.buckets(), many.buckets());
    ASSERT_EQ(one.repetitions(), many.repetitions());
    double S = 0;
    for (Eigen::Index k = 0; k < A.cols(); ++k) S += A.col(k).cwiseAbs().sum() * B.row(k).cwiseAbs().sum();
    const double tolerance = (static_cast<double>(A.cols()) + 2 * std::log2(static_cast<double>(one.buckets())) + np) * eps * S;
    double worst = 0;
    for (int t = 0; t < one.repetitions(); ++t)
      for (std::int64_t h = 0; h < one.buckets(); ++h) worst = std::max(worst, std::fabs(one.sketch(t)[h] - many.sketch(t)[h]));
    EXPECT_LE(worst, tolerance) << what;
  }

  template <class M>
  void write(const std::string& name, const M& m) const {
    std::filesystem::remove(work(name));
    mio::write_matrix_market(work(name), m);
  }
};

using MpiCliGpu = MpiCli;

TEST_F(MpiCli, IntegerWorkloadsGiveTheSameBytes) {
  const auto dense = mio::planted_dense({.m = 60, .k = 80, .p = 50, .seed = 3, .planted = 3, .integer_entries = true});
  const auto sparse = mio::sparse_product({.m = 500, .k = 400, .p = 450, .seed = 5, .integer_entries = true});
  for (int np : {2, 3}) {
    write("A.mtx", dense.a), write("B.mtx", dense.b);
    run_both(np);
    expect_same_bytes("planted-dense, np " + std::to_string(np));
    write("A.mtx", sparse.a), write("B.mtx", sparse.b);
    run_both(np);
    expect_same_bytes("sparse, np " + std::to_string(np));
  }
}

// Sparse files read by byte ranges: the exact values of the sketch's candidates (--refine, --method
// auto), the known diagonal of a square product (subtracted, or left out with --no-diagonal) and
// --method auto's counts come from the ranks' shares; integer inputs give one process's bytes.
TEST_F(MpiCli, SharesAnswerExactValuesAndTheDiagonal) {
  const auto sparse = mio::sparse_product({.m = 500, .k = 400, .p = 450, .seed = 5, .integer_entries = true});
  write("A.mtx", sparse.a), write("B.mtx", sparse.b);
  expect_read_by_ranges(3, true);
  expect_read_by_ranges(2, false, {"--verify"});
  const std::vector<std::vector<std::string>> methods = {
      {"--method", "sketch", "--refine"}, {"--method", "auto"}, {"--method", "sketch", "--threshold", "30"}};
  for (int np : {2, 3})
    for (const auto& method : methods) {
      run_both(np, {}, "cpu", method);
      expect_same_bytes("sparse, np " + std::to_string(np) + ", " + method.back());
    }
  // Square: a Gram product X^T X, whose diagonal holds much of the energy.
  const auto x = mio::sparse_product({.m = 300, .k = 400, .p = 10, .seed = 7, .a_per_row = 6, .integer_entries = true});
  write("A.mtx", Eigen::SparseMatrix<double>(x.a.transpose())), write("B.mtx", x.a);
  for (int np : {2, 3})
    for (const auto& extra : std::vector<std::vector<std::string>>{{}, {"--no-diagonal"}}) {
      run_both(np, extra, "cpu", {"--method", "sketch", "--refine"});
      expect_same_bytes("gram, np " + std::to_string(np) + (extra.empty() ? "" : ", --no-diagonal"));
      run_both(np, extra, "cpu", {"--method", "sketch"});
      expect_same_bytes("gram, estimates, np " + std::to_string(np) + (extra.empty() ? "" : ", --no-diagonal"));
    }
}

// Floats: the refined values are sums of the same products in another order (each rank's k, then the
// ranks in order): the same entries, values to rounding.
TEST_F(MpiCli, SharedExactValuesOfFloatsAgreeToRounding) {
  const auto sparse = mio::sparse_product({.m = 400, .k = 300, .p = 350, .seed = 8});
  write("A.mtx", sparse.a), write("B.mtx", sparse.b);
  for (int np : {2, 3}) {
    run_both(np, {"--precision", "fp64"}, "cpu", {"--method", "sketch", "--refine"});
    expect_close_entries(1e-12, "sparse floats, refined, np " + std::to_string(np));
  }
}

TEST_F(MpiCli, FloatWorkloadsAgreeToRounding) {
  const auto planted = mio::planted_dense({.m = 60, .k = 80, .p = 50, .seed = 4});
  const auto low_rank = mio::low_rank_plus_sparse({.m = 70, .k = 90, .p = 60, .seed = 2});
  const auto covariance = mio::sample_covariance({.samples = 120, .features = 50, .seed = 6});
  const auto sparse = mio::sparse_product({.m = 400, .k = 300, .p = 350, .seed = 8});
  const std::vector<std::pair<std::string, const mio::DensePair*>> dense = {
      {"planted-dense", &planted}, {"low-rank-sparse", &low_rank}, {"covariance", &covariance}};
  for (const auto& [name, w] : dense) {
    write("A.mtx", w->a), write("B.mtx", w->b);
    run_both(3);
    expect_close_sketches(w->a, w->b, 3, std::numeric_limits<float>::epsilon(), name + ", fp32");
    run_both(2, {"--precision", "fp64"});
    expect_close_sketches(w->a, w->b, 2, std::numeric_limits<double>::epsilon(), name + ", fp64");
  }
  write("A.mtx", sparse.a), write("B.mtx", sparse.b);
  run_both(3, {"--precision", "fp64"});
  expect_close_sketches(Eigen::MatrixXd(sparse.a), Eigen::MatrixXd(sparse.b), 3, std::numeric_limits<double>::epsilon(), "sparse, fp64");
}

// Inner dimension 2 over 3 ranks: one rank sketches nothing and still takes part in the sum.
TEST_F(MpiCli, RanksWithoutInnerIndices) {
  Eigen::MatrixXd A(5, 2), B(2, 4);
  A << 1, 2, 0, 3, -1, 0, 4, 1, 2, 2;
  B << 3, 0, 1, -2, 1, 1, 0, 5;
  write("A.mtx", A), write("B.mtx", B);
  run_both(3);
  expect_same_bytes("K = 2, np 3");
  run_both(3, {"--verify"});
  // The same, read by byte ranges: sparse files (dense ones are read whole, as one process reads
  // them dense), inner dimension 2 over 3 ranks.
  Eigen::SparseMatrix<double> As(40, 2), Bs(2, 30);
  for (int i = 0; i < 40; i += 3) As.insert(i, i % 2) = 1 + i % 5;
  for (int j = 0; j < 30; j += 4) Bs.insert(j % 2, j) = 2 - j % 7;
  As.insert(7, 1) = 3, Bs.insert(1, 29) = -4;
  write("A.mtx", As), write("B.mtx", Bs);
  expect_read_by_ranges(3, true);
  for (const auto& method : std::vector<std::vector<std::string>>{{"--method", "sketch"}, {"--method", "sketch", "--refine"}, {"--method", "auto"}}) {
    run_both(3, {}, "cpu", method);
    expect_same_bytes("K = 2 by byte ranges, np 3, " + method.back());
  }
}

// A malformed line that only one rank sees (its own copy of a.mtx, of the same length): every rank
// ends with 65 and rank 0 prints the line one process would print, whichever rank read it. Read by
// byte ranges, a rank parses only its own range: the bad line is put in the bad rank's (the first
// entry line for rank 0, the last for the last rank); --verify reads whole files.
TEST_F(MpiCli, ABadFileOnOneRankEndsEveryRank) {
  const auto w = mio::sparse_product({.m = 50, .k = 40, .p = 30, .seed = 2, .integer_entries = true});
  for (const std::string dir : {"good", "bad"}) {
    std::filesystem::create_directories(work(dir));
    mio::write_matrix_market(work(dir) / "a.mtx", w.a);
    mio::write_matrix_market(work(dir) / "b.mtx", w.b);
  }
  const std::vector<std::string> original = lines_of(slurp(work("good") / "a.mtx"));
  // The entry line `which` (0: the first, -1: the last) with its value turned into as many 'x'.
  const auto spoil = [&](int which) {
    std::vector<std::string> lines = original;
    std::size_t first = 0;
    while (lines[first].starts_with("%")) ++first;
    ++first;  // the size line
    std::string& line = lines[which == 0 ? first : lines.size() - 1];
    const std::size_t value = line.rfind(' ') + 1;
    line.replace(value, line.size() - value, std::string(line.size() - value, 'x'));
    std::string text;
    for (const std::string& l : lines) text += l + "\n";
    std::ofstream(work("bad") / "a.mtx", std::ios::trunc) << text;
  };
  for (const auto& [groups, which] : std::vector<std::pair<std::vector<Group>, int>>{{{{1, "good"}, {1, "bad"}}, -1},
                                                                                   {{{1, "bad"}, {2, "good"}}, 0},
                                                                                   {{{2, "good"}, {1, "bad"}}, -1}})
    for (const std::vector<std::string> extra : {std::vector<std::string>{}, std::vector<std::string>{"--verify"}}) {
      spoil(which);
      std::vector<std::string> words = {kBinary, "a.mtx", "b.mtx", "--method", "sketch"};
      const Result single = wait_for(start_process(kBinary, words, work("bad"), out_path(), err_path()), false);
      ASSERT_EQ(single.status, 65) << single.err;
      std::vector<std::string> args = {"a.mtx", "b.mtx", "--method", "sketch", "--backend", "cpu"};
      args.insert(args.end(), extra.begin(), extra.end());
      const Result r = mpirun(groups, args);
      const std::string what = "bad rank " + groups[0].directory + (extra.empty() ? "" : ", --verify");
      EXPECT_EQ(r.status, 65) << what << ": " << r.err;
      EXPECT_EQ(r.err, single.err) << what << ": the message one process prints";
      EXPECT_EQ(r.out, "") << what;
    }
  // A file missing on one rank: 66, as for one process.
  std::filesystem::remove(work("bad") / "a.mtx");
  for (const std::vector<std::string> extra : {std::vector<std::string>{}, std::vector<std::string>{"--verify"}}) {
    std::vector<std::string> args = {"a.mtx", "b.mtx", "--method", "sketch", "--backend", "cpu"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Result missing = mpirun({{1, "good"}, {1, "bad"}}, args);
    EXPECT_EQ(missing.status, 66) << missing.err;
    expect_one_line_error(missing, {"a.mtx"});
  }
}

// Ranks that read different (valid) inputs are refused rather than summed.
TEST_F(MpiCli, RanksThatReadDifferentInputsAreRefused) {
  const auto one = mio::sparse_product({.m = 50, .k = 40, .p = 30, .seed = 2, .integer_entries = true});
  const auto other = mio::sparse_product({.m = 50, .k = 40, .p = 30, .seed = 3, .a_per_row = 5, .integer_entries = true});
  for (const auto& [dir, w] : {std::pair{std::string("x"), &one}, std::pair{std::string("y"), &other}}) {
    std::filesystem::create_directories(work(dir));
    mio::write_matrix_market(work(dir) / "a.mtx", w->a);
    mio::write_matrix_market(work(dir) / "b.mtx", w->b);
  }
  // By byte ranges the headers differ; whole files (--verify) differ in what was read.
  const Result ranges = mpirun({{1, "x"}, {1, "y"}}, {"a.mtx", "b.mtx", "--method", "sketch", "--backend", "cpu"});
  EXPECT_EQ(ranges.status, 65) << ranges.err;
  expect_one_line_error(ranges, {"the ranks differ in the declared entries of A"});
  const Result r = mpirun({{1, "x"}, {1, "y"}}, {"a.mtx", "b.mtx", "--method", "sketch", "--backend", "cpu", "--verify"});
  EXPECT_EQ(r.status, 65) << r.err;
  expect_one_line_error(r, {"the ranks differ in the stored entries of A"});
}

// Options rank 0 refuses end the workers too (they never read).
TEST_F(MpiCli, AUsageErrorEndsEveryRank) {
  const Result r = mpirun(2, {"A.mtx", "B.mtx", "--no-such-option"});
  EXPECT_EQ(r.status, 64) << r.err;
  expect_one_line_error(r, {"no-such-option"});
}

// Ranks bound to one core each: after the sum rank 0 runs on both ranks' cores (NodeCores), says so
// with -v, and gives one process's bytes. Skipped where mpirun cannot bind 2 ranks to a core each.
TEST_F(MpiCli, BoundRanksLendRankZeroTheirCores) {
  launch_ = {"--map-by", "slot:PE=1", "--bind-to", "core"};
  const auto sparse = mio::sparse_product({.m = 500, .k = 400, .p = 450, .seed = 5, .integer_entries = true});
  write("A.mtx", sparse.a), write("B.mtx", sparse.b);
  const Result probe = mpirun(2, {"A.mtx", "B.mtx", "--backend", "cpu", "--method", "sketch", "-k", "5", "-v"});
  if (probe.status != 0 && probe.err.find("pagh-mm") == std::string::npos) GTEST_SKIP() << "mpirun cannot bind here: " << probe.err;
  ASSERT_EQ(probe.status, 0) << probe.err;
  EXPECT_NE(probe.err.find("rank 0 goes on on its node's 2 cores"), std::string::npos) << probe.err;
  run_both(2);
  expect_same_bytes("sparse, np 2 bound to a core each");
  // --threads sets the count: rank 0 keeps its own core.
  const Result given = mpirun(2, {"A.mtx", "B.mtx", "--backend", "cpu", "--method", "sketch", "-k", "5", "-v", "--threads", "1"});
  ASSERT_EQ(given.status, 0) << given.err;
  EXPECT_EQ(given.err.find("goes on on its node's"), std::string::npos) << given.err;
}

// CUDA ranks (one GPU per local rank; ranks share a GPU when there are more ranks than GPUs) against
// one process on one GPU: integer inputs give the same bytes.
TEST_F(MpiCliGpu, CudaRanksMatchOneGpu) {
  if (expected_auto_backend() != "cuda") GTEST_SKIP() << "no usable CUDA device (or no CUDA backend in this build)";
  const auto dense = mio::planted_dense({.m = 300, .k = 500, .p = 200, .seed = 3, .planted = 3, .integer_entries = true});
  const auto sparse = mio::sparse_product({.m = 3000, .k = 2000, .p = 2500, .seed = 5, .integer_entries = true});
  for (int np : {2, 3}) {
    write("A.mtx", dense.a), write("B.mtx", dense.b);
    run_both(np, {}, "cuda");
    expect_same_bytes("planted-dense on GPUs, np " + std::to_string(np));
    write("A.mtx", sparse.a), write("B.mtx", sparse.b);
    run_both(np, {}, "cuda");
    expect_same_bytes("sparse on GPUs, np " + std::to_string(np));
  }
}

}  // namespace
}  // namespace pagh_mm_test
