// sketch-cuda against sketch-cpu: the same hash tables bit for bit, the same sketches bit for bit on
// integer inputs (every path and precision), within rounding on floating inputs, streaming ==
// in-memory, the device-input plan == the host-input call, determinism, and errors. The wide
// kernel's own tests are in cuda_wide_test.cpp.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <algorithm>
#include <bit>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compress/paths/cluster_lists.hpp"
#include "hashing/device_tables.hpp"
#include "sketch/compress.hpp"
#include "sketch/cuda.hpp"
#include "sketch/hashing.hpp"
#include "cuda_test_support.hpp"

namespace {

using namespace pagh::cuda_test;

// Host-side (runs without a GPU): the cluster kernel's lists hold every entry exactly once, under the
// rank of its bucket bits [12, 12 + c), in index order, padded to warp instructions, with codes that
// decode to its slot, high bits, sign and collision rank.
TEST(SketchCudaHost, ClusterListsPartitionEveryEntryOnce) {
  const std::int64_t n = 3001, buckets = std::int64_t{1} << 17;
  const int d = 2;
  const pagh::HashTables tables = pagh::draw_hash_tables(7, d, n, 1, buckets);
  auto swizzle = [](std::uint32_t e) { return e ^ (((e >> 6) & 7u) << 2); };
  for (int log_cluster = 1; log_cluster <= 4; ++log_cluster) {
    SCOPED_TRACE("log_cluster " + std::to_string(log_cluster));
    pagh::cuda::ClusterLists lists;
    ASSERT_TRUE(pagh::cuda::build_cluster_lists(tables.bucket_a.data(), tables.sign_a.data(), n, d, log_cluster, lists));
    const int clusters = 1 << log_cluster;
    ASSERT_EQ(lists.start.size(), static_cast<std::size_t>(d * clusters + 1));
    for (int t = 0; t < d; ++t) {
      std::vector<int> seen(static_cast<std::size_t>(n), 0);
      for (int r = 0; r < clusters; ++r) {
        const auto begin = lists.start[static_cast<std::size_t>(t * clusters + r)], end = lists.start[static_cast<std::size_t>(t * clusters + r + 1)];
        ASSERT_EQ((end - begin) % 32, 0);
        std::int64_t previous = -1;
        for (auto q = begin; q < end; ++q) {
          const std::uint32_t i = lists.index[static_cast<std::size_t>(q)], c = lists.code[static_cast<std::size_t>(q)];
          if (i == ~0u) continue;  // padding, only at the end of a list
          ASSERT_GT(static_cast<std::int64_t>(i), previous);
          previous = i;
          ++seen[i];
          const std::uint32_t h = tables.h1(t, i);
          EXPECT_EQ(static_cast<int>((h >> 12) & static_cast<std::uint32_t>(clusters - 1)), r);
          EXPECT_EQ(c & 4095u, swizzle(h & 4095u));
          EXPECT_EQ(c & 0x07fff000u, h & 0x07fff000u);
          EXPECT_EQ((c >> 31) != 0, tables.s1(t, i) < 0);
          std::uint32_t rank = 0;  // earlier lanes of the same instruction on the same slot
          for (auto l = q - (q - begin) % 32; l < q; ++l)
            rank += lists.index[static_cast<std::size_t>(l)] != ~0u && (lists.code[static_cast<std::size_t>(l)] & 4095u) == (c & 4095u);
          EXPECT_EQ((c >> 27) & 15u, rank);
        }
      }
      for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[static_cast<std::size_t>(i)], 1) << "entry " << i;
    }
  }
}

TEST(SketchCuda, DeviceTablesEqualHostTables) {
  SKIP_WITHOUT_GPU();
  struct Case { std::uint64_t seed; int d; std::int64_t m, p, b; };
  // Odd word counts (offsets not multiples of 4), b = 1, b = 2^32 and empty sides.
  for (const Case c : {Case{1, 3, 600, 520, 8192}, Case{42, 5, 7, 3, 16}, Case{7, 2, 1, 1, 1}, Case{99, 4, 333, 0, 1 << 20},
                       Case{123456789, 2, 1001, 999, std::int64_t{1} << 32}}) {
    SCOPED_TRACE("seed " + std::to_string(c.seed) + " m " + std::to_string(c.m) + " p " + std::to_string(c.p));
    const pagh::HashTables host = pagh::draw_hash_tables(c.seed, c.d, c.m, c.p, c.b);
    const pagh::cuda::DeviceTables device = pagh::cuda::draw_device_tables(c.seed, c.d, c.m, c.p, c.b, nullptr);
    EXPECT_EQ(copy_back(device.bucket_a), host.bucket_a);
    EXPECT_EQ(copy_back(device.sign_a), host.sign_a);
    EXPECT_EQ(copy_back(device.bucket_b), host.bucket_b);
    EXPECT_EQ(copy_back(device.sign_b), host.sign_b);
  }
}

struct PathCase {
  const char* name;
  fwht::DType precision;
  fwht::Stabilization stabilization;
  fwht::Algorithm algorithm;
  fwht::Compute compute;
  bool force_general;
};

const PathCase kPaths[] = {
    {"fused f32", fwht::DType::f32, fwht::Stabilization::none, fwht::Algorithm::folklore, fwht::Compute::f32, false},
    {"general f32", fwht::DType::f32, fwht::Stabilization::none, fwht::Algorithm::folklore, fwht::Compute::f32, true},
    {"general f64", fwht::DType::f64, fwht::Stabilization::none, fwht::Algorithm::folklore, fwht::Compute::f32, false},
    {"f16 storage (wide kernel from b = 2^14)", fwht::DType::f16, fwht::Stabilization::none, fwht::Algorithm::folklore, fwht::Compute::storage, false},
    {"bf16 f32 (wide kernel from b = 2^14)", fwht::DType::bf16, fwht::Stabilization::none, fwht::Algorithm::folklore, fwht::Compute::f32, false},
    {"f16 f32 (wide kernel from b = 2^14)", fwht::DType::f16, fwht::Stabilization::none, fwht::Algorithm::folklore, fwht::Compute::f32, false},
    {"general f32 neumaier", fwht::DType::f32, fwht::Stabilization::neumaier, fwht::Algorithm::folklore, fwht::Compute::f32, false},
    {"general f64 kahan", fwht::DType::f64, fwht::Stabilization::kahan, fwht::Algorithm::folklore, fwht::Compute::f32, false},
    {"general f32 alman_rao", fwht::DType::f32, fwht::Stabilization::none, fwht::Algorithm::alman_rao, fwht::Compute::f32, false},
};

pagh::SketchParams params_for(const PathCase& c, int d, std::uint64_t seed) {
  pagh::SketchParams p;
  p.repetitions = d, p.seed = seed, p.precision = c.precision, p.stabilization = c.stabilization;
  p.algorithm = c.algorithm, p.compute = c.compute;
  return p;
}

TEST(SketchCuda, IntegerInputsBitIdenticalToCpuOnEveryPath) {
  SKIP_WITHOUT_GPU();
  TRACE_SEED();
  std::mt19937_64 rng(run_seed());
  // b = 8192 (2 slices, or a cluster of 2) with d = 3, b = 16384 (4) with d = 1, b = 65536
  // (clusters of 8, each folding 2 slices; one cluster of 16) with d = 2, b = 131072 (clusters
  // of 16 folding 2) with d = 1, and b = 262144 (the wide kernel's 16 slices in two code planes)
  // with d = 2; K is not a multiple of anything. A's density keeps its transformed values within
  // bf16's exact integers (|x| <= 256: about 4 sqrt(nonzeros) at most, so at most ~1700 nonzeros
  // per column; at m = 16400 a density of 0.2 gave 3280 and bf16 storage rounded on every path).
  struct Shape { std::int64_t m, K, p; int d; std::int64_t b; double density; };
  for (const Shape shape : {Shape{600, 203, 520, 3, 8192, 0.2}, Shape{1100, 150, 1500, 1, 16384, 0.2}, Shape{4100, 61, 300, 2, 65536, 0.2},
                            Shape{8200, 37, 200, 1, 131072, 0.2}, Shape{16400, 23, 200, 2, 262144, 0.1}}) {
    const Dense A = small_integers(shape.m, shape.K, shape.density, rng), B = small_integers(shape.K, shape.p, 0.2, rng);
    for (const PathCase& c : kPaths) {
      SCOPED_TRACE(std::string(c.name) + ", b = " + std::to_string(shape.b) + ", d = " + std::to_string(shape.d));
      const pagh::SketchParams params = params_for(c, shape.d, rng());
      const auto y = host_sketches(pagh::compress(A, B, params));
      // The fused path runs with each kernel: wide slices (b >= 2^14), slices (PathTuning wide =
      // false, cluster_log = 0) and every cluster size.
      // 16-bit storage takes only the wide kernel (the others: general path).
      const bool plain = !c.force_general && c.stabilization == fwht::Stabilization::none && c.algorithm == fwht::Algorithm::folklore;
      const bool sixteen = fwht::size_of(c.precision) == 2;
      for (const char* cluster : {"wide", "wide-permuted", "0", "1", "2", "3", "4"}) {
        const bool permuted = std::string(cluster) == "wide-permuted";
        const bool wide = permuted || std::string(cluster) == "wide";
        if (std::string(cluster) != "0" && !(plain && (c.precision == fwht::DType::f32 || (wide && sixteen)))) continue;
        if (wide && shape.b < 16384) continue;
        SCOPED_TRACE(std::string("cluster_log ") + cluster);
        pagh::cuda::PathTuning tuning{.wide = wide};
        if (!wide) tuning.cluster_log = std::stoi(cluster);
        if (wide) {  // staged lines (every shape here fits), or permuted lines in pieces of 7 k
          tuning.wide_piece = 7;
          tuning.wide_staged_lines = !permuted;
          EXPECT_NE(pagh::cuda::Compressor(shape.m, shape.K, shape.p, params, {.tuning = tuning}).path().find(permuted ? "permuted" : "staged"),
                    std::string::npos);
        }
        const auto gpu = pagh::cuda::compress(A, B, params, {.force_general = c.force_general, .tuning = tuning});
        EXPECT_EQ(gpu.buckets(), shape.b);
        const auto x = device_sketches(gpu);
        const std::int64_t at = first_difference(x, y);
        EXPECT_EQ(at, -1) << "first difference at " << at << ": gpu " << (at >= 0 ? x[at] : 0) << " cpu " << (at >= 0 ? y[at] : 0);
      }
    }
  }
}

TEST(SketchCuda, SmallSketchesTakeTheGeneralPathAndMatch) {
  SKIP_WITHOUT_GPU();
  TRACE_SEED();
  std::mt19937_64 rng(run_seed());
  for (const auto [m, K, p] : {std::array<std::int64_t, 3>{1, 1, 1}, {5, 17, 3}, {40, 64, 33}, {0, 5, 4}, {6, 0, 7}}) {
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(K) + " x " + std::to_string(p));
    const Dense A = small_integers(m, K, 0.5, rng), B = small_integers(K, p, 0.5, rng);
    const pagh::SketchParams params{.repetitions = 2, .seed = rng()};
    const auto x = device_sketches(pagh::cuda::compress(A, B, params)), y = host_sketches(pagh::compress(A, B, params));
    EXPECT_EQ(first_difference(x, y), -1);
  }
}

TEST(SketchCuda, FloatInputsAgreeWithinRounding) {
  SKIP_WITHOUT_GPU();
  TRACE_SEED();
  std::mt19937_64 rng(run_seed());
  const Dense A = gaussian(700, 300, rng), B = gaussian(300, 650, rng);
  const double eps = std::numeric_limits<float>::epsilon();
  for (bool general : {false, true}) {
    SCOPED_TRACE(general ? "general" : "fused");
    const pagh::SketchParams params{.repetitions = 2, .seed = rng()};
    const auto y = host_sketches(pagh::compress(A, B, params));
    const auto x = device_sketches(pagh::cuda::compress(A, B, params, {.force_general = general}));
    ASSERT_EQ(x.size(), y.size());
    double scale = 0, worst = 0;
    for (std::size_t i = 0; i < y.size(); ++i) scale = std::max(scale, std::fabs(y[i])), worst = std::max(worst, std::fabs(x[i] - y[i]));
    // Both sums of K products and log2 b butterfly stages round at each step (DESIGN.md §5).
    const double tolerance = 32 * std::log2(8192.0 * 300) * eps * scale;
    EXPECT_LE(worst, tolerance) << "max |gpu - cpu| " << worst << " vs max |c| " << scale;
    EXPECT_GT(worst, 0.0) << "floating inputs summed in another order should not agree in every bit (is the test vacuous?)";
  }
}

TEST(SketchCuda, ClusterAndSliceKernelsAgreeWithinRounding) {
  SKIP_WITHOUT_GPU();
  TRACE_SEED();
  std::mt19937_64 rng(run_seed());
  const Dense A = gaussian(2100, 90, rng), B = gaussian(90, 1900, rng);  // b = 32768: clusters of 8
  const pagh::SketchParams params{.repetitions = 2, .seed = rng()};
  const auto clusters = device_sketches(pagh::cuda::compress(A, B, params, {.tuning = {.wide = false, .cluster_log = 3}}));
  const auto slices = device_sketches(pagh::cuda::compress(A, B, params, {.tuning = {.wide = false, .cluster_log = 0}}));
  ASSERT_EQ(clusters.size(), slices.size());
  double scale = 0, worst = 0;
  for (std::size_t i = 0; i < slices.size(); ++i)
    scale = std::max(scale, std::fabs(slices[i])), worst = std::max(worst, std::fabs(clusters[i] - slices[i]));
  const double tolerance = 32 * std::log2(32768.0 * 90) * std::numeric_limits<float>::epsilon() * scale;
  EXPECT_LE(worst, tolerance) << "max |clusters - slices| " << worst << " vs max |c| " << scale;
  EXPECT_GT(worst, 0.0) << "the two kernels sum in different orders; identical bits would mean one path ran twice";
}

TEST(SketchCuda, StreamingEqualsInMemoryAndIsDeterministic) {
  SKIP_WITHOUT_GPU();
  TRACE_SEED();
  std::mt19937_64 rng(run_seed());
  const Dense A = gaussian(520, 257, rng), B = gaussian(257, 610, rng);
  for (const PathCase& c : {kPaths[0], kPaths[1], kPaths[2]}) {
    SCOPED_TRACE(c.name);
    const pagh::SketchParams params = params_for(c, 3, rng());
    const auto whole = device_sketches(pagh::cuda::compress(A, B, params, {.force_general = c.force_general}));
    const auto again = device_sketches(pagh::cuda::compress(A, B, params, {.force_general = c.force_general}));
    EXPECT_EQ(first_difference(whole, again), -1) << "two runs differ";
    // A budget of about 10 k per chunk: 26 chunks through both staging buffers.
    const std::size_t budget = 2 * 10 * (520 + 610) * (c.precision == fwht::DType::f64 ? 8 : 4);
    const auto streamed = device_sketches(pagh::cuda::compress(A, B, params, {.max_input_bytes = budget, .force_general = c.force_general}));
    EXPECT_EQ(first_difference(whole, streamed), -1) << "streaming changed the result";
  }
}

// The hybrid modes on sparse inputs: the same k take the same path as on the CPU; integer inputs
// give the CPU's sketches bit for bit in every mode, floating ones agree within rounding (the
// time-domain sums are associated by bucket runs, not in the CPU's order), are deterministic, and
// do not depend on the device-memory budget (direct batches are fixed by the inputs).
TEST(SketchCuda, SparseHybridModesMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  TRACE_SEED();
  std::mt19937_64 rng(run_seed());
  Dense ia = small_integers(700, 300, 0.02, rng), ib = small_integers(300, 800, 0.02, rng);
  ia.col(0).setConstant(3.0), ib.row(0).setConstant(-2.0);  // one dense k: transformed in automatic mode
  const Eigen::SparseMatrix<double> IA = ia.sparseView(), IB = ib.sparseView();
  Dense fa = gaussian(700, 300, rng), fb = gaussian(300, 800, rng);
  for (Dense* m : {&fa, &fb})
    for (Eigen::Index j = 0; j < m->cols(); ++j)
      for (Eigen::Index i = 0; i < m->rows(); ++i)
        if (std::uniform_real_distribution<double>(0, 1)(rng) > 0.03) (*m)(i, j) = 0;
  const Eigen::SparseMatrix<double> FA = fa.sparseView(), FB = fb.sparseView();
  const double eps = std::numeric_limits<double>::epsilon();
  for (const pagh::HybridMode mode : {pagh::HybridMode::automatic, pagh::HybridMode::always_direct, pagh::HybridMode::always_transform}) {
    SCOPED_TRACE("hybrid mode " + std::to_string(static_cast<int>(mode)));
    const pagh::SketchParams params{.repetitions = 2, .seed = rng(), .precision = fwht::DType::f64, .hybrid = mode};
    const auto cpu = pagh::compress(IA, IB, params);
    const auto gpu = pagh::cuda::compress(IA, IB, params);
    EXPECT_EQ(first_difference(device_sketches(gpu), host_sketches(cpu)), -1);
    EXPECT_EQ(gpu.timings().direct_k, cpu.timings().direct_k);
    EXPECT_EQ(gpu.timings().transformed_k, cpu.timings().transformed_k);
    if (mode == pagh::HybridMode::automatic) EXPECT_TRUE(gpu.timings().direct_k > 0 && gpu.timings().transformed_k > 0);

    const auto y = host_sketches(pagh::compress(FA, FB, params));
    const auto x = device_sketches(pagh::cuda::compress(FA, FB, params));
    double scale = 0, worst = 0;
    for (std::size_t i = 0; i < y.size(); ++i) scale = std::max(scale, std::fabs(y[i])), worst = std::max(worst, std::fabs(x[i] - y[i]));
    EXPECT_LE(worst, 64 * std::log2(8.0 * 800 * 300) * eps * scale) << "max |gpu - cpu| " << worst << " vs max |c| " << scale;
    EXPECT_EQ(first_difference(device_sketches(pagh::cuda::compress(FA, FB, params)), x), -1) << "not deterministic";
    EXPECT_EQ(first_difference(device_sketches(pagh::cuda::compress(FA, FB, params, {.max_input_bytes = 4000})), x), -1)
        << "the memory budget changed the result";
  }
}

TEST(SketchCuda, SparseInputsBitIdenticalToCpu) {
  SKIP_WITHOUT_GPU();
  TRACE_SEED();
  std::mt19937_64 rng(run_seed());
  Dense a = small_integers(900, 400, 0.01, rng), b = small_integers(400, 700, 0.01, rng);
  a.col(5).setZero(), b.row(9).setZero();  // empty k on both sides
  const Eigen::SparseMatrix<double> A = a.sparseView(), B = b.sparseView();
  const pagh::SketchParams params{.repetitions = 3, .seed = rng()};
  const auto cpu = pagh::compress(A, B, params);  // both take the time-domain path for thin k
  const auto gpu = pagh::cuda::compress(A, B, params);
  EXPECT_EQ(first_difference(device_sketches(gpu), host_sketches(cpu)), -1);
  EXPECT_EQ(gpu.timings().empty_k, cpu.timings().empty_k);
  EXPECT_EQ(gpu.timings().direct_k, cpu.timings().direct_k);
  EXPECT_EQ(gpu.timings().transformed_k, cpu.timings().transformed_k);
  EXPECT_GT(gpu.timings().direct_k, 0);
  // Streamed through chunks of a few hundred entries.
  const auto streamed = pagh::cuda::compress(A, B, params, {.max_input_bytes = 2000});
  EXPECT_EQ(first_difference(device_sketches(streamed), device_sketches(gpu)), -1);
}

TEST(SketchCuda, CompressorOnDeviceInputsEqualsHostCall) {
  SKIP_WITHOUT_GPU();
  TRACE_SEED();
  std::mt19937_64 rng(run_seed());
  const std::int64_t m = 530, K = 211, p = 600;
  const Eigen::MatrixXf A = gaussian(m, K, rng).cast<float>(), B = gaussian(K, p, rng).cast<float>();
  const pagh::SketchParams params{.repetitions = 2, .seed = rng()};
  const auto reference = device_sketches(pagh::cuda::compress(A, B, params));
  // A with lda > m and B with ldb > K, as cuBLAS allows; and B by rows.
  const std::int64_t lda = m + 3, ldb = K + 5;
  std::vector<float> a(static_cast<std::size_t>(lda * K), 7.0f), b(static_cast<std::size_t>(ldb * p), 7.0f), bt(static_cast<std::size_t>(K * p));
  for (std::int64_t k = 0; k < K; ++k)
    for (std::int64_t i = 0; i < m; ++i) a[static_cast<std::size_t>(i + k * lda)] = A(i, k);
  for (std::int64_t j = 0; j < p; ++j)
    for (std::int64_t k = 0; k < K; ++k) b[static_cast<std::size_t>(k + j * ldb)] = B(k, j), bt[static_cast<std::size_t>(k * p + j)] = B(k, j);
  float *da = nullptr, *db = nullptr, *dbt = nullptr;
  ASSERT_EQ(cudaMalloc(&da, a.size() * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&db, b.size() * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dbt, bt.size() * 4), cudaSuccess);
  cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dbt, bt.data(), bt.size() * 4, cudaMemcpyHostToDevice);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the plan's stream does not wait for pageable copies
  pagh::cuda::Compressor plan(m, K, p, params);
  EXPECT_EQ(plan.path().rfind("fused", 0), 0u) << plan.path();
  plan.execute(da, lda, db, ldb);
  EXPECT_EQ(first_difference(device_sketches(plan.product()), reference), -1);
  plan.execute_rows(da, lda, dbt, p);
  EXPECT_EQ(first_difference(device_sketches(plan.product()), reference), -1);
  EXPECT_THROW(plan.execute(da, m - 1, db, ldb), pagh::Error);
  EXPECT_THROW(plan.execute_rows(da, lda, dbt, p - 1), pagh::Error);
  // A plan for B by rows only: no transposition buffer (K x p floats less device memory), the same
  // sketches from execute_rows, and execute() refused.
  pagh::cuda::Compressor rows_only(m, K, p, params, {.b_by_rows_only = true});
  rows_only.execute_rows(da, lda, dbt, p);
  EXPECT_EQ(first_difference(device_sketches(rows_only.product()), reference), -1);
  EXPECT_THROW(rows_only.execute(da, lda, db, ldb), pagh::Error);
  cudaFree(da), cudaFree(db), cudaFree(dbt);
}

// The device memory a plan takes, by cudaMemGetInfo around its construction (the plan lives until
// the second reading).
template <class Make>
std::int64_t plan_bytes(Make make) {
  std::size_t before = 0, after = 0, total = 0;
  cudaMemGetInfo(&before, &total);
  const auto plan = make();
  cudaMemGetInfo(&after, &total);
  return static_cast<std::int64_t>(before) - static_cast<std::int64_t>(after);
}

TEST(SketchCuda, CompressorForRowsOnlySkipsTheTranspositionBuffer) {
  SKIP_WITHOUT_GPU();
  const std::int64_t K = 4096, p = 8192;  // B^T buffer: 128 MiB
  const auto columns = plan_bytes([&] { return pagh::cuda::Compressor(1, K, p, {}); });
  const auto rows = plan_bytes([&] { return pagh::cuda::Compressor(1, K, p, {}, {.b_by_rows_only = true}); });
  EXPECT_NEAR(static_cast<double>(columns - rows), static_cast<double>(K * p * 4), 8.0 * (1 << 20));
}

TEST(SketchCuda, PlantedEntriesAreFoundOnTheDevice) {
  SKIP_WITHOUT_GPU();
  TRACE_SEED();
  std::mt19937_64 rng(run_seed());
  const std::int64_t n = 512, K = 256;
  Dense A = 0.01 * gaussian(n, K, rng), B = 0.01 * gaussian(K, n, rng);
  const std::vector<std::array<std::int64_t, 2>> planted = {{3, 400}, {100, 7}, {511, 0}, {250, 250}};
  for (std::size_t q = 0; q < planted.size(); ++q) A(planted[q][0], static_cast<std::int64_t>(q)) = 30, B(static_cast<std::int64_t>(q), planted[q][1]) = 30;
  const auto gpu = pagh::cuda::compress(A, B, {.repetitions = 5, .seed = rng()});
  const auto top = gpu.to_host().top_k(2 * planted.size());  // recall within 2k: see sketch_test.cpp
  for (const auto& [i, j] : planted) {
    bool found = false;
    for (const pagh::Entry& e : top) found |= e.row == i && e.col == j;
    EXPECT_TRUE(found) << "planted (" << i << ", " << j << ") missing";
  }
}

TEST(SketchCuda, BadArgumentsThrow) {
  SKIP_WITHOUT_GPU();
  const Dense A = Dense::Ones(4, 5), B = Dense::Ones(6, 3);
  EXPECT_THROW(pagh::cuda::compress(A, B), pagh::Error);  // 5 != 6
  const Dense C = Dense::Ones(5, 3);
  EXPECT_THROW(pagh::cuda::compress(A, C, {.repetitions = 0}), pagh::Error);
  EXPECT_THROW(pagh::cuda::compress(A, C, {.precision = fwht::DType::i32}), pagh::Error);
  EXPECT_THROW(pagh::cuda::compress(A, C, {.buckets = 100}), pagh::Error);
  EXPECT_THROW(pagh::cuda::compress(A, C, {.stabilization = fwht::Stabilization::kahan, .algorithm = fwht::Algorithm::alman_rao}),
               pagh::Error);
  EXPECT_THROW(pagh::cuda::Compressor(-1, 2, 3, {}), pagh::Error);
}

}  // namespace
