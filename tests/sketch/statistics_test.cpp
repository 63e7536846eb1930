// The estimator's statistics over many fixed seeds: each single estimate (d = 1) is unbiased with
// variance (||AB||_F^2 - C_ij^2) / b for fully random tables (DESIGN.md §1), and sum_h c[h]^2 is an
// unbiased estimate of ||AB||_F^2.
//
// Thresholds: S = 3000 seeds. The mean of S estimates has standard deviation sqrt(V / S); we allow
// 5 of them (two-sided normal tail 6e-7 per entry, 64 entries). The sample variance of S draws of
// a variable with kurtosis kappa has relative standard deviation sqrt((kappa - 1) / S); a single
// estimate is a sum of a few signed collisions, kappa < 10 here, so 1.25 x V is > 4 standard
// deviations away. The seeds are fixed, so the test is deterministic.
#include "sketch_test_support.hpp"

namespace pagh::test {
namespace {

TEST(SketchStatistics, SingleEstimatesAreUnbiasedWithTheStatedVariance) {
  std::mt19937_64 rng(2024);
  const Eigen::MatrixXd A = gaussian(8, 5, rng), B = gaussian(5, 8, rng);
  const Eigen::MatrixXd C = A * B;
  const double frob2 = C.squaredNorm();
  const std::int64_t b = 64;
  const int S = 3000;
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(8, 8), sum2 = Eigen::MatrixXd::Zero(8, 8);
  double frob2_sum = 0;
  for (int s = 0; s < S; ++s) {
    const auto product = compress(A, B, {.buckets = b, .repetitions = 1, .seed = static_cast<std::uint64_t>(1000 + s),
                                         .precision = fwht::DType::f64, .threads = 1});
    const Eigen::MatrixXd est = product.decompress();
    sum += est;
    sum2 += est.cwiseProduct(est);
    frob2_sum += product.frobenius_estimate() * product.frobenius_estimate();
  }
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      const double V = (frob2 - C(i, j) * C(i, j)) / b;
      const double mean = sum(i, j) / S;
      const double var = sum2(i, j) / S - mean * mean;
      EXPECT_LE(std::fabs(mean - C(i, j)), 5 * std::sqrt(V / S)) << "bias at (" << i << ", " << j << ")";
      EXPECT_LE(var, 1.25 * V) << "variance at (" << i << ", " << j << ")";
      EXPECT_GE(var, 0.75 * V) << "variance at (" << i << ", " << j << ") is suspiciously small";
    }
  }
  // E[sum_h c_h^2] = ||C||_F^2: the mean over seeds within 5% (its relative sd here is about 1%).
  EXPECT_NEAR(frob2_sum / S, frob2, 0.05 * frob2);
}

}  // namespace
}  // namespace pagh::test
