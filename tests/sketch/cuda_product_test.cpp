// sketch-cuda's result object and exact verification against sketch-cpu: a CPU product uploaded to
// the device must answer every query (top-k, threshold, decompression, Frobenius) exactly as the
// host object does (the median arithmetic is the same), and the cuBLAS exact product and device
// metrics must match Eigen and pagh::verify. Every test skips when no CUDA device is usable.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "pagh/error.hpp"
#include "sketch/compress.hpp"
#include "sketch/cuda.hpp"
#include "sketch/sketch.hpp"
#include "sketch/verify.hpp"
#include "sketch_test_support.hpp"

namespace {

using pagh::CompressedProduct;
using pagh::Entry;
using pagh::cuda::DeviceProduct;

#define REQUIRE_CUDA_DEVICE()                                      \
  do {                                                             \
    std::string why;                                               \
    if (!pagh::cuda::available(&why)) GTEST_SKIP() << why;         \
  } while (0)

// Fresh inputs per run; PAGH_TEST_SEED=<seed> reproduces a run (the seed is printed on failure).
std::uint64_t run_seed() {
  static const std::uint64_t seed = []() -> std::uint64_t {
    if (const char* s = std::getenv("PAGH_TEST_SEED")) return std::strtoull(s, nullptr, 10);
    return (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  }();
  return seed;
}
std::mt19937_64 test_rng() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::mt19937_64(run_seed() ^ std::hash<std::string>{}(std::string(info->test_suite_name()) + "." + info->name()));
}
#define TRACE_SEED() SCOPED_TRACE("random seed " + std::to_string(run_seed()) + " (rerun with PAGH_TEST_SEED=<seed>)")

Eigen::MatrixXd integers(Eigen::Index rows, Eigen::Index cols, std::mt19937_64& rng, int range) {
  std::uniform_int_distribution<int> value(-range, range);
  Eigen::MatrixXd M(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i) M(i, j) = value(rng);
  return M;
}

// Small Gaussian background plus `planted` large entries of A B (one inner index each).
std::pair<Eigen::MatrixXd, Eigen::MatrixXd> planted(int m, int K, int p, int count, std::mt19937_64& rng) {
  Eigen::MatrixXd A = pagh::test::gaussian(m, K, rng, 0.3), B = pagh::test::gaussian(K, p, rng, 0.3);
  std::uniform_int_distribution<int> row(0, m - 1), col(0, p - 1), inner(0, K - 1);
  for (int c = 0; c < count; ++c) {
    const int k = inner(rng);
    A(row(rng), k) += 6.0 + c, B(k, col(rng)) += (c % 2 ? -6.0 : 6.0);
  }
  return {A, B};
}

// Entries must agree exactly: positions, order, values and error bars.
void expect_same_entries(const std::vector<Entry>& device, const std::vector<Entry>& host) {
  ASSERT_EQ(device.size(), host.size());
  for (std::size_t r = 0; r < host.size(); ++r) {
    const Entry &d = device[r], &h = host[r];
    ASSERT_TRUE(d.row == h.row && d.col == h.col && d.value == h.value && d.spread == h.spread)
        << "rank " << r << ": device (" << d.row << ", " << d.col << ") " << d.value << " +- " << d.spread << ", host ("
        << h.row << ", " << h.col << ") " << h.value << " +- " << h.spread;
  }
}

void expect_same_matrix(const Eigen::MatrixXd& device, const Eigen::MatrixXd& host) {
  ASSERT_EQ(device.rows(), host.rows());
  ASSERT_EQ(device.cols(), host.cols());
  for (Eigen::Index j = 0; j < host.cols(); ++j)
    for (Eigen::Index i = 0; i < host.rows(); ++i)
      ASSERT_EQ(device(i, j), host(i, j)) << "entry (" << i << ", " << j << ")";
}

// |value| of the r-th ranked entry: a threshold that ties (>=) at least r + 1 entries.
double magnitude_at_rank(const CompressedProduct& host, std::size_t r) {
  const auto top = host.top_k(r + 1);
  return std::fabs(top.back().value);
}

// Every query of the uploaded product against the host product.
void expect_device_answers_like_host(const CompressedProduct& host) {
  const DeviceProduct device = DeviceProduct::upload(host);
  EXPECT_EQ(device.rows(), host.rows());
  EXPECT_EQ(device.cols(), host.cols());
  EXPECT_EQ(device.buckets(), host.buckets());
  EXPECT_EQ(device.repetitions(), host.repetitions());
  EXPECT_EQ(device.frobenius_estimate(), host.frobenius_estimate());
  EXPECT_EQ(device.sigma(), host.sigma());
  const std::size_t all = static_cast<std::size_t>(host.rows() * host.cols());
  using pagh::Recovery;
  for (std::size_t k : {std::size_t{1}, std::size_t{7}, all / 3 + 1, all}) {
    SCOPED_TRACE("k = " + std::to_string(k));
    const auto oracle = host.top_k(k, Recovery::exhaustive);
    for (Recovery how : {Recovery::automatic, Recovery::heavy_buckets, Recovery::exhaustive}) {
      SCOPED_TRACE("recovery " + std::to_string(static_cast<int>(how)));
      expect_same_entries(device.top_k(k, how), oracle);
    }
  }
  for (std::size_t r : {std::size_t{0}, std::size_t{12}, all / 2}) {
    const double threshold = magnitude_at_rank(host, std::min(r, all - 1));
    SCOPED_TRACE("threshold " + std::to_string(threshold));
    const auto oracle = host.above(threshold, std::size_t{1} << 26, Recovery::exhaustive);
    for (Recovery how : {Recovery::automatic, Recovery::heavy_buckets, Recovery::exhaustive}) {
      SCOPED_TRACE("recovery " + std::to_string(static_cast<int>(how)));
      expect_same_entries(device.above(threshold, std::size_t{1} << 26, how), oracle);
    }
  }
  expect_same_matrix(device.decompress(), host.decompress());
}

TEST(CudaProduct, QueriesEqualTheHostForEveryRepetitionCountAndShape) {
  REQUIRE_CUDA_DEVICE();
  TRACE_SEED();
  auto rng = test_rng();
  struct Shape {
    int m, K, p;
  };
  // d = 1..4 take the register kernels, 8, 9 and 12 the general one.
  for (int d : {1, 2, 3, 4, 8, 9, 12}) {
    for (Shape s : {Shape{37, 21, 53}, Shape{64, 9, 17}, Shape{1, 5, 100}, Shape{100, 3, 1}}) {
      SCOPED_TRACE("d = " + std::to_string(d) + ", " + std::to_string(s.m) + " x " + std::to_string(s.K) + " x " +
                   std::to_string(s.p));
      const auto [A, B] = planted(s.m, s.K, s.p, 3, rng);
      expect_device_answers_like_host(pagh::compress(A, B, {.repetitions = d, .seed = rng()}));
    }
  }
}

// pagh::sketch with Backend::cuda (the one API pagh-mm uses): the CPU's sketches bit for bit on
// integer inputs, the queries answered on the device with the host's answers, and after subtract()
// on the host sketches that hold the subtraction.
TEST(CudaProduct, BackendCudaInParamsAnswersOnTheDeviceLikeTheCpu) {
  REQUIRE_CUDA_DEVICE();
  TRACE_SEED();
  auto rng = test_rng();
  ASSERT_TRUE(pagh::backend_available(pagh::Backend::cuda));
  const auto same = [](const std::vector<Entry>& got, const std::vector<Entry>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].row, want[i].row) << i;
      EXPECT_EQ(got[i].col, want[i].col) << i;
      EXPECT_EQ(got[i].value, want[i].value) << i;
    }
  };
  for (int round = 0; round < 3; ++round) {
    const Eigen::MatrixXd A = integers(60, 40, rng, 3), B = integers(40, 70, rng, 3);
    const std::uint64_t seed = rng();
    pagh::CompressedProduct gpu = pagh::sketch(A, B, {.repetitions = 3, .seed = seed, .backend = pagh::Backend::cuda});
    pagh::CompressedProduct cpu = pagh::sketch(A, B, {.repetitions = 3, .seed = seed, .backend = pagh::Backend::cpu});
    ASSERT_TRUE(gpu.on_device());
    ASSERT_FALSE(cpu.on_device());
    pagh::test::expect_same_sketches(gpu, cpu, "dense, round " + std::to_string(round));
    same(gpu.top_k(25), cpu.top_k(25));
    const double t = std::fabs(cpu.top_k(40).back().value);
    same(gpu.above(t), cpu.above(t));
    EXPECT_EQ(gpu.decompress(), cpu.decompress());
    const Entry known{3, 4, cpu.estimate(3, 4), 0.0};
    gpu.subtract(std::span<const Entry>(&known, 1));
    cpu.subtract(std::span<const Entry>(&known, 1));
    EXPECT_FALSE(gpu.on_device());
    same(gpu.top_k(25), cpu.top_k(25));
  }
  const auto [A, B] = pagh::test::sparse_integer_pair(50, 30, 40, 12, rng);
  const Eigen::SparseMatrix<double> As = A.sparseView(), Bs = B.sparseView();
  const pagh::CompressedProduct gpu = pagh::sketch(As, Bs, {.seed = 5, .backend = pagh::Backend::cuda});
  const pagh::CompressedProduct cpu = pagh::compress(As, Bs, {.seed = 5});
  ASSERT_TRUE(gpu.on_device());
  pagh::test::expect_same_sketches(gpu, cpu, "sparse");
  same(gpu.top_k(10), cpu.top_k(10));
}

TEST(CudaProduct, TiesAreBrokenByRowThenColumnLikeTheHost) {
  REQUIRE_CUDA_DEVICE();
  TRACE_SEED();
  auto rng = test_rng();
  // Small integers with a short sketch: many estimates repeat exactly (and most are 0), so the
  // order among equal magnitudes decides most ranks.
  for (int d : {2, 3, 4}) {
    SCOPED_TRACE("d = " + std::to_string(d));
    const auto [A, B] = pagh::test::sparse_integer_pair(40, 30, 50, 12, rng);
    expect_device_answers_like_host(pagh::compress(A, B, {.buckets = 64, .repetitions = d, .seed = rng()}));
  }
}

TEST(CudaProduct, KBeyondTheProductZeroKAndEmptyAnswers) {
  REQUIRE_CUDA_DEVICE();
  TRACE_SEED();
  auto rng = test_rng();
  const CompressedProduct host = pagh::compress(integers(13, 8, rng, 3), integers(8, 11, rng, 3), {.seed = rng()});
  const DeviceProduct device = DeviceProduct::upload(host);
  EXPECT_TRUE(device.top_k(0).empty());
  const auto everything = device.top_k(13 * 11 + 1000);
  EXPECT_EQ(everything.size(), std::size_t{13 * 11});
  expect_same_entries(everything, host.top_k(13 * 11 + 1000));
  const double above_all = 2 * std::fabs(everything.front().value) + 1;
  EXPECT_TRUE(device.above(above_all).empty());
  EXPECT_TRUE(device.above(std::numeric_limits<double>::infinity()).empty());
  expect_same_entries(device.above(0), host.above(0));  // every entry, row-major
  EXPECT_EQ(device.above(0).size(), std::size_t{13 * 11});
}

TEST(CudaProduct, RefusesTooManyEntriesOversizedDecompressionAndBadThresholds) {
  REQUIRE_CUDA_DEVICE();
  TRACE_SEED();
  auto rng = test_rng();
  const CompressedProduct host = pagh::compress(integers(20, 6, rng, 4), integers(6, 30, rng, 4), {.seed = rng()});
  const DeviceProduct device = DeviceProduct::upload(host);
  EXPECT_THROW(host.above(0, 599), pagh::TooManyEntries);
  try {
    device.above(0, 599);  // all 600 entries qualify
    ADD_FAILURE() << "above() returned more than max_entries";
  } catch (const pagh::TooManyEntries& e) {
    EXPECT_NE(std::string(e.what()).find("pagh::cuda::DeviceProduct::above"), std::string::npos) << e.what();
  }
  EXPECT_EQ(device.above(0, 600).size(), 600u);
  EXPECT_THROW(device.above(-1), pagh::Error);
  EXPECT_THROW(device.above(std::nan("")), pagh::Error);
  EXPECT_THROW(device.decompress(8 * 600 - 1), pagh::Error);
  EXPECT_EQ(device.decompress(8 * 600).size(), 600);
}

// Heavy-bucket recovery on the device at a size where the scan is far dearer: the automatic
// choice must take it, and its answers equal the device's exhaustive scan and the host's recovery.
TEST(CudaProduct, HeavyBucketRecoveryEqualsTheScanOnALargeSparseProduct) {
  REQUIRE_CUDA_DEVICE();
  TRACE_SEED();
  auto rng = test_rng();
  const int n = 30000, K = 30000;
  std::vector<Eigen::Triplet<double>> ta, tb;
  std::uniform_int_distribution<int> index(0, n - 1), value(-3, 3);
  for (int k = 0; k < K; ++k)
    for (int r = 0; r < 4; ++r) {
      ta.emplace_back(index(rng), k, value(rng));
      tb.emplace_back(k, index(rng), value(rng));
    }
  Eigen::SparseMatrix<double> A(n, K), B(K, n);
  A.setFromTriplets(ta.begin(), ta.end());
  B.setFromTriplets(tb.begin(), tb.end());
  for (int d : {3, 4}) {
    SCOPED_TRACE("d = " + std::to_string(d));
    const DeviceProduct device = pagh::cuda::compress(A, B, {.repetitions = d, .seed = rng()});
    const CompressedProduct host = device.to_host();
    for (std::size_t k : {std::size_t{20}, std::size_t{1000}}) {
      pagh::RecoveryStats stats;
      const auto fast = device.top_k(k, pagh::Recovery::automatic, &stats);
      EXPECT_FALSE(stats.exhaustive) << stats.reason;
      expect_same_entries(fast, device.top_k(k, pagh::Recovery::exhaustive));
      expect_same_entries(fast, host.top_k(k));
    }
    const double threshold = std::fabs(host.top_k(500).back().value);
    pagh::RecoveryStats stats;
    const auto fast = device.above(threshold, std::size_t{1} << 26, pagh::Recovery::automatic, &stats);
    EXPECT_FALSE(stats.exhaustive) << stats.reason;
    expect_same_entries(fast, device.above(threshold, std::size_t{1} << 26, pagh::Recovery::exhaustive));
    expect_same_entries(fast, host.above(threshold));
  }
}

TEST(CudaProduct, MoreRepetitionsThanTheKernelsHoldAnswerFromTheHost) {
  REQUIRE_CUDA_DEVICE();
  TRACE_SEED();
  auto rng = test_rng();
  const CompressedProduct host = pagh::compress(integers(5, 4, rng, 2), integers(4, 6, rng, 2), {.repetitions = 65, .seed = 3});
  const DeviceProduct device = DeviceProduct::upload(host);
  EXPECT_FALSE(device.queries_on_device());
  EXPECT_TRUE(DeviceProduct::upload(pagh::compress(integers(5, 4, rng, 2), integers(4, 6, rng, 2), {.repetitions = 64}))
                  .queries_on_device());
  expect_device_answers_like_host(host);
  EXPECT_THROW(device.above(0, 29), pagh::TooManyEntries);  // the host's limit applies as well
}

TEST(CudaProduct, ToHostRoundTripsTheWholeObject) {
  REQUIRE_CUDA_DEVICE();
  TRACE_SEED();
  auto rng = test_rng();
  const auto [A, B] = planted(45, 20, 33, 4, rng);
  const CompressedProduct host = pagh::compress(A, B, {.pad = 4, .repetitions = 5, .seed = rng()});
  const CompressedProduct back = DeviceProduct::upload(host).to_host();
  EXPECT_EQ(back.rows(), host.rows());
  EXPECT_EQ(back.cols(), host.cols());
  EXPECT_EQ(back.inner(), host.inner());
  EXPECT_EQ(back.buckets(), host.buckets());
  EXPECT_EQ(back.params().seed, host.params().seed);
  EXPECT_EQ(back.params().pad, host.params().pad);
  EXPECT_EQ(back.timings().transformed_k, host.timings().transformed_k);
  EXPECT_EQ(back.tables().bucket_a, host.tables().bucket_a);
  EXPECT_EQ(back.tables().bucket_b, host.tables().bucket_b);
  EXPECT_EQ(back.tables().sign_a, host.tables().sign_a);
  EXPECT_EQ(back.tables().sign_b, host.tables().sign_b);
  for (int t = 0; t < host.repetitions(); ++t) {
    const auto x = back.sketch(t), y = host.sketch(t);
    EXPECT_TRUE(std::equal(x.begin(), x.end(), y.begin(), y.end())) << "sketch " << t;
  }
  EXPECT_EQ(back.frobenius_estimate(), host.frobenius_estimate());
  // save/load of the round-tripped object answers like the original.
  const auto path = std::filesystem::temp_directory_path() / ("pagh_cuda_roundtrip_" + std::to_string(run_seed()) + ".pagh");
  back.save(path.string());
  const CompressedProduct loaded = CompressedProduct::load(path.string());
  std::filesystem::remove(path);
  expect_same_entries(loaded.top_k(50), host.top_k(50));
}

// More than one slab (kSlabEntries = 2^23 entries): candidates of the second slab must merge with
// the first's best k, and ties across the boundary must still go to the smaller index.
TEST(CudaProduct, StreamsProductsLargerThanOneSlab) {
  REQUIRE_CUDA_DEVICE();
  TRACE_SEED();
  auto rng = test_rng();
  const int m = 3000, p = 3000;  // 9.0M entries > 2^23
  // C = a b^T with a few +-1 entries in a and b spread over all rows: 36 entries of magnitude 1
  // (exactly recovered), in both slabs, plus a weaker rank-one layer (magnitude 0.5) elsewhere.
  Eigen::SparseMatrix<double> A(m, 2), B(2, p);
  std::uniform_int_distribution<int> row(0, m - 1), col(0, p - 1);
  std::vector<Eigen::Triplet<double>> ta, tb;
  for (int r = 0; r < 6; ++r) ta.emplace_back(r == 0 ? 1 : (r == 5 ? m - 2 : row(rng)), 0, r % 2 ? -1.0 : 1.0);
  for (int c = 0; c < 6; ++c) tb.emplace_back(0, col(rng), 1.0);
  for (int r = 0; r < 4; ++r) ta.emplace_back(row(rng), 1, 0.5), tb.emplace_back(1, col(rng), 1.0);
  A.setFromTriplets(ta.begin(), ta.end());
  B.setFromTriplets(tb.begin(), tb.end());
  const CompressedProduct host = pagh::compress(A, B, {.repetitions = 3, .seed = rng()});
  const DeviceProduct device = DeviceProduct::upload(host);
  for (std::size_t k : {std::size_t{5}, std::size_t{20}, std::size_t{60}, std::size_t{5000}}) {
    SCOPED_TRACE("k = " + std::to_string(k));
    expect_same_entries(device.top_k(k), host.top_k(k));
  }
  expect_same_entries(device.above(0.25), host.above(0.25));
  expect_same_entries(device.above(1e-300, std::size_t{1} << 26), host.above(1e-300));
}

// m = p = 16384 (268M entries): the device streams it; the answer must still be the host's.
TEST(CudaProduct, LargeSquareProductTopKAndThreshold) {
  REQUIRE_CUDA_DEVICE();
  TRACE_SEED();
  auto rng = test_rng();
  const int n = 16384;
  Eigen::SparseMatrix<double> A(n, 64), B(64, n);
  std::uniform_int_distribution<int> index(0, n - 1), value(1, 9);
  std::vector<Eigen::Triplet<double>> ta, tb;
  for (int k = 0; k < 64; ++k) {
    for (int e = 0; e < 3; ++e) ta.emplace_back(index(rng), k, value(rng));
    for (int e = 0; e < 3; ++e) tb.emplace_back(k, index(rng), -value(rng));
  }
  A.setFromTriplets(ta.begin(), ta.end());
  B.setFromTriplets(tb.begin(), tb.end());
  const CompressedProduct host = pagh::compress(A, B, {.repetitions = 3, .seed = rng()});
  const DeviceProduct device = DeviceProduct::upload(host);
  const auto top = device.top_k(100);
  expect_same_entries(top, host.top_k(100));
  const double threshold = std::fabs(top[40].value);
  expect_same_entries(device.above(threshold), host.above(threshold));
}

// ---- the exact product and verification -----------------------------------------------------

// |C_gpu - C_cpu| <= 2 K eps ||A||_F ||B||_F: both are sums of K products, each rounded.
void expect_product_close(const Eigen::MatrixXd& gpu, const Eigen::MatrixXd& cpu, Eigen::Index K, double scale) {
  ASSERT_EQ(gpu.rows(), cpu.rows());
  ASSERT_EQ(gpu.cols(), cpu.cols());
  const double tolerance = 2.0 * static_cast<double>(K) * std::numeric_limits<double>::epsilon() * scale;
  EXPECT_LE((gpu - cpu).cwiseAbs().maxCoeff(), tolerance);
}

TEST(CudaExact, DenseAndSparseProductsMatchEigen) {
  REQUIRE_CUDA_DEVICE();
  TRACE_SEED();
  auto rng = test_rng();
  const Eigen::MatrixXd A = pagh::test::gaussian(70, 130, rng), B = pagh::test::gaussian(130, 90, rng);
  double ms = -1;
  const Eigen::MatrixXd C = pagh::cuda::exact_product(A, B, &ms);
  expect_product_close(C, A * B, A.cols(), A.norm() * B.norm());
  EXPECT_GE(ms, 0);
  // Sparse integer operands: every partial sum is an integer, so the product is exact.
  const auto [Ai, Bi] = pagh::test::sparse_integer_pair(60, 80, 50, 40, rng);
  const Eigen::SparseMatrix<double> As = Ai.sparseView(), Bs = Bi.sparseView();
  ms = -1;
  expect_same_matrix(pagh::cuda::exact_product(As, Bs, &ms), Ai * Bi);
  EXPECT_GE(ms, 0);
  // Uncompressed sparse storage (after insert) is handled too.
  Eigen::SparseMatrix<double> U(4, 3);
  U.insert(2, 1) = 5;
  U.insert(0, 0) = -2;
  Eigen::SparseMatrix<double> V(3, 2);
  V.insert(1, 1) = 3;
  V.insert(0, 0) = 7;
  expect_same_matrix(pagh::cuda::exact_product(U, V), Eigen::MatrixXd(U) * Eigen::MatrixXd(V));
}

TEST(CudaExact, EmptyInnerDimensionAndMismatchedShapes) {
  REQUIRE_CUDA_DEVICE();
  const Eigen::MatrixXd A(5, 0), B(0, 4);
  expect_same_matrix(pagh::cuda::exact_product(A, B), Eigen::MatrixXd::Zero(5, 4));
  EXPECT_THROW(pagh::cuda::exact_product(Eigen::MatrixXd(3, 4), Eigen::MatrixXd(5, 2)), pagh::Error);
  EXPECT_THROW(pagh::cuda::exact_product(Eigen::SparseMatrix<double>(3, 4), Eigen::SparseMatrix<double>(5, 2)), pagh::Error);
}

void expect_metrics_match(const pagh::Metrics& gpu, const pagh::Metrics& cpu, bool exact_inputs) {
  // Sums of squares in another order: equal to rounding (relative 1e-12 is ~5000 ulp of slack for
  // sums of ~10^4 terms, far below any real disagreement).
  const auto near = [](double x, double y) { return std::fabs(x - y) <= 1e-12 * std::max(std::fabs(x), std::fabs(y)); };
  EXPECT_TRUE(near(gpu.frobenius_exact, cpu.frobenius_exact)) << gpu.frobenius_exact << " vs " << cpu.frobenius_exact;
  EXPECT_TRUE(near(gpu.relative_frobenius_error, cpu.relative_frobenius_error))
      << gpu.relative_frobenius_error << " vs " << cpu.relative_frobenius_error;
  EXPECT_TRUE(near(gpu.max_error_in_sigmas, cpu.max_error_in_sigmas)) << gpu.max_error_in_sigmas << " vs " << cpu.max_error_in_sigmas;
  EXPECT_EQ(gpu.frobenius_estimate, cpu.frobenius_estimate);
  EXPECT_EQ(gpu.top_k, cpu.top_k);
  if (exact_inputs) {
    EXPECT_EQ(gpu.max_abs_error, cpu.max_abs_error);
    EXPECT_EQ(gpu.top_k_recall, cpu.top_k_recall);
    EXPECT_EQ(gpu.top_k_precision, cpu.top_k_precision);
  } else {
    EXPECT_TRUE(near(gpu.max_abs_error, cpu.max_abs_error)) << gpu.max_abs_error << " vs " << cpu.max_abs_error;
  }
}

TEST(CudaVerify, MetricsMatchTheHostVerification) {
  REQUIRE_CUDA_DEVICE();
  TRACE_SEED();
  auto rng = test_rng();
  // Integer inputs: the exact product is exact on both sides, so the top-k sets must agree too.
  for (int d : {1, 3, 4}) {
    SCOPED_TRACE("d = " + std::to_string(d));
    const Eigen::MatrixXd A = integers(48, 25, rng, 3), B = integers(25, 70, rng, 3);
    const CompressedProduct host = pagh::compress(A, B, {.repetitions = d, .seed = rng()});
    const DeviceProduct device = DeviceProduct::upload(host);
    const Eigen::MatrixXd exact = A * B;
    for (std::size_t k : {std::size_t{0}, std::size_t{1}, std::size_t{10}, std::size_t{300}, std::size_t{48 * 70 + 9}}) {
      SCOPED_TRACE("k = " + std::to_string(k));
      const pagh::Metrics gpu = pagh::cuda::verify(device, A, B, k);
      expect_metrics_match(gpu, pagh::verify(host, exact, k), true);
      EXPECT_GE(gpu.exact_ms, 0);
    }
  }
  // Planted Gaussian inputs: within rounding; the planted entries dominate the top-k.
  const auto [A, B] = planted(64, 40, 56, 5, rng);
  const CompressedProduct host = pagh::compress(A, B, {.pad = 16, .seed = rng()});
  const pagh::Metrics gpu = pagh::cuda::verify(DeviceProduct::upload(host), A, B, 5);
  const pagh::Metrics cpu = pagh::verify(host, A * B, 5);
  expect_metrics_match(gpu, cpu, false);
  EXPECT_EQ(gpu.top_k_recall, cpu.top_k_recall);
}

TEST(CudaVerify, RefusesMismatchedShapes) {
  REQUIRE_CUDA_DEVICE();
  TRACE_SEED();
  auto rng = test_rng();
  const Eigen::MatrixXd A = integers(10, 6, rng, 2), B = integers(6, 12, rng, 2);
  const DeviceProduct device = DeviceProduct::upload(pagh::compress(A, B));
  EXPECT_THROW(pagh::cuda::verify(device, integers(11, 6, rng, 2), B, 3), pagh::Error);
  EXPECT_THROW(pagh::cuda::verify(device, A, integers(7, 12, rng, 2), 3), pagh::Error);
}

}  // namespace
