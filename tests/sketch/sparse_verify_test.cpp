// verify() against a sparse exact product (no m x p array): every metric recomputed here from the
// definitions in sketch/verify.hpp, on a product with many exact ties.
#include <gtest/gtest.h>

#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "sketch/compress.hpp"
#include "sketch/verify.hpp"

namespace pagh {
namespace {

TEST(SparseVerify, MetricsFollowTheirDefinitions) {
  std::mt19937_64 rng(17);
  std::uniform_int_distribution<int> row(0, 299), col(0, 399), value(-2, 2);
  std::vector<Eigen::Triplet<double>> ta, tb;
  for (int k = 0; k < 200; ++k)
    for (int n = 0; n < 2; ++n) {
      ta.emplace_back(row(rng), k, value(rng));
      tb.emplace_back(k, col(rng), value(rng));
    }
  Eigen::SparseMatrix<double> A(300, 200), B(200, 400);
  A.setFromTriplets(ta.begin(), ta.end());
  B.setFromTriplets(tb.begin(), tb.end());
  const CompressedProduct c = compress(A, B, {.buckets = 1 << 10, .repetitions = 3, .seed = 4, .precision = fwht::DType::f64});
  const Eigen::SparseMatrix<double> exact = exact_sparse_product(A, B);
  const Eigen::MatrixXd dense = Eigen::MatrixXd(A) * Eigen::MatrixXd(B);
  EXPECT_EQ(product_work(A, B), [&] {
    double work = 0;
    for (int k = 0; k < 200; ++k) work += static_cast<double>(A.col(k).nonZeros()) * static_cast<double>(Eigen::SparseMatrix<double, Eigen::RowMajor>(B).row(k).nonZeros());
    return work;
  }());
  for (std::size_t k : {std::size_t{1}, std::size_t{10}, std::size_t{60}}) {
    const Metrics m = verify(c, exact, k);
    EXPECT_FALSE(m.all_entries);
    EXPECT_TRUE(std::isnan(m.relative_frobenius_error));
    EXPECT_NEAR(m.frobenius_exact, dense.norm(), 1e-12 * dense.norm());
    EXPECT_EQ(m.frobenius_estimate, c.frobenius_estimate());
    // max |error| over the nonzeros of C and the sketch's top-k.
    const auto top = c.top_k(k);
    double worst = 0;
    for (Eigen::Index j = 0; j < dense.cols(); ++j)
      for (Eigen::Index i = 0; i < dense.rows(); ++i)
        if (dense(i, j) != 0) worst = std::max(worst, std::fabs(c.estimate(i, j) - dense(i, j)));
    for (const Entry& e : top) worst = std::max(worst, std::fabs(e.value - dense(e.row, e.col)));
    EXPECT_EQ(m.max_abs_error, worst);
    EXPECT_DOUBLE_EQ(m.max_error_in_sigmas, worst / (dense.norm() / std::sqrt(1024.0)));
    // Tie-aware recall: a reported entry counts when its exact |value| reaches the k-th largest.
    std::vector<double> magnitudes(dense.data(), dense.data() + dense.size());
    for (double& v : magnitudes) v = std::fabs(v);
    std::sort(magnitudes.begin(), magnitudes.end(), std::greater<>());
    const double kth = magnitudes[k - 1];
    std::size_t hits = 0;
    for (const Entry& e : top) hits += std::fabs(dense(e.row, e.col)) >= kth;
    EXPECT_EQ(m.top_k, k);
    EXPECT_DOUBLE_EQ(m.top_k_recall, static_cast<double>(hits) / static_cast<double>(k)) << "k = " << k;
    EXPECT_DOUBLE_EQ(m.top_k_precision, static_cast<double>(hits) / static_cast<double>(top.size())) << "k = " << k;
  }
}

}  // namespace
}  // namespace pagh
