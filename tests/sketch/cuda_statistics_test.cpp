// A GPU product kept on the device (pagh::cuda::kept_on_device, what pagh::sketch returns with
// Backend::cuda): the statistics measured there (sketch_statistics.hpp) against the host's measure of
// the same values on fixed seeds, the noise model built from them, and the product's answers
// (Frobenius estimate, single entries, top-k, the noise model's verdicts) against the host copy's,
// all without a host copy of the d * b values until something reads them all. Skips without a GPU.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "pagh/error.hpp"
#include "sketch/compress.hpp"
#include "sketch/cuda.hpp"
#include "sketch/hashing.hpp"
#include "sketch/noise_model.hpp"
#include "sketch/sketch.hpp"
#include "sketch/sketch_statistics.hpp"
#include "sketch_test_support.hpp"

namespace {

using pagh::CompressedProduct;
using pagh::SketchStatistics;

#define REQUIRE_CUDA_DEVICE()                              \
  do {                                                     \
    std::string why;                                       \
    if (!pagh::cuda::available(&why)) GTEST_SKIP() << why; \
  } while (0)

Eigen::MatrixXd integers(int rows, int cols, std::mt19937_64& rng, int range) {
  std::uniform_int_distribution<int> value(-range, range);
  Eigen::MatrixXd M(rows, cols);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) M(i, j) = value(rng);
  return M;
}

void expect_same_entries(const std::vector<pagh::Entry>& device, const std::vector<pagh::Entry>& host) {
  ASSERT_EQ(device.size(), host.size());
  for (std::size_t i = 0; i < host.size(); ++i) {
    EXPECT_EQ(device[i].row, host[i].row) << "entry " << i;
    EXPECT_EQ(device[i].col, host[i].col) << "entry " << i;
    EXPECT_EQ(device[i].value, host[i].value) << "entry " << i;
    EXPECT_EQ(device[i].spread, host[i].spread) << "entry " << i;
  }
}

std::span<const double> all_values(const CompressedProduct& c) {
  return {c.sketch(0).data(), static_cast<std::size_t>(c.buckets()) * static_cast<std::size_t>(c.repetitions())};
}

// Equal where exact; `relative`: the sums of squares within that (another summation order).
void expect_same_statistics(const SketchStatistics& device, const SketchStatistics& host, double relative, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(device.values, host.values);
  EXPECT_EQ(device.largest, host.largest);
  EXPECT_EQ(device.finite, host.finite);
  EXPECT_EQ(device.counts, host.counts);
  EXPECT_EQ(device.below, host.below);
  const auto near = [&](double a, double b) {
    if (relative == 0) return a == b || (std::isnan(a) && std::isnan(b));
    return std::fabs(a - b) <= relative * std::fabs(b);
  };
  EXPECT_PRED2(near, device.energy, host.energy);
  EXPECT_PRED2(near, device.below_energy, host.below_energy);
  ASSERT_EQ(device.bin_energy.size(), host.bin_energy.size());
  for (std::size_t b = 0; b < host.bin_energy.size(); ++b) EXPECT_PRED2(near, device.bin_energy[b], host.bin_energy[b]) << "bin " << b;
}

void expect_same_model(const pagh::NoiseModel& device, const pagh::NoiseModel& host, double relative) {
  const auto near = [&](double a, double b) { return relative == 0 ? a == b : std::fabs(a - b) <= relative * std::fabs(b); };
  EXPECT_PRED2(near, device.sigma(), host.sigma());
  EXPECT_PRED2(near, device.tail_sigma(), host.tail_sigma());
  EXPECT_PRED2(near, device.half_width(0.95), host.half_width(0.95));
  EXPECT_PRED2(near, device.significance_threshold(0.05), host.significance_threshold(0.05));
  EXPECT_PRED2(near, device.agreement_threshold(0.05), host.agreement_threshold(0.05));
  EXPECT_EQ(device.buckets(), host.buckets());
}

// Integer inputs: every sum is exact, so the device's statistics and noise model equal the host's
// bit for bit; Gaussian inputs: the counts and the largest value equal, the sums within rounding.
TEST(DeviceStatistics, EqualTheHostsOnFixedSeeds) {
  REQUIRE_CUDA_DEVICE();
  for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u, 6u}) {
    std::mt19937_64 rng(seed);
    const bool exact = seed % 2 == 1;
    const Eigen::MatrixXd A = exact ? integers(300, 200, rng, 5) : pagh::test::gaussian(300, 200, rng);
    const Eigen::MatrixXd B = exact ? integers(200, 250, rng, 5) : pagh::test::gaussian(200, 250, rng);
    const pagh::SketchParams params{.repetitions = seed == 6 ? 5 : 3, .seed = seed};
    const pagh::cuda::DeviceProduct device = pagh::cuda::compress(A, B, params);
    const CompressedProduct host = device.to_host();
    const SketchStatistics on_device = device.statistics(), on_host = pagh::measure_sketch_values(all_values(host));
    const double relative = exact ? 0.0 : 1e-12;
    expect_same_statistics(on_device, on_host, relative, "seed " + std::to_string(seed));
    const double candidates = 300.0 * 250.0;
    expect_same_model(pagh::NoiseModel(on_device, params.repetitions, candidates), pagh::NoiseModel(host), exact ? 0.0 : 1e-9);
  }
}

// Values the bins leave out: all zero, not finite, squares beyond double's range.
TEST(DeviceStatistics, EdgeValuesAsOnTheHost) {
  REQUIRE_CUDA_DEVICE();
  const int d = 3;
  const std::int64_t b = 1024;
  const auto product_of = [&](std::vector<double> values) {
    return CompressedProduct(40, 50, 10, {.buckets = b, .repetitions = d}, pagh::draw_hash_tables(1, d, 40, 50, b), std::move(values));
  };
  const std::vector<double> zeros(static_cast<std::size_t>(d * b), 0.0);
  std::vector<double> with_inf = zeros, tiny_and_huge = zeros;
  with_inf[5] = 3.0, with_inf[77] = std::numeric_limits<double>::infinity();
  // One value 2^-70 below the largest (below every bin), and a subnormal.
  tiny_and_huge[3] = 1.0, tiny_and_huge[4] = 0x1p-70, tiny_and_huge[9] = -0x1p-1060, tiny_and_huge[10] = -0.75;
  for (const auto& values : {zeros, with_inf, tiny_and_huge}) {
    const CompressedProduct host = product_of(values);
    const SketchStatistics on_device = pagh::cuda::DeviceProduct::upload(host).statistics();
    const SketchStatistics on_host = pagh::measure_sketch_values(values);
    if (on_host.finite) {
      expect_same_statistics(on_device, on_host, 0.0, "values");
    } else {
      EXPECT_FALSE(on_device.finite);
      EXPECT_EQ(on_device.largest, on_host.largest);
    }
  }
  // Finite values whose squares overflow: the product measures its Frobenius estimate on the host.
  std::vector<double> huge = zeros;
  huge[1] = 1e200, huge[2000] = -3e199;
  const CompressedProduct host = product_of(huge);
  const CompressedProduct kept = pagh::cuda::kept_on_device(pagh::cuda::DeviceProduct::upload(host));
  EXPECT_EQ(kept.frobenius_estimate(), host.frobenius_estimate());
  EXPECT_TRUE(std::isfinite(kept.frobenius_estimate()));
}

// pagh::sketch with Backend::cuda keeps the sketches on the device: the Frobenius estimate, the noise
// model, single entries and top-k come without a host copy and equal the host copy's.
TEST(KeptOnDevice, AnswersLikeTheHostCopyWithoutIt) {
  REQUIRE_CUDA_DEVICE();
  for (std::uint64_t seed : {11u, 12u, 13u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const auto [A, B] = pagh::test::sparse_integer_pair(400, 300, 350, 2000, rng);
    const pagh::SketchParams params{.repetitions = 3, .seed = seed, .backend = pagh::Backend::cuda};
    const CompressedProduct kept = pagh::sketch(A, B, params);
    ASSERT_TRUE(kept.on_device());
    EXPECT_FALSE(kept.host_copy_made());
    const CompressedProduct host = pagh::compress(A, B, params);  // the CPU's: equal sketches for integer inputs
    EXPECT_EQ(kept.frobenius_estimate(), host.frobenius_estimate());
    const pagh::NoiseModel on_device(kept), on_host(host);
    expect_same_model(on_device, on_host, 0.0);
    const std::vector<pagh::Entry> top = kept.top_k(20);
    ASSERT_FALSE(top.empty());
    expect_same_entries(top, host.top_k(20));
    for (const pagh::Entry& e : top) {
      expect_same_entries({kept.entry(e.row, e.col)}, {host.entry(e.row, e.col)});
      const pagh::EntryAssessment a = on_device.assess(kept, e, 0.95, 0.05, 1.0), h = on_host.assess(host, e, 0.95, 0.05, 1.0);
      EXPECT_EQ(a.agreement, h.agreement);
      EXPECT_EQ(a.significant, h.significant);
      EXPECT_EQ(a.interval.low, h.interval.low);
      EXPECT_EQ(a.interval.high, h.interval.high);
    }
    EXPECT_THROW(kept.entry(400, 0), pagh::Error);
    EXPECT_FALSE(kept.host_copy_made());
    // A copy shares nothing made later; reading every value makes the host copy, equal to the CPU's.
    const CompressedProduct copy = kept;
    EXPECT_EQ(std::vector<double>(all_values(kept).begin(), all_values(kept).end()),
              std::vector<double>(all_values(host).begin(), all_values(host).end()));
    EXPECT_TRUE(kept.host_copy_made());
    EXPECT_FALSE(copy.host_copy_made());
    // subtract() on the device, bit for bit as on the host: non-integer values, shared buckets (the
    // order of `known` decides the rounding) and repeated entries.
    CompressedProduct minus = copy, host_minus = host;
    std::vector<pagh::Entry> known(top.begin(), top.begin() + 5);
    for (int i = 0; i < 350; ++i) known.push_back({i, (i * 7) % 350, 0.37 * i - 11.1, 0});
    for (int i = 0; i < 40; ++i) known.push_back({i, (i * 7) % 350, 1e-3 * i, 0});
    minus.subtract(known), host_minus.subtract(known);
    EXPECT_TRUE(minus.on_device());
    EXPECT_FALSE(minus.host_copy_made());
    // Non-integer values now: the device's sum of squares is in another order.
    EXPECT_NEAR(minus.frobenius_estimate(), host_minus.frobenius_estimate(), 1e-13 * host_minus.frobenius_estimate());
    expect_same_entries(minus.top_k(10), host_minus.top_k(10));
    for (int t = 0; t < 3; ++t)
      EXPECT_EQ(std::memcmp(minus.sketch(t).data(), host_minus.sketch(t).data(), host_minus.sketch(t).size_bytes()), 0) << "repetition " << t;
  }
}

}  // namespace
