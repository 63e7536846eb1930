// The wide sketch kernel (wide_sketch.cu, the default for 2^14 <= b <= 2^18): its layout built on
// the host, and on the device against the CPU, the slice kernel and itself.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compress/path_choice.hpp"
#include "compress/paths/wide_layout.hpp"
#include "cuda_test_support.hpp"
#include "sketch/compress.hpp"
#include "sketch/cuda.hpp"
#include "sketch/hashing.hpp"

namespace {

using namespace pagh::cuda_test;

// Host-side (runs without a GPU): the wide kernel's layout holds every entry exactly once, in warp
// w's parts when its slot (h mod 2^14) is in [1024 w, 1024 w + 1024): the first entry of each slot
// in the stores part (slots distinct), the others in the adds part after every lower-indexed entry
// of their slot and never twice on a slot in one instruction; codes carry the swizzled cell and
// the fold's parity per slice (16 slices at b = 2^18: two code planes of 8, equal but for those
// bits), padding a private dummy cell; sources carry the index and the sign.
TEST(SketchCudaHost, WideLayoutPlacesEveryEntryOnceInOrder) {
  const std::int64_t n = 20000, buckets = std::int64_t{1} << 18;  // about 1.2 entries per slot
  const int d = 2, planes = 2;
  const std::uint32_t pad_offset = 1u << 17;
  const pagh::HashTables tables = pagh::draw_hash_tables(11, d, n, 1, buckets);
  pagh::cuda::WideLayout layout;
  ASSERT_EQ(pagh::cuda::wide_code_planes(18), planes);
  ASSERT_EQ(pagh::cuda::wide_code_planes(17), 1);
  pagh::cuda::build_wide_layout(tables.bucket_a.data(), tables.sign_a.data(), n, d, 18, pad_offset, layout);
  ASSERT_EQ(layout.source.size(), static_cast<std::size_t>(d * layout.padded));
  ASSERT_EQ(layout.code.size(), static_cast<std::size_t>(planes) * layout.source.size());
  const auto plane_code = [&](int plane, std::size_t at) { return layout.code[static_cast<std::size_t>(plane) * layout.source.size() + at]; };
  std::int64_t high_slices = 0;  // entries whose sign differs between slice f and f + 8 somewhere
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
            EXPECT_EQ(plane_code(1, at(j)), c);
            continue;
          }
          const std::uint32_t i = src & pad;
          ASSERT_LT(i, static_cast<std::uint32_t>(n));
          ++seen[i];
          const std::uint32_t h = tables.h1(t, i), slot = h & 16383u;
          EXPECT_EQ(static_cast<int>(slot >> 10), w);
          EXPECT_EQ((src >> 31) != 0, tables.s1(t, i) < 0);
          EXPECT_EQ(c & 0x3ffffu, 4 * pagh::cuda::wide_swizzle(slot));
          EXPECT_LT(h, 1u << 18);
          for (std::uint32_t f = 0; f < 16; ++f)
            EXPECT_EQ((plane_code(static_cast<int>(f / 8), at(j)) >> (18 + f % 8)) & 1u, static_cast<std::uint32_t>(std::popcount(f & (h >> 14)) & 1))
                << "slice " << f;
          EXPECT_EQ(plane_code(1, at(j)) & 0x3ffffu, c & 0x3ffffu) << "the planes differ only in the parity bits";
          high_slices += (plane_code(1, at(j)) >> 18) != (c >> 18);
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
  EXPECT_GT(high_slices, n / 2) << "the test needs entries whose bucket has bit 17 set";
}

// Groups of k (engine.cpp): one full wave of resident blocks, or a few waves of more groups where
// that is predicted at least 5% faster; the wide kernel on 132 SMs (one block each) as example.
TEST(SketchCudaHost, GroupCountFillsTheResidentBlocks) {
  using pagh::cuda::group_count;
  const std::int64_t spectrum = std::int64_t{4} << 18;  // bytes of one repetition's partial spectrum at b = 2^18
  EXPECT_EQ(group_count(132, 8, 16384, spectrum / 2), 16) << "b = 2^17, d = 1: 128 of 132 blocks in one wave (33 groups: 3% only)";
  EXPECT_EQ(group_count(132, 16, 32768, spectrum), 8) << "b = 2^18, d = 1";
  EXPECT_EQ(group_count(132, 24, 16384, 3 * spectrum / 2), 11) << "b = 2^17, d = 3: 2 waves of 132 instead of 120 blocks";
  EXPECT_EQ(group_count(132, 48, 32768, 3 * spectrum), 11) << "b = 2^18, d = 3: 4 waves of 132 instead of 96 blocks";
  EXPECT_EQ(group_count(132, 6, 4096, 3 * spectrum / 8), 22) << "b = 2^15, d = 3: one exact wave";
  EXPECT_EQ(group_count(132, 48, 600, 3 * spectrum), 2) << "groups of 256 k at least";
  EXPECT_EQ(group_count(132, 48, 32768, std::int64_t{100} << 20), 2) << "partial spectra within 256 MiB";
  EXPECT_EQ(group_count(132, 200, 5, spectrum), 1) << "more blocks per group than resident";
  EXPECT_EQ(group_count(132, 8, 3, spectrum), 3) << "at most K groups";
}

// The wide kernel (the default for 2^14 <= b <= 2^18) against the CPU, the slice kernel and itself:
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

// b = 2^18: sixteen folded slices, each block's signs from the second code plane for slices 8..15.
// Against the CPU and the clusters-of-8 kernel (b = 2^18's path before) within rounding,
// deterministic, staged lines equal to permuted ones bit for bit.
TEST(SketchCuda, WideKernelAtTwoToThe18AgreesWithinRounding) {
  SKIP_WITHOUT_GPU();
  TRACE_SEED();
  std::mt19937_64 rng(run_seed());
  const std::int64_t m = 16400, K = 40, p = 200;  // b = 2^18; staged lines fit beside the buffers
  const Dense A = gaussian(m, K, rng), B = gaussian(K, p, rng);
  const pagh::SketchParams params{.repetitions = 3, .seed = rng()};
  const pagh::cuda::Compressor plan(m, K, p, params);
  EXPECT_NE(plan.path().find("wide"), std::string::npos) << plan.path();
  EXPECT_NE(plan.path().find("16 slices"), std::string::npos) << plan.path();
  const auto wide = device_sketches(pagh::cuda::compress(A, B, params));
  EXPECT_EQ(wide.size(), static_cast<std::size_t>(3) << 18);
  EXPECT_EQ(first_difference(wide, device_sketches(pagh::cuda::compress(A, B, params))), -1) << "two runs differ";
  const pagh::cuda::DeviceOptions permute{.tuning = {.wide_staged_lines = false, .wide_piece = 7}};
  EXPECT_NE(pagh::cuda::Compressor(m, K, p, params, permute).path().find("permuted"), std::string::npos);
  EXPECT_EQ(first_difference(wide, device_sketches(pagh::cuda::compress(A, B, params, permute))), -1) << "staged and permuted lines differ";
  const auto clusters = device_sketches(pagh::cuda::compress(A, B, params, {.tuning = {.wide = false}}));
  const auto cpu = host_sketches(pagh::compress(A, B, params));
  ASSERT_EQ(wide.size(), cpu.size());
  double scale = 0, worst_cpu = 0, worst_clusters = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    scale = std::max(scale, std::fabs(cpu[i]));
    worst_cpu = std::max(worst_cpu, std::fabs(wide[i] - cpu[i]));
    worst_clusters = std::max(worst_clusters, std::fabs(wide[i] - clusters[i]));
  }
  const double tolerance = 32 * std::log2(262144.0 * K) * std::numeric_limits<float>::epsilon() * scale;
  EXPECT_LE(worst_cpu, tolerance) << "max |wide - cpu| " << worst_cpu << " vs max |c| " << scale;
  EXPECT_LE(worst_clusters, tolerance) << "max |wide - clusters| " << worst_clusters << " vs max |c| " << scale;
  EXPECT_GT(worst_clusters, 0.0) << "the two kernels sum in different orders; identical bits would mean one path ran twice";
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

}  // namespace
