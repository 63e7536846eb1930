// Synthetic workloads: determinism, the documented structure, and the planted entries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <Eigen/SVD>

#include "matrix_io/read.hpp"
#include "matrix_io/synthetic.hpp"
#include "pagh/error.hpp"

namespace mio = pagh::matrix_io;

TEST(MatrixIoSynthetic, PlantedDenseIsDeterministicAndPlantsExactly) {
  mio::PlantedDenseOptions o;
  o.seed = 11;
  const auto first = mio::planted_dense(o);
  const auto again = mio::planted_dense(o);
  EXPECT_EQ(first.a, again.a);
  EXPECT_EQ(first.b, again.b);
  o.seed = 12;
  EXPECT_NE(mio::planted_dense(o).a, first.a);
  ASSERT_EQ(first.a.rows(), 64);
  ASSERT_EQ(first.a.cols(), 96);
  ASSERT_EQ(first.b.cols(), 80);
  ASSERT_EQ(first.planted.size(), 4u);

  const Eigen::MatrixXd product = first.a * first.b;
  // Each planted entry owns an inner index t with a single nonzero in A's column t and B's row t
  // whose product is the planted value; so removing t changes only that one product entry by it.
  for (const auto& e : first.planted) {
    int owner = -1;
    for (int t = 0; t < 96; ++t)
      if ((first.a.col(t).array() != 0).count() == 1 && first.a(e.row, t) != 0 && first.b(t, e.col) != 0) owner = t;
    ASSERT_GE(owner, 0);
    EXPECT_EQ((first.b.row(owner).array() != 0).count(), 1);
    EXPECT_EQ(first.a(e.row, owner) * first.b(owner, e.col), e.value);
  }
  // With the default value (10x the background standard deviation) the planted entries are the
  // largest entries of the product, by a margin.
  std::vector<double> magnitudes(product.data(), product.data() + product.size());
  for (double& v : magnitudes) v = std::abs(v);
  std::sort(magnitudes.rbegin(), magnitudes.rend());
  double smallest_planted = INFINITY;
  for (const auto& e : first.planted) smallest_planted = std::min(smallest_planted, std::abs(product(e.row, e.col)));
  EXPECT_EQ(smallest_planted, magnitudes[3]);
  EXPECT_GT(magnitudes[3], 1.3 * magnitudes[4]);
}

TEST(MatrixIoSynthetic, PlantedDenseIntegerEntries) {
  mio::PlantedDenseOptions o;
  o.integer_entries = true;
  o.scale = 3;
  o.planted_value = 1000;
  const auto pair = mio::planted_dense(o);
  EXPECT_EQ(pair.a, pair.a.array().round().matrix());
  EXPECT_EQ(pair.b, pair.b.array().round().matrix());
  for (const auto& e : pair.planted) EXPECT_EQ(std::abs(e.value), 32.0 * 32.0);  // round(sqrt(1000))^2
  o.planted = 97;
  EXPECT_THROW(mio::planted_dense(o), pagh::Error);
}

TEST(MatrixIoSynthetic, SparseProductHasTheDocumentedStructure) {
  mio::SparseProductOptions o;
  o.m = 300, o.k = 500, o.p = 200, o.a_per_row = 3, o.b_per_col = 5, o.integer_entries = true;
  const auto pair = mio::sparse_product(o);
  EXPECT_EQ(pair.a.nonZeros(), 300 * 3);
  EXPECT_EQ(pair.b.nonZeros(), 200 * 5);
  const Eigen::MatrixXd a = pair.a;
  for (int i = 0; i < 300; ++i) EXPECT_EQ((a.row(i).array() != 0).count(), 3);
  for (int k = 0; k < pair.a.nonZeros(); ++k) {
    const double v = pair.a.valuePtr()[k];
    EXPECT_TRUE(v == std::round(v) && std::abs(v) >= 1 && std::abs(v) <= 3) << v;
  }
  const Eigen::SparseMatrix<double> product = (pair.a * pair.b).pruned();
  // Expected about m*p*a*b/k = 1800 nonzeros out of 60000.
  EXPECT_LT(product.nonZeros(), 3000);
  EXPECT_GT(product.nonZeros(), 1000);
  const auto again = mio::sparse_product(o);
  EXPECT_TRUE(again.a.isApprox(pair.a, 0.0) && again.b.isApprox(pair.b, 0.0));
}

TEST(MatrixIoSynthetic, LowRankPlusSparse) {
  mio::LowRankPlusSparseOptions o;
  o.m = 60, o.k = 50, o.p = 40, o.rank = 3, o.sparse_density = 0.0;
  const auto pure = mio::low_rank_plus_sparse(o);
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(pure.a);
  EXPECT_GT(svd.singularValues()(2), 1e-6 * svd.singularValues()(0));
  EXPECT_LT(svd.singularValues()(3), 1e-10 * svd.singularValues()(0));
  o.sparse_density = 0.02;
  const auto mixed = mio::low_rank_plus_sparse(o);
  EXPECT_EQ(mixed.a.rows(), 60);
  EXPECT_EQ(mixed.b.cols(), 40);
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd_mixed(mixed.a);
  EXPECT_GT(svd_mixed.singularValues()(3), 1e-3 * svd_mixed.singularValues()(0));  // sparse part adds rank
  EXPECT_EQ(mio::low_rank_plus_sparse(o).a, mixed.a);
}

TEST(MatrixIoSynthetic, SampleCovarianceFindsThePairs) {
  mio::SampleCovarianceOptions o;
  o.samples = 2000, o.features = 50, o.pairs = 3, o.correlation = 0.8;
  const auto pair = mio::sample_covariance(o);
  EXPECT_EQ(pair.a, pair.b.transpose());
  ASSERT_EQ(pair.planted.size(), 6u);
  Eigen::MatrixXd gram = pair.a * pair.b;
  gram.diagonal().setZero();
  // Planted off-diagonal entries are near correlation*samples = 1600 (sd ~ sqrt(2000) ~ 45) and are
  // the six largest off-diagonal entries.
  std::vector<double> off(gram.data(), gram.data() + gram.size());
  for (double& v : off) v = std::abs(v);
  std::sort(off.rbegin(), off.rend());
  for (const auto& e : pair.planted) {
    EXPECT_EQ(e.value, 1600.0);
    EXPECT_NEAR(gram(e.row, e.col), 1600.0, 300.0);
    EXPECT_GE(std::abs(gram(e.row, e.col)), off[5]);
  }
  EXPECT_GT(off[5], 3 * off[6]);
  o.pairs = 26;
  EXPECT_THROW(mio::sample_covariance(o), pagh::Error);
}

TEST(MatrixIoSynthetic, CommittedExamplesMatchTheGeneratorAndTheirDocumentation) {
  // data/A.mtx and data/B.mtx: regenerated by the command in data/README.md, and the product's
  // large entries listed there.
  mio::PlantedDenseOptions o;
  o.m = 64, o.k = 96, o.p = 80, o.planted = 4, o.integer_entries = true, o.scale = 3, o.seed = 2024;
  const auto pair = mio::planted_dense(o);
  const Eigen::MatrixXd a = mio::read_dense<double>(MATRIX_IO_DATA "/A.mtx");
  const Eigen::MatrixXd b = mio::read_dense<double>(MATRIX_IO_DATA "/B.mtx");
  EXPECT_EQ(a, pair.a);
  EXPECT_EQ(b, pair.b);
  Eigen::MatrixXd c = a * b;
  EXPECT_EQ(c(50, 45), 924);
  EXPECT_EQ(c(11, 7), -893);
  EXPECT_EQ(c(56, 32), -834);
  EXPECT_EQ(c(48, 1), 803);
  EXPECT_EQ(c(51, 12), 366);
  c(50, 45) = c(11, 7) = c(56, 32) = c(48, 1) = 0;
  EXPECT_EQ(c.cwiseAbs().maxCoeff(), 366);
}
