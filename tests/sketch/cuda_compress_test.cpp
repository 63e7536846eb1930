// sketch-cuda against sketch-cpu: the same hash tables bit for bit, the same sketches bit for bit on
// integer inputs (every path and precision), within rounding on floating inputs, streaming ==
// in-memory, the device-input plan == the host-input call, determinism, and errors.
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

#include "cuda/cluster_lists.hpp"
#include "cuda/device_tables.hpp"
#include "cuda/wide_layout.hpp"
#include "sketch/compress.hpp"
#include "sketch/cuda.hpp"
#include "sketch/hashing.hpp"

namespace {

using Dense = Eigen::MatrixXd;

std::uint64_t run_seed() {
  static const std::uint64_t seed = []() -> std::uint64_t {
    if (const char* s = std::getenv("PAGH_TEST_SEED")) return std::strtoull(s, nullptr, 10);
    return (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  }();
  return seed;
}
#define TRACE_SEED() SCOPED_TRACE("random seed " + std::to_string(run_seed()) + " (rerun with PAGH_TEST_SEED=<seed>)")

#define SKIP_WITHOUT_GPU()                                           \
  do {                                                               \
    std::string why;                                                 \
    if (!pagh::cuda::available(&why)) GTEST_SKIP() << "no usable CUDA device: " << why; \
  } while (0)

// Entries in {-1, 0, 1} with the given density: every sum the sketch forms is a small integer,
// exact in float, so any summation order gives the same bits.
Dense small_integers(std::int64_t rows, std::int64_t cols, double density, std::mt19937_64& rng) {
  std::bernoulli_distribution keep(density), negative(0.5);
  Dense m(rows, cols);
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i) m(i, j) = keep(rng) ? (negative(rng) ? -1.0 : 1.0) : 0.0;
  return m;
}

Dense gaussian(std::int64_t rows, std::int64_t cols, std::mt19937_64& rng) {
  std::normal_distribution<double> d(0.0, 1.0);
  Dense m(rows, cols);
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i) m(i, j) = d(rng);
  return m;
}

std::vector<double> device_sketches(const pagh::cuda::DeviceProduct& product) {
  std::vector<double> out(static_cast<std::size_t>(product.repetitions() * product.buckets()));
  EXPECT_EQ(cudaMemcpy(out.data(), product.device_sketches(), out.size() * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

std::vector<double> host_sketches(const pagh::CompressedProduct& product) {
  std::vector<double> out;
  for (int t = 0; t < product.repetitions(); ++t)
    for (double c : product.sketch(t)) out.push_back(c);
  return out;
}

// Index of the first difference, or -1.
std::int64_t first_difference(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) return 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (std::memcmp(&x[i], &y[i], sizeof(double)) != 0) return static_cast<std::int64_t>(i);
  return -1;
}

template <class T>
std::vector<T> copy_back(const pagh::cuda::DeviceArray<T>& a) {
  std::vector<T> out(a.size());
  if (!out.empty()) EXPECT_EQ(cudaMemcpy(out.data(), a.data(), a.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

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

// Host-side (runs without a GPU): the wide kernel's layout holds every entry exactly once, in warp
// w's parts when its slot (h mod 2^14) is in [1024 w, 1024 w + 1024): the first entry of each slot
// in the stores part (slots distinct), the others in the adds part after every lower-indexed entry
// of their slot and never twice on a slot in one instruction; codes carry the swizzled cell and
// the fold's parity per slice, padding a private dummy cell; sources carry the index and the sign.
TEST(SketchCudaHost, WideLayoutPlacesEveryEntryOnceInOrder) {
  const std::int64_t n = 20000, buckets = std::int64_t{1} << 17;  // about 1.2 entries per slot
  const int d = 2;
  const std::uint32_t pad_offset = 1u << 17;
  const pagh::HashTables tables = pagh::draw_hash_tables(11, d, n, 1, buckets);
  pagh::cuda::WideLayout layout;
  pagh::cuda::build_wide_layout(tables.bucket_a.data(), tables.sign_a.data(), n, d, pad_offset, layout);
  ASSERT_EQ(layout.source.size(), static_cast<std::size_t>(d * layout.padded));
  ASSERT_EQ(layout.code.size(), layout.source.size());
  ASSERT_EQ(layout.segment.size(), static_cast<std::size_t>(d * 33));
  ASSERT_EQ(layout.padded % (32 * pagh::cuda::kWideBatch), 0);
  const auto pad = pagh::cuda::kWidePad;
  const int part = 32 * pagh::cuda::kWideBatch;
  std::int64_t added = 0;
  for (int t = 0; t < d; ++t) {
    std::vector<int> seen(static_cast<std::size_t>(n), 0);
    std::vector<std::int64_t> last_index(16384, -1);  // per slot: the index added last
    const auto at = [&](std::int64_t j) { return static_cast<std::size_t>(t * layout.padded + j); };
    const int* segment = layout.segment.data() + t * 33;
    ASSERT_EQ(segment[0], 0);
    ASSERT_LE(segment[32], layout.padded);
    for (int w = 0; w < 16; ++w)
      for (int adds = 0; adds < 2; ++adds) {
        const std::int64_t begin = segment[2 * w + adds], end = segment[2 * w + adds + 1];
        ASSERT_EQ((end - begin) % part, 0) << "parts are whole batches";
        std::vector<std::uint32_t> slots_here;
        for (std::int64_t e = begin; e < end; ++e) {  // instruction order; position j stores it
          if (e % 32 == 0) slots_here.clear();
          const std::int64_t j = e - e % part + pagh::cuda::wide_stored_offset(static_cast<int>(e % part));
          const std::uint32_t src = layout.source[at(j)], c = layout.code[at(j)];
          if (src == pad) {
            EXPECT_EQ(c, pad_offset + 4 * static_cast<std::uint32_t>(32 * w + e % 32)) << "padding writes its own dummy cell of its lane";
            continue;
          }
          const std::uint32_t i = src & pad;
          ASSERT_LT(i, static_cast<std::uint32_t>(n));
          ++seen[i];
          const std::uint32_t h = tables.h1(t, i), slot = h & 16383u;
          EXPECT_EQ(static_cast<int>(slot >> 10), w);
          EXPECT_EQ((src >> 31) != 0, tables.s1(t, i) < 0);
          EXPECT_EQ(c & 0x3ffffu, 4 * pagh::cuda::wide_swizzle(slot));
          for (std::uint32_t f = 0; f < 8; ++f)
            EXPECT_EQ((c >> (18 + f)) & 1u, static_cast<std::uint32_t>(std::popcount(f & (h >> 14)) & 1)) << "slice " << f;
          EXPECT_EQ(std::count(slots_here.begin(), slots_here.end(), slot), 0) << "one instruction holds slot " << slot << " twice";
          slots_here.push_back(slot);
          if (adds == 0) {
            EXPECT_EQ(last_index[slot], -1) << "the stores part holds each slot once";
          } else {
            EXPECT_GE(last_index[slot], 0) << "an add before its slot's store";
            ++added;
          }
          EXPECT_GT(static_cast<std::int64_t>(i), last_index[slot]) << "a slot's entries in index order";
          last_index[slot] = i;
        }
      }
    for (std::int64_t j = segment[32]; j < layout.padded; ++j) EXPECT_EQ(layout.source[at(j)], pad);
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[static_cast<std::size_t>(i)], 1) << "entry " << i;
    // Store instructions rarely hit one bank twice (a conflict costs a shared-memory wavefront):
    // count the wavefronts of every store instruction, the most entries on one bank.
    std::int64_t instructions = 0, wavefronts = 0, gather_wavefronts = 0;
    for (int w = 0; w < 16; ++w)
      for (std::int64_t e0 = segment[2 * w]; e0 < segment[2 * w + 1]; e0 += 32) {
        int cells[32] = {}, gathers[32] = {};
        for (std::int64_t e = e0; e < e0 + 32; ++e) {
          const std::int64_t j = e - e % part + pagh::cuda::wide_stored_offset(static_cast<int>(e % part));
          if (layout.source[at(j)] == pad) continue;
          ++cells[(layout.code[at(j)] & 0x3ffffu) / 4 % 32], ++gathers[layout.source[at(j)] % 32];
        }
        ++instructions;
        wavefronts += std::max(1, *std::max_element(cells, cells + 32));
        gather_wavefronts += std::max(1, *std::max_element(gathers, gathers + 32));
      }
    // Measured for this layout: 1.36 and 2.3 wavefronts per instruction (stores in slot order: 2.06
    // and 3.3); the remaining conflicts are forced by uneven bank counts within a warp's slots.
    EXPECT_LE(2 * wavefronts, 3 * instructions) << instructions << " store instructions";
    EXPECT_LE(5 * gather_wavefronts, 13 * instructions) << instructions << " store instructions";
  }
  EXPECT_GT(added, 5000) << "the test needs slots with several entries";
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
  // (clusters of 8, each folding 2 slices; one cluster of 16) with d = 2, and b = 131072 (clusters
  // of 16 folding 2); K is not a multiple of anything.
  struct Shape { std::int64_t m, K, p; int d; std::int64_t b; };
  for (const Shape shape : {Shape{600, 203, 520, 3, 8192}, Shape{1100, 150, 1500, 1, 16384}, Shape{4100, 61, 300, 2, 65536},
                            Shape{8200, 37, 200, 1, 131072}}) {
    const Dense A = small_integers(shape.m, shape.K, 0.2, rng), B = small_integers(shape.K, shape.p, 0.2, rng);
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

// The wide kernel (the default for 2^14 <= b <= 2^17) against the CPU, the slice kernel and itself:
// within rounding of both, deterministic, independent of chunking (streaming) and of its pieces.
TEST(SketchCuda, WideKernelAgreesWithinRoundingAndIsDeterministic) {
  SKIP_WITHOUT_GPU();
  TRACE_SEED();
  std::mt19937_64 rng(run_seed());
  // b = 32768: two wide slices; lines of A have an odd length (the permutation's scalar path),
  // lines of B a multiple of 4 (its 16-byte path).
  const Dense A = gaussian(2101, 90, rng), B = gaussian(90, 1900, rng);
  const pagh::SketchParams params{.repetitions = 3, .seed = rng()};
  EXPECT_NE(pagh::cuda::Compressor(2101, 90, 1900, params).path().find("wide"), std::string::npos);
  const auto wide = device_sketches(pagh::cuda::compress(A, B, params));
  EXPECT_EQ(first_difference(wide, device_sketches(pagh::cuda::compress(A, B, params))), -1) << "two runs differ";
  const std::size_t budget = 2 * 10 * (2101 + 1900) * 4;  // chunks of about 10 k
  EXPECT_EQ(first_difference(wide, device_sketches(pagh::cuda::compress(A, B, params, {.max_input_bytes = budget}))), -1)
      << "streaming changed the result";
  EXPECT_EQ(first_difference(wide, device_sketches(pagh::cuda::compress(A, B, params, {.tuning = {.wide_piece = 4}}))), -1)
      << "pieces of 4 k changed the result";
  const auto slices = device_sketches(pagh::cuda::compress(A, B, params, {.tuning = {.wide = false, .cluster_log = 0}}));
  const auto cpu = host_sketches(pagh::compress(A, B, params));
  ASSERT_EQ(wide.size(), cpu.size());
  ASSERT_EQ(slices.size(), cpu.size());
  double scale = 0, worst_cpu = 0, worst_slices = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    scale = std::max(scale, std::fabs(cpu[i]));
    worst_cpu = std::max(worst_cpu, std::fabs(wide[i] - cpu[i]));
    worst_slices = std::max(worst_slices, std::fabs(wide[i] - slices[i]));
  }
  const double tolerance = 32 * std::log2(32768.0 * 90) * std::numeric_limits<float>::epsilon() * scale;
  EXPECT_LE(worst_cpu, tolerance) << "max |wide - cpu| " << worst_cpu << " vs max |c| " << scale;
  EXPECT_LE(worst_slices, tolerance) << "max |wide - slices| " << worst_slices << " vs max |c| " << scale;
  EXPECT_GT(worst_slices, 0.0) << "the two kernels transform in different orders; identical bits would mean one path ran twice";
}

// Lines staged in shared memory and gathered (short aligned lines, the default) give the permuted
// lines' sums bit for bit: the same entries in the same order. Also when the input streams in
// chunks (several launches), with 16-bit storage, and through a Compressor whose unaligned rows
// fall back to the permutation.
TEST(SketchCuda, WideKernelStagedLinesEqualPermutedLines) {
  SKIP_WITHOUT_GPU();
  TRACE_SEED();
  std::mt19937_64 rng(run_seed());
  const Dense A = gaussian(2100, 90, rng), B = gaussian(90, 1904, rng);  // b = 32768, lines of 4n entries
  for (const fwht::DType precision : {fwht::DType::f32, fwht::DType::bf16}) {
    SCOPED_TRACE(std::string(fwht::to_string(precision)));
    const pagh::SketchParams params{.repetitions = 3, .seed = rng(), .precision = precision};
    EXPECT_NE(pagh::cuda::Compressor(2100, 90, 1904, params).path().find("staged"), std::string::npos);
    const auto staged = device_sketches(pagh::cuda::compress(A, B, params));
    const std::size_t budget = 2 * 10 * (2100 + 1904) * 4;  // chunks of about 10 k
    EXPECT_EQ(first_difference(staged, device_sketches(pagh::cuda::compress(A, B, params, {.max_input_bytes = budget}))), -1)
        << "streaming changed the result";
    const pagh::cuda::DeviceOptions permute{.tuning = {.wide_staged_lines = false}};
    EXPECT_NE(pagh::cuda::Compressor(2100, 90, 1904, params, permute).path().find("permuted"), std::string::npos);
    const auto permuted = device_sketches(pagh::cuda::compress(A, B, params, permute));
    EXPECT_EQ(first_difference(staged, permuted), -1) << "staged and permuted lines differ";
    if (precision == fwht::DType::f32) {  // lines of 8192 + 4100 entries: the staged kernel's shallow rings
      const Dense A2 = gaussian(8192, 40, rng), B2 = gaussian(40, 4100, rng);  // b = 65536
      EXPECT_NE(pagh::cuda::Compressor(8192, 40, 4100, params).path().find("staged"), std::string::npos);
      const auto staged2 = device_sketches(pagh::cuda::compress(A2, B2, params));
      const auto permuted2 = device_sketches(pagh::cuda::compress(A2, B2, params, permute));
      EXPECT_EQ(first_difference(staged2, permuted2), -1) << "staged (shallow rings) and permuted lines differ";
    }
    // Device inputs: A with lda = m + 1 (unaligned columns: the permutation) and with lda = m + 4.
    const std::int64_t m = 2100, K = 90, p = 1904;
    std::vector<float> bt(static_cast<std::size_t>(K * p));
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t j = 0; j < p; ++j) bt[static_cast<std::size_t>(k * p + j)] = static_cast<float>(B(k, j));
    float* dbt = nullptr;
    ASSERT_EQ(cudaMalloc(&dbt, bt.size() * 4), cudaSuccess);
    cudaMemcpy(dbt, bt.data(), bt.size() * 4, cudaMemcpyHostToDevice);
    pagh::cuda::Compressor plan(m, K, p, params, {.b_by_rows_only = true});
    for (const std::int64_t lda : {m + 1, m + 4}) {
      SCOPED_TRACE("lda " + std::to_string(lda));
      std::vector<float> a(static_cast<std::size_t>(lda * K), 7.0f);
      for (std::int64_t k = 0; k < K; ++k)
        for (std::int64_t i = 0; i < m; ++i) a[static_cast<std::size_t>(i + k * lda)] = static_cast<float>(A(i, k));
      float* da = nullptr;
      ASSERT_EQ(cudaMalloc(&da, a.size() * 4), cudaSuccess);
      cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // pageable copies may return before they land
      plan.execute_rows(da, lda, dbt, p);
      EXPECT_EQ(first_difference(device_sketches(plan.product()), staged), -1);
      cudaFree(da);
    }
    cudaFree(dbt);
  }
}

// 16-bit storage on the wide kernel, compute f32 and compute = storage: the bucket sums and the
// transformed values (and with compute = storage every butterfly) are rounded to f16/bf16 as on
// the CPU, but a folded slice rounds the sum of its b / 2^14 folded buckets (the CPU rounds each
// bucket) and the stages run in another order, so values near a rounding boundary land one 16-bit
// ulp apart: within a few units of the format's rounding of max |c|, deterministic.
TEST(SketchCuda, WideKernelWith16BitStorageAgreesWithinRounding) {
  SKIP_WITHOUT_GPU();
  TRACE_SEED();
  std::mt19937_64 rng(run_seed());
  const Dense A = gaussian(2101, 90, rng), B = gaussian(90, 1900, rng);  // b = 32768: two folded slices
  for (const fwht::DType precision : {fwht::DType::f16, fwht::DType::bf16})
    for (const fwht::Compute compute : {fwht::Compute::f32, fwht::Compute::storage}) {
      SCOPED_TRACE(std::string(fwht::to_string(precision)) + ", compute " + std::string(fwht::to_string(compute)));
      const pagh::SketchParams params{.repetitions = 2, .seed = rng(), .precision = precision, .compute = compute};
      EXPECT_NE(pagh::cuda::Compressor(2101, 90, 1900, params).path().find("wide"), std::string::npos);
      const auto wide = device_sketches(pagh::cuda::compress(A, B, params));
      EXPECT_EQ(first_difference(wide, device_sketches(pagh::cuda::compress(A, B, params))), -1) << "two runs differ";
      const auto cpu = host_sketches(pagh::compress(A, B, params));
      ASSERT_EQ(wide.size(), cpu.size());
      double scale = 0, worst = 0;
      for (std::size_t i = 0; i < cpu.size(); ++i) scale = std::max(scale, std::fabs(cpu[i])), worst = std::max(worst, std::fabs(wide[i] - cpu[i]));
      const double eps = precision == fwht::DType::f16 ? 0x1p-10 : 0x1p-7;  // the format's machine epsilon
      // The rounding is really applied: the f32 sketch of the same seed differs by more than f32 rounding.
      pagh::SketchParams f32_params = params;
      f32_params.precision = fwht::DType::f32, f32_params.compute = fwht::Compute::f32;
      const auto f32 = device_sketches(pagh::cuda::compress(A, B, f32_params));
      double apart = 0;
      for (std::size_t i = 0; i < cpu.size(); ++i) apart = std::max(apart, std::fabs(wide[i] - f32[i]));
      // Compute f32 rounds twice per value (bucket sum, transformed value): one eps of max |c|
      // (measured 0.21-0.30 over six seeds). Compute = storage rounds at each of the 15 stages, in
      // another order than the CPU: log2(b) / 2 eps (measured 1.3-1.7 eps).
      const bool each_op = compute == fwht::Compute::storage;
      const double tolerance = (each_op ? 15.0 / 2 : 1.0) * eps * scale;
      EXPECT_LE(worst, tolerance) << "max |wide - cpu| " << worst << " vs max |c| " << scale;
      EXPECT_GT(worst, 0.0) << "folded buckets round differently; identical bits would mean the CPU path ran";
      const double f32_rounding = 32 * std::log2(32768.0 * 90) * std::numeric_limits<float>::epsilon() * scale;
      EXPECT_GT(apart, f32_rounding);
      if (each_op) {  // and per butterfly: not the compute-f32 result of the same storage
        pagh::SketchParams f32_compute = params;
        f32_compute.compute = fwht::Compute::f32;
        const auto rounded_once = device_sketches(pagh::cuda::compress(A, B, f32_compute));
        double between = 0;
        for (std::size_t i = 0; i < cpu.size(); ++i) between = std::max(between, std::fabs(wide[i] - rounded_once[i]));
        EXPECT_GT(between, f32_rounding) << "compute = storage gave the compute-f32 sketch";
      }
    }
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
