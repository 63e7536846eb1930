// The error bars and verify()'s metrics against their definitions, recomputed here from the raw
// sketches (CompressedProduct::sketch(t)) and the hash tables (tables()), never through the query
// code under test:
//   single_t(i, j)      = s1_t(i) s2_t(j) c_t[h1_t(i) XOR h2_t(j)]
//   value               = median_t single_t (the mean of the middle two for even d)
//   spread              = (max_t single_t - min_t single_t) / 2
//   frobenius_estimate  = sqrt(mean_t sum_h c_t[h]^2)
//   sigma               = frobenius_estimate / sqrt(b)
// for d = 1, 3, 4, 5 over many fixed seeds; and what those numbers mean statistically: sigma^2
// bounds the variance of a single estimate (the sketch's own sigma, not the exact one).
#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <vector>

#include "sketch/noise_model.hpp"
#include "sketch_test_support.hpp"

namespace pagh::test {
namespace {

// The d single estimates of (i, j), from the sketches and tables alone.
std::vector<double> singles(const CompressedProduct& c, std::int64_t i, std::int64_t j) {
  const HashTables& h = c.tables();
  std::vector<double> out;
  for (int t = 0; t < c.repetitions(); ++t) {
    const std::size_t bucket = static_cast<std::size_t>(h.bucket_a[t * h.m + i] ^ h.bucket_b[t * h.p + j]);
    out.push_back(double(h.sign_a[t * h.m + i]) * double(h.sign_b[t * h.p + j]) * c.sketch(t)[bucket]);
  }
  return out;
}

double median_by_definition(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t d = v.size();
  return d % 2 ? v[d / 2] : (v[d / 2 - 1] + v[d / 2]) / 2;
}

double half_range(const std::vector<double>& v) {
  return (*std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end())) / 2;
}

// sqrt(mean_t sum_h c_t[h]^2), accumulated in long double.
double frobenius_by_definition(const CompressedProduct& c) {
  long double total = 0;
  for (int t = 0; t < c.repetitions(); ++t)
    for (double x : c.sketch(t)) total += static_cast<long double>(x) * x;
  return static_cast<double>(std::sqrt(total / c.repetitions()));
}

Eigen::MatrixXd estimates_by_definition(const CompressedProduct& c) {
  Eigen::MatrixXd out(c.rows(), c.cols());
  for (std::int64_t i = 0; i < c.rows(); ++i)
    for (std::int64_t j = 0; j < c.cols(); ++j) out(i, j) = median_by_definition(singles(c, i, j));
  return out;
}

// Relative agreement for quantities computed by different summation orders (1e-12 is ~10^4 ulps:
// far below any definitional change, such as a factor sqrt(d), 2 or sqrt(b)).
void expect_close(double got, double want, const std::string& what) {
  EXPECT_LE(std::fabs(got - want), 1e-12 * std::max(1.0, std::fabs(want))) << what << ": " << got << " vs " << want;
}

TEST(ErrorBars, FrobeniusSigmaValueAndSpreadFollowTheirDefinitions) {
  // 4 values of d x 30 seeds, 12 x 9 products, b = 64: every entry of every product checked.
  for (int d : {1, 3, 4, 5}) {
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
      SCOPED_TRACE("d = " + std::to_string(d) + " seed " + std::to_string(seed));
      std::mt19937_64 rng(1000 * d + seed);
      const Eigen::MatrixXd A = gaussian(12, 7, rng), B = gaussian(7, 9, rng);
      const auto c = compress(A, B, {.buckets = 64, .repetitions = d, .seed = seed, .precision = fwht::DType::f64, .threads = 1});
      ASSERT_EQ(c.repetitions(), d);
      const double frobenius = frobenius_by_definition(c);
      ASSERT_GT(frobenius, 0);
      expect_close(c.frobenius_estimate(), frobenius, "frobenius_estimate");
      expect_close(c.sigma(), frobenius / std::sqrt(64.0), "sigma");
      for (std::int64_t i = 0; i < c.rows(); ++i)
        for (std::int64_t j = 0; j < c.cols(); ++j) {
          const auto s = singles(c, i, j);
          const Entry e = c.entry(i, j);
          ASSERT_EQ(e.row, i);
          ASSERT_EQ(e.col, j);
          ASSERT_EQ(e.value, median_by_definition(s)) << "(" << i << ", " << j << ")";
          ASSERT_EQ(e.spread, half_range(s)) << "(" << i << ", " << j << ")";
          ASSERT_EQ(c.estimate(i, j), e.value);
        }
      // The decompressed matrix and the entries that top_k and above return carry the same
      // numbers (which entries they return is checked by the recovery tests).
      const Eigen::MatrixXd expect = estimates_by_definition(c);
      ASSERT_TRUE(c.decompress() == expect) << "decompress() differs from the medians";
      for (const Entry& e : c.top_k(5)) {
        const auto s = singles(c, e.row, e.col);
        EXPECT_EQ(e.value, median_by_definition(s)) << "top_k (" << e.row << ", " << e.col << ")";
        EXPECT_EQ(e.spread, half_range(s)) << "top_k (" << e.row << ", " << e.col << ")";
      }
      for (const Entry& e : c.above(2 * c.sigma())) {
        const auto s = singles(c, e.row, e.col);
        EXPECT_EQ(e.value, median_by_definition(s)) << "above (" << e.row << ", " << e.col << ")";
        EXPECT_EQ(e.spread, half_range(s)) << "above (" << e.row << ", " << e.col << ")";
      }
    }
  }
}

// What sigma means: each single estimate X = s1 s2 c[h1 XOR h2] of C_ij has mean C_ij and variance
// (||C||_F^2 - C_ij^2) / b <= ||C||_F^2 / b (DESIGN.md §1), and sigma^2 estimates ||C||_F^2 / b
// without the exact product. Over S = 600 fixed seeds (d = 1, b = 64, 8 x 8 product), the mean
// over seeds and the 64 entries of (X - C_ij)^2 must lie within 35% of the mean of
// (||C||_F^2 - C_ij^2) / b, and the mean of sigma^2 within 10% of ||C||_F^2 / b. Relative standard
// deviations of those means: a single estimate has kurtosis < 10 here (statistics_test.cpp), so one
// entry's mean of S squared errors has relative sd < sqrt(9 / S) = 12%, and the average over 64
// entries is no worse: 35% is > 2.9 sd even if the 64 entries were perfectly correlated, and ~20
// sd for nearly independent entries (which they are: different collisions), a false-failure
// probability far below 1e-6. Per seed, sum_h c[h]^2 has relative sd ~ 55% (statistics_test.cpp:
// ~1% over 3000 seeds), so its mean over S has ~2.2%: 10% is 4.5 sd. The seeds are fixed, so the
// outcome is deterministic. sum_h c[h]^2 has relative sd ~ 1% per seed-mean (statistics_test.cpp): 10% is
// > 9 sd. sigma = ||C||_F / b would be 8x too small, ||C||_F (no division) 8x too large: both fail.
TEST(ErrorBars, SigmaSquaredIsTheVarianceBoundOfASingleEstimate) {
  std::mt19937_64 rng(31);
  const Eigen::MatrixXd A = gaussian(8, 5, rng), B = gaussian(5, 8, rng);
  const Eigen::MatrixXd C = A * B;
  const double frob2 = C.squaredNorm();
  const int S = 600;
  const double b = 64;
  double squared_error = 0, sigma2 = 0;
  for (int s = 0; s < S; ++s) {
    const auto c = compress(A, B, {.buckets = 64, .repetitions = 1, .seed = static_cast<std::uint64_t>(50000 + s),
                                   .precision = fwht::DType::f64, .threads = 1});
    sigma2 += c.sigma() * c.sigma();
    for (std::int64_t i = 0; i < 8; ++i)
      for (std::int64_t j = 0; j < 8; ++j) {
        const double x = singles(c, i, j)[0];
        squared_error += (x - C(i, j)) * (x - C(i, j));
      }
  }
  const double mean_squared_error = squared_error / (S * 64.0);
  const double stated = (frob2 - C.squaredNorm() / 64.0) / b;  // mean over entries of (||C||^2 - C_ij^2) / b
  EXPECT_NEAR(mean_squared_error, stated, 0.35 * stated);
  EXPECT_LE(mean_squared_error, 1.35 * frob2 / b) << "variance above the bound ||C||_F^2 / b";
  EXPECT_NEAR(sigma2 / S, frob2 / b, 0.10 * frob2 / b) << "sigma^2 is not an estimate of ||C||_F^2 / b";
}

// verify()'s metrics recomputed from their definitions (verify.hpp): the estimate matrix from the
// sketches, the exact top-k by |C| with ties by (row, column), the sketch's top-k by a brute-force
// sort of every estimate. Seeds and sizes give recalls strictly between 0 and 1 in some cases.
TEST(VerifyMetrics, RecomputedFromTheirDefinitions) {
  int partial_recalls = 0, below_low = 0, above_high = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed * 77);
    const int m = 14, K = 6, p = 11;
    const int d = seed % 2 ? 3 : 4;
    const Eigen::MatrixXd A = gaussian(m, K, rng), B = gaussian(K, p, rng);
    const Eigen::MatrixXd C = A * B;
    const auto c = compress(A, B, {.buckets = 128, .repetitions = d, .seed = seed, .precision = fwht::DType::f64, .threads = 1});
    const std::size_t k = 6 + seed % 5;
    const Metrics metrics = verify(c, C, k);
    const Eigen::MatrixXd est = estimates_by_definition(c);
    long double err2 = 0, exact2 = 0;
    double max_abs = 0;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < p; ++j) {
        const long double e = static_cast<long double>(est(i, j)) - C(i, j);
        err2 += e * e;
        exact2 += static_cast<long double>(C(i, j)) * C(i, j);
        max_abs = std::max(max_abs, std::fabs(est(i, j) - C(i, j)));
      }
    const double exact_norm = static_cast<double>(std::sqrt(exact2));
    expect_close(metrics.frobenius_exact, exact_norm, "frobenius_exact");
    expect_close(metrics.frobenius_estimate, frobenius_by_definition(c), "frobenius_estimate");
    expect_close(metrics.relative_frobenius_error, static_cast<double>(std::sqrt(err2)) / exact_norm, "relative_frobenius_error");
    EXPECT_EQ(metrics.max_abs_error, max_abs);
    expect_close(metrics.max_error_in_sigmas, max_abs / (exact_norm / std::sqrt(128.0)), "max_error_in_sigmas");
    // Top-k sets: the exact one and the sketch's, each by a full sort.
    auto top = [&](const Eigen::MatrixXd& M) {
      std::vector<std::tuple<double, int, int>> all;
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < p; ++j) all.emplace_back(-std::fabs(M(i, j)), i, j);
      std::sort(all.begin(), all.end());
      std::set<std::pair<int, int>> out;
      for (std::size_t q = 0; q < k; ++q) out.insert({std::get<1>(all[q]), std::get<2>(all[q])});
      return out;
    };
    const auto truth = top(C), found = top(est);
    std::size_t hits = 0;
    for (const auto& ij : found) hits += truth.count(ij);
    EXPECT_EQ(metrics.top_k, k);
    EXPECT_EQ(metrics.top_k_recall, double(hits) / double(k));
    EXPECT_EQ(metrics.top_k_precision, double(hits) / double(k));
    partial_recalls += hits > 0 && hits < k;
    // The intervals and flags of the reported entries (the sketch's top k, selected above the
    // (k+1)-th |estimate|), from the noise model's assessment of each.
    std::vector<Entry> reported = c.top_k(k + 1);
    const double cutoff = keep_top(reported, k);
    const NoiseModel noise(c);
    std::size_t covered = 0, significant = 0, false_significant = 0;
    for (const Entry& e : reported) {
      const EntryAssessment a = noise.assess(c, e, 0.95, 0.05, cutoff);
      const double truth = C(e.row, e.col);
      covered += truth >= a.interval.low && truth <= a.interval.high;
      below_low += truth < a.interval.low, above_high += truth > a.interval.high;
      if (!a.significant) continue;
      ++significant;
      false_significant += std::fabs(truth) <= a.half_width;
    }
    EXPECT_EQ(metrics.interval_coverage, double(covered) / double(reported.size()));
    EXPECT_EQ(metrics.significant, significant);
    EXPECT_EQ(metrics.false_significant, false_significant);
  }
  EXPECT_GE(partial_recalls, 3) << "the cases should exercise recalls strictly between 0 and 1";
  EXPECT_GT(below_low, 0) << "some exact values should lie below their intervals";
  EXPECT_GT(above_high, 0) << "and some above";
}

TEST(VerifyMetrics, KBeyondTheProductAndExactZero) {
  std::mt19937_64 rng(5);
  const Eigen::MatrixXd A = gaussian(3, 4, rng), B = gaussian(4, 2, rng);
  const Eigen::MatrixXd C = A * B;
  const auto c = compress(A, B, {.buckets = 1 << 12, .repetitions = 3, .seed = 3, .precision = fwht::DType::f64, .threads = 1});
  const Metrics all = verify(c, C, 100);
  EXPECT_EQ(all.top_k, 6u) << "k is clamped to m * p";
  EXPECT_EQ(all.top_k_recall, 1.0);
  EXPECT_EQ(all.top_k_precision, 1.0);
  // A zero product estimated as zero: error 0 (not NaN), every metric 0.
  const Eigen::MatrixXd Z = Eigen::MatrixXd::Zero(3, 4);
  const auto zero = compress(Z, B, {.seed = 3, .precision = fwht::DType::f64, .threads = 1});
  const Metrics m0 = verify(zero, Z * B, 2);
  EXPECT_EQ(m0.relative_frobenius_error, 0.0);
  EXPECT_EQ(m0.max_abs_error, 0.0);
  EXPECT_EQ(m0.max_error_in_sigmas, 0.0);
}

}  // namespace
}  // namespace pagh::test
