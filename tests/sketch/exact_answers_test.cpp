// Exact answers (sketch/exact_answers.hpp) against the definition on the whole product, and the
// method choice (sketch/method.hpp) against its cost model.
#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "sketch/exact_answers.hpp"
#include "sketch/method.hpp"
#include "sketch_test_support.hpp"

namespace pagh::test {
namespace {

// Every entry of C ranked by |value|, then row, then column: the definition.
std::vector<Entry> ranked_by_definition(const Eigen::MatrixXd& C) {
  std::vector<Entry> all;
  for (Eigen::Index j = 0; j < C.cols(); ++j)
    for (Eigen::Index i = 0; i < C.rows(); ++i) all.push_back(Entry{i, j, C(i, j), 0.0});
  std::sort(all.begin(), all.end(), [](const Entry& x, const Entry& y) {
    return std::make_tuple(-std::fabs(x.value), x.row, x.col) < std::make_tuple(-std::fabs(y.value), y.row, y.col);
  });
  return all;
}

void expect_same(const std::vector<Entry>& got, const std::vector<Entry>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t r = 0; r < got.size(); ++r) {
    EXPECT_EQ(got[r].row, want[r].row) << "rank " << r;
    EXPECT_EQ(got[r].col, want[r].col) << "rank " << r;
    EXPECT_EQ(got[r].value, want[r].value) << "rank " << r;
    EXPECT_EQ(got[r].spread, 0.0);
  }
}

// Small integers: many ties, exact in double.
Eigen::MatrixXd small_integers(int rows, int cols, double density, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> v(-3, 3);
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i)
      if (u(rng) < density) M(i, j) = v(rng);
  return M;
}

TEST(ExactAnswers, TopKAndThresholdMatchTheDefinition) {
  std::mt19937_64 rng(3);
  for (const double density : {1.0, 0.05}) {
    const Eigen::MatrixXd A = small_integers(300, 40, density, rng), B = small_integers(40, 2500, density, rng);
    const Eigen::MatrixXd C = A * B;
    const auto all = ranked_by_definition(C);
    const Eigen::SparseMatrix<double> As = A.sparseView(), Bs = B.sparseView();
    for (const std::size_t k : {std::size_t{1}, std::size_t{37}, std::size_t{5000}}) {
      const std::vector<Entry> want(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k));
      for (const int threads : {1, 2}) expect_same(exact_top_k(A, B, k, threads), want);
      expect_same(exact_top_k(As, Bs, k), want);
      expect_same(top_k_of(C, k), want);
    }
    for (const double threshold : {0.0, 1.0, 6.0}) {
      std::vector<Entry> want;
      for (const Entry& e : all)
        if (std::fabs(e.value) >= threshold) want.push_back(e);
      expect_same(exact_above(A, B, threshold, all.size(), 2), want);
      expect_same(exact_above(As, Bs, threshold, all.size()), want);
      expect_same(above_of(C, threshold, all.size()), want);
      if (want.size() > 1) {
        EXPECT_THROW(exact_above(A, B, threshold, want.size() - 1, 2), TooManyEntries);
        EXPECT_THROW(exact_above(As, Bs, threshold, want.size() - 1), TooManyEntries);
      }
    }
  }
}

TEST(ExactAnswers, RefusesBadArguments) {
  const Eigen::MatrixXd A = Eigen::MatrixXd::Ones(3, 4), B = Eigen::MatrixXd::Ones(5, 2);
  EXPECT_THROW(exact_top_k(A, B, 1), Error);
  EXPECT_THROW(exact_above(A, Eigen::MatrixXd::Ones(4, 2), -1.0, 10), Error);
  EXPECT_THROW(exact_above(A, Eigen::MatrixXd::Ones(4, 2), NAN, 10), Error);
}

ProductCounts dense_counts(std::int64_t m, std::int64_t K, std::int64_t p) {
  return ProductCounts{m, K, p, false, std::vector<double>(static_cast<std::size_t>(K), double(m)),
                       std::vector<double>(static_cast<std::size_t>(K), double(p))};
}

TEST(ExactAnswers, MethodFollowsTheCostModel) {
  const Throughput cpu = cpu_throughput(2, fwht::DType::f32);
  const SketchParams params{};
  // The model's own numbers decide: whichever estimate is smaller wins under automatic.
  for (const std::int64_t n : {64, 256, 1024, 4096, 16384}) {
    const MethodChoice c = choose_method(Method::automatic, dense_counts(n, n, n), params, cpu);
    EXPECT_EQ(c.method == Method::exact, c.exact_seconds <= c.sketch_seconds) << n;
    EXPECT_GT(c.exact_seconds, 0);
    EXPECT_GT(c.sketch_seconds, 0);
  }
  // Small products are exact, large dense ones sketched (GEMM grows as n^3, the sketch as n^2 log n).
  EXPECT_EQ(choose_method(Method::automatic, dense_counts(256, 256, 256), params, cpu).method, Method::exact);
  EXPECT_EQ(choose_method(Method::automatic, dense_counts(8192, 8192, 8192), params, cpu).method, Method::sketch);
  // Explicit requests are honoured; exact refuses what does not fit.
  EXPECT_EQ(choose_method(Method::sketch, dense_counts(64, 64, 64), params, cpu).method, Method::sketch);
  EXPECT_EQ(choose_method(Method::exact, dense_counts(8192, 8192, 8192), params, cpu).method, Method::exact);
  ProductCounts sparse{100000, 100000, 100000, true, std::vector<double>(100000, 1000.0), std::vector<double>(100000, 1000.0)};
  EXPECT_THROW(choose_method(Method::exact, sparse, params, cpu, 1e9), Error);
  EXPECT_EQ(choose_method(Method::automatic, sparse, params, cpu, 1e9).method, Method::sketch);
  // A sparse product with little work is exact.
  const std::int64_t n = 100000;
  ProductCounts graph{n, n, n, true, std::vector<double>(n, 5.0), std::vector<double>(n, 5.0)};
  EXPECT_EQ(choose_method(Method::automatic, graph, params, cpu, 1e9).method, Method::exact);
}

// Recall counts ties: C = all ones (every entry tied), any 3 entries are a correct top 3; and the
// sparse and dense verify agree.
TEST(ExactAnswers, VerifyRecallCountsTies) {
  const Eigen::MatrixXd A = Eigen::MatrixXd::Ones(40, 1), B = Eigen::MatrixXd::Ones(1, 30);
  const CompressedProduct c = compress(A, B, {.buckets = 64, .repetitions = 3, .seed = 5, .precision = fwht::DType::f64});
  const Eigen::MatrixXd C = A * B;
  const Metrics dense = verify(c, C, 3);
  const Metrics sparse = verify(c, Eigen::SparseMatrix<double>(C.sparseView()), 3);
  EXPECT_EQ(dense.top_k_recall, 1.0);
  EXPECT_EQ(sparse.top_k_recall, 1.0);
  EXPECT_EQ(dense.top_k_precision, 1.0);
  // A product with one large entry and ties below it: the top 1 is that entry alone.
  Eigen::MatrixXd A2 = Eigen::MatrixXd::Ones(40, 2), B2 = Eigen::MatrixXd::Zero(2, 30);
  B2.row(0).setOnes();
  A2.col(1).setZero();
  A2(7, 1) = 50, B2(1, 4) = 1;
  const CompressedProduct c2 = compress(A2, B2, {.buckets = 4096, .repetitions = 3, .seed = 5, .precision = fwht::DType::f64});
  EXPECT_EQ(verify(c2, A2 * B2, 1).top_k_recall, 1.0);
  EXPECT_EQ(c2.top_k(1)[0].row, 7);
}

// Subtracting the exact diagonal of a Gram product X^T X gives, bit for bit for integer inputs in
// f64, the sketch of the off-diagonal product (X^T X - D, sketched as [X^T | D] [X ; -I] with the
// same hash tables), and its noise drops by the diagonal's energy.
TEST(ExactAnswers, SubtractingTheDiagonalSketchesTheOffDiagonalProduct) {
  std::mt19937_64 rng(17);
  const Eigen::MatrixXd X = small_integers(90, 60, 0.3, rng);
  const Eigen::MatrixXd A = X.transpose(), B = X;
  const SketchParams params{.buckets = 256, .repetitions = 3, .seed = 4, .precision = fwht::DType::f64};
  for (const bool sparse : {false, true}) {
    CompressedProduct c = sparse ? compress(Eigen::SparseMatrix<double>(A.sparseView()), Eigen::SparseMatrix<double>(B.sparseView()), params)
                                 : compress(A, B, params);
    const std::vector<Entry> diagonal = sparse ? product_diagonal(Eigen::SparseMatrix<double>(A.sparseView()), Eigen::SparseMatrix<double>(B.sparseView()))
                                               : product_diagonal(A, B);
    Eigen::MatrixXd D = Eigen::MatrixXd::Zero(60, 60);
    for (const Entry& e : diagonal) {
      ASSERT_EQ(e.row, e.col);
      D(e.row, e.col) = e.value;
    }
    EXPECT_EQ(D.diagonal(), (A * B).diagonal());
    const double before = c.frobenius_estimate();
    c.subtract(diagonal);
    Eigen::MatrixXd A2(60, 90 + 60), B2(90 + 60, 60);
    A2 << A, D;
    B2 << B, -Eigen::MatrixXd::Identity(60, 60);
    const CompressedProduct off = compress(A2, B2, params);
    for (int t = 0; t < 3; ++t)
      for (std::int64_t h = 0; h < 256; ++h) ASSERT_EQ(c.sketch(t)[h], off.sketch(t)[h]) << "t " << t << " h " << h;
    EXPECT_EQ(c.frobenius_estimate(), off.frobenius_estimate());
    EXPECT_LT(c.frobenius_estimate(), before);
  }
  CompressedProduct c = compress(A, B, params);
  EXPECT_THROW(c.subtract(std::vector<Entry>{Entry{60, 0, 1.0, 0.0}}), Error);
  EXPECT_THROW(product_diagonal(Eigen::MatrixXd::Ones(3, 4), Eigen::MatrixXd::Ones(4, 5)), Error);
}

// The sparse diagonal: each row's sum in k order over the k where A(i, k) and B(k, i) are both
// stored, in parallel once B has 2^16 nonzeros; against the dense loop over every k (which adds
// only zeros besides), bit for bit, with rows that meet no k and an uncompressed B.
TEST(ExactAnswers, SparseProductDiagonalSumsEachRowInOrderAtAnySize) {
  std::mt19937_64 rng(29);
  std::normal_distribution<double> normal;
  for (const auto& [m, K, density] : {std::tuple<Eigen::Index, Eigen::Index, double>{1, 1, 1.0}, {40, 30, 0.2}, {3000, 2000, 0.02}}) {
    std::bernoulli_distribution stored(density);
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(m, K), B = Eigen::MatrixXd::Zero(K, m);
    for (Eigen::Index i = 0; i < A.size(); ++i)
      if (stored(rng)) A.data()[i] = normal(rng);
    for (Eigen::Index i = 0; i < B.size(); ++i)
      if (stored(rng)) B.data()[i] = normal(rng);
    Eigen::SparseMatrix<double> As = A.sparseView(), Bs = B.sparseView();
    if (m > 1) Bs.coeffRef(0, m - 1) += 0.0, Bs.coeffRef(K - 1, 0) += 0.0;  // inserting leaves B uncompressed
    const std::vector<Entry> diagonal = product_diagonal(As, Bs);
    std::size_t next = 0;
    for (Eigen::Index i = 0; i < m; ++i) {
      double expected = 0;
      for (Eigen::Index k = 0; k < K; ++k) expected += A(i, k) * B(k, i);
      if (expected == 0) continue;  // zero diagonal entries are left out
      ASSERT_LT(next, diagonal.size());
      ASSERT_EQ(diagonal[next].row, i);
      ASSERT_EQ(diagonal[next].col, i);
      ASSERT_EQ(diagonal[next].value, expected) << m << " x " << K << ", row " << i;
      ++next;
    }
    EXPECT_EQ(next, diagonal.size());
  }
}

// The dense diagonal goes through the rows in blocks, in parallel once A is large: every value is
// still the sum over k in ascending order, as one dot product of row i and column i computes it.
TEST(ExactAnswers, DenseProductDiagonalSumsEachRowInOrderAtAnySize) {
  std::mt19937_64 rng(23);
  std::normal_distribution<double> normal;
  for (const auto& [m, K] : {std::pair<Eigen::Index, Eigen::Index>{1, 1}, {33, 7}, {70, 20}, {700, 1600}}) {
    Eigen::MatrixXd A(m, K), B(K, m);
    for (Eigen::Index i = 0; i < A.size(); ++i) A.data()[i] = normal(rng);
    for (Eigen::Index i = 0; i < B.size(); ++i) B.data()[i] = normal(rng);
    const std::vector<Entry> diagonal = product_diagonal(A, B);
    ASSERT_EQ(static_cast<Eigen::Index>(diagonal.size()), m);
    for (Eigen::Index i = 0; i < m; ++i) {
      double expected = 0;
      for (Eigen::Index k = 0; k < K; ++k) expected += A(i, k) * B(k, i);
      ASSERT_EQ(diagonal[static_cast<std::size_t>(i)].row, i);
      ASSERT_EQ(diagonal[static_cast<std::size_t>(i)].col, i);
      ASSERT_EQ(diagonal[static_cast<std::size_t>(i)].value, expected) << m << " x " << K << ", row " << i;
    }
  }
}

}  // namespace
}  // namespace pagh::test
