// pagh-mm's honest answers: under --method auto a sketch's candidates are evaluated exactly from A
// and B (--refine), with the bound on missed entries in the report; --method sketch keeps the
// estimates; --correlation multiplies standardized operands (Pearson correlations), dense or sparse.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <set>
#include <string>

#include "cli_test_support.hpp"
#include "matrix_io/read.hpp"
#include "sketch/exact_answers.hpp"

namespace pagh_mm_test {
namespace {

using nlohmann::json;
namespace mio = pagh::matrix_io;

TEST_F(Cli, AutoReportsExactValuesOfTheSketchsCandidates) {
  // --verify needs a sketch, so auto sketches; the reported entries are then refined.
  const json j = run_json({"--verify", "-k", "6", A(), B()});
  ASSERT_EQ(j["method"]["ran"], "sketch");
  ASSERT_TRUE(j["refinement"].is_object()) << j;
  EXPECT_TRUE(j["refinement"]["complete"].get<bool>());
  EXPECT_LE(j["refinement"]["expected_missed"].get<double>(), 0.05);
  EXPECT_GE(j["refinement"]["candidates"].get<int>(), 24);
  const Eigen::MatrixXd c = mio::read_dense<double>(A()) * mio::read_dense<double>(B());
  const auto expected = pagh::top_k_of(c, 6);  // integer inputs: every summation order is exact
  ASSERT_EQ(j["entries"].size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    const auto& e = j["entries"][i];
    EXPECT_EQ(e["row"], expected[i].row + 1);
    EXPECT_EQ(e["col"], expected[i].col + 1);
    EXPECT_EQ(e["estimate"].get<double>(), expected[i].value);
    EXPECT_EQ(e["exact"].get<double>(), expected[i].value);
    EXPECT_TRUE(e["known"].get<bool>());
    EXPECT_EQ(e["interval_half_width"].get<double>(), 0.0);
  }
  EXPECT_EQ(j["metrics"]["reported_recall"], 1.0);
  // The text says where the values come from; -o's comments say they are exact.
  const Result text = run({"--verify", "-k", "6", "-o", "top.mtx", A(), B()});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("exact values of the sketch's candidates"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("candidates evaluated exactly from A and B"), std::string::npos) << text.out;
  EXPECT_NE(slurp(work("top.mtx")).find("exact values of the entries of C = A*B that a compressed product selected"),
            std::string::npos);
}

TEST_F(Cli, MethodSketchKeepsTheEstimatesUnlessAskedToRefine) {
  const json sketch = run_json({"--method", "sketch", "--pad", "8", "-k", "4", A(), B()});
  EXPECT_TRUE(sketch["refinement"].is_null());
  EXPECT_FALSE(sketch["entries"][0]["known"].get<bool>());
  const json refined = run_json({"--method", "sketch", "--refine", "--pad", "8", "-k", "4", A(), B()});
  ASSERT_TRUE(refined["refinement"].is_object());
  const Eigen::MatrixXd c = mio::read_dense<double>(A()) * mio::read_dense<double>(B());
  for (const auto& e : refined["entries"])
    EXPECT_EQ(e["estimate"].get<double>(), c(e["row"].get<int>() - 1, e["col"].get<int>() - 1));
  // Threshold questions are refined too: the four planted entries, exact.
  const json above = run_json({"--method", "sketch", "--refine", "--threshold", "500", A(), B()});
  ASSERT_EQ(above["entries"].size(), 4u);
  for (const auto& e : above["entries"]) EXPECT_EQ(e["estimate"].get<double>(), c(e["row"].get<int>() - 1, e["col"].get<int>() - 1));
  const json unrefined = run_json({"--verify", "--no-refine", "-k", "4", A(), B()});
  EXPECT_TRUE(unrefined["refinement"].is_null());
  EXPECT_TRUE(unrefined["metrics"]["reported_recall"].is_null());
  const Result both = run({"--refine", "--no-refine", A(), B()});
  EXPECT_EQ(both.status, 64);
  EXPECT_NE(both.err.find("--refine"), std::string::npos) << both.err;
}

// A threshold answer that may miss entries suggests a sketch long enough to resolve the threshold:
// longer than the one that ran (b = 32768 here), even when no entry reached the threshold.
TEST_F(Cli, IncompleteOrUnreachableThresholdAnswersSayWhatWouldSettleThem) {
  const std::string a = work("a.mtx").string(), b = work("b.mtx").string();
  ASSERT_EQ(run({"generate", "sparse", "--m", "3000", "--k", "2000", "--p", "3000", "--integer", "--seed", "1", "--out-a", a,
                 "--out-b", b, "-q"}).status, 0);
  const Result r = run({"--method", "sketch", "--refine", "--threshold", "40", a, b});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string said = "a longer sketch (--buckets ";
  const auto at = r.err.find(said);
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_GT(std::stoll(r.err.substr(at + said.size())), 32768) << r.err;
  // A threshold so low that more candidates reach it than refinement evaluates: a usage error
  // naming --threshold, not an internal error.
  const Result low = run({"--method", "sketch", "--refine", "--threshold", "5", a, b});
  EXPECT_EQ(low.status, 64) << low.err;
  expect_one_line_error(low, {"--threshold", "too many entries", "to evaluate exactly"});
}

// X: 300 samples of 12 features; feature 3 follows feature 7 (r ~ 0.9), feature 10 is constant.
Eigen::MatrixXd correlated_samples() {
  std::mt19937_64 rng(17);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::bernoulli_distribution sparse(0.1);  // sparse enough that the coordinate file is read as sparse
  Eigen::MatrixXd X(300, 12);
  for (Eigen::Index i = 0; i < X.rows(); ++i)
    for (Eigen::Index f = 0; f < X.cols(); ++f) X(i, f) = sparse(rng) ? 5.0 + std::round(4 * normal(rng)) : 0.0;
  for (Eigen::Index i = 0; i < X.rows(); ++i) X(i, 3) = X(i, 7) + (sparse(rng) ? 2.0 : 0.0);
  X.col(10).setConstant(2.0);
  return X;
}

double pearson(const Eigen::VectorXd& x, const Eigen::VectorXd& y) {
  const Eigen::ArrayXd a = x.array() - x.mean(), b = y.array() - y.mean();
  return (a * b).sum() / std::sqrt((a * a).sum() * (b * b).sum());
}

void write_array(const fs::path& path, const Eigen::MatrixXd& M) {
  std::ofstream out(path);
  out << "%%MatrixMarket matrix array real general\n" << M.rows() << ' ' << M.cols() << '\n';
  out.precision(17);
  for (Eigen::Index j = 0; j < M.cols(); ++j)
    for (Eigen::Index i = 0; i < M.rows(); ++i) out << M(i, j) << '\n';
}

void write_coordinate(const fs::path& path, const Eigen::MatrixXd& M) {
  std::ofstream out(path);
  out << "%%MatrixMarket matrix coordinate real general\n" << M.rows() << ' ' << M.cols() << ' ' << (M.array() != 0).count() << '\n';
  out.precision(17);
  for (Eigen::Index j = 0; j < M.cols(); ++j)
    for (Eigen::Index i = 0; i < M.rows(); ++i)
      if (M(i, j) != 0) out << i + 1 << ' ' << j + 1 << ' ' << M(i, j) << '\n';
}

TEST_F(Cli, CorrelationReportsPearsonCorrelationsOfDenseAndSparseColumns) {
  const Eigen::MatrixXd X = correlated_samples();
  write_array(work("X.mtx"), X);
  write_coordinate(work("Xs.mtx"), X);
  for (const std::string file : {"X.mtx", "Xs.mtx"})
    for (const std::string method : {"exact", "sketch"}) {
      const std::string what = file + ", --method " + method;
      std::vector<std::string> args = {"--correlation", "--transpose-a", "--no-diagonal", "--method", method, "-k", "6"};
      if (method == "sketch") args.insert(args.end(), {"--refine", "--pad", "64"});
      args.insert(args.end(), {work(file).string(), work(file).string()});
      const json j = run_json(args);
      ASSERT_TRUE(j["correlation"].is_object()) << what;
      EXPECT_EQ(j["correlation"]["constant_rows_a"], 1) << what;
      EXPECT_EQ(j["correlation"]["constant_cols_b"], 1) << what;
      EXPECT_EQ(j["correlation"]["means_as_inner_index"].get<bool>(), file == "Xs.mtx") << what;
      ASSERT_EQ(j["entries"].size(), 6u) << what;
      // The strongest pair is (3, 7) and its mirror, r ~ 0.9; every value is Pearson's r.
      std::set<std::pair<int, int>> first_two;
      for (int r = 0; r < 2; ++r) first_two.insert({j["entries"][r]["row"].get<int>(), j["entries"][r]["col"].get<int>()});
      EXPECT_EQ(first_two, (std::set<std::pair<int, int>>{{4, 8}, {8, 4}})) << what;
      for (const auto& e : j["entries"]) {
        const int f = e["row"].get<int>() - 1, g = e["col"].get<int>() - 1;
        EXPECT_NE(f, g);
        EXPECT_NE(f, 10);
        EXPECT_NE(g, 10);
        EXPECT_NEAR(e["estimate"].get<double>(), pearson(X.col(f), X.col(g)), 1e-12) << what << " at " << f << "," << g;
      }
    }
  // Fewer than two samples have no correlation.
  write_array(work("one.mtx"), Eigen::MatrixXd::Ones(1, 4));
  const Result r = run({"--correlation", "--transpose-a", work("one.mtx").string(), work("one.mtx").string()});
  EXPECT_EQ(r.status, 64);
  EXPECT_NE(r.err.find("--correlation"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pagh_mm_test
