// The CUDA backend against the CPU backend (itself bit-identical to the reference), bit for bit, on
// fresh random data: every dtype x normalization x stabilization x algorithm x compute type over
// sizes that cross every pass boundary of the GPU schedule, f32 sizes 2^0..2^28 and one 2^30,
// batches x strides x distances, in place and out of place, with poisoned outputs (every element of
// the layout must be written, nothing outside it). The register-tile path (fast_pass.cuh) is also
// run on unaligned buffers and under every schedule knob (FastPath*); its stabilized modes
// (Kahan/Neumaier single-pass, wide_onchip at every pass count and layout) in StabilizedFastPath,
// small enough for compute-sanitizer. Every test skips, naming the reason, when no CUDA device is
// usable (CI has none).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "pagh/error.hpp"
#include "test_support.hpp"

namespace fwht::test {
namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call << ": " << cudaGetErrorString(cudaGetLastError())

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!cuda_available(&why)) GTEST_SKIP() << "no usable CUDA device: " << why;
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  cudaStream_t stream_ = nullptr;
};

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes) {
    if (bytes && cudaMalloc(&p, bytes) != cudaSuccess) p = nullptr;
  }
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// Random data for a whole buffer: the test_support distributions for moderate sizes, a fast
// splitmix64 fill (uniform in [-1, 1), or [-100, 100] for integers) for the largest.
template <class T>
std::vector<T> random_data(std::size_t count, std::mt19937_64& rng) {
  if (count <= (std::size_t{1} << 22)) return random_vector<T>(count, rng);
  std::vector<T> v(count);
  std::uint64_t state = rng();
  for (auto& x : v) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    if constexpr (std::is_integral_v<T>)
      x = static_cast<T>(static_cast<int>(z % 201) - 100);
    else
      x = from_double<T>(static_cast<double>(z >> 11) * 0x1p-52 - 1.0);
  }
  return v;
}

// Elements of the layout: transform t, element j at t*distance + j*stride.
void for_each_layout_index(const Shape& s, const std::function<void(std::int64_t)>& f) {
  const std::int64_t distance = s.distance ? s.distance : s.n * s.stride;
  for (std::int64_t t = 0; t < s.batch; ++t)
    for (std::int64_t j = 0; j < s.n; ++j) f(t * distance + j * s.stride);
}

// Runs the GPU plan on `input` (a whole buffer of plan.extent() elements) with the output poisoned
// by `poison`, returns the whole output buffer.
template <class T>
void run_gpu(Plan& plan, const std::vector<T>& input, bool in_place, unsigned char poison, cudaStream_t stream,
             bool own_workspace, std::vector<T>& out) {
  const std::size_t bytes = input.size() * sizeof(T);
  DeviceBuffer in(bytes), result(in_place ? 0 : bytes), ws(own_workspace ? plan.workspace_bytes() : 0);
  ASSERT_NE(in.p, nullptr) << "cudaMalloc of " << bytes << " bytes";
  void* dst = in_place ? in.p : result.p;
  ASSERT_NE(dst, nullptr);
  if (!in_place) CUDA_OK(cudaMemset(dst, poison, bytes));
  CUDA_OK(cudaMemcpy(in.p, input.data(), bytes, cudaMemcpyHostToDevice));
  if (in_place) {
    // Poison the gaps between layout elements: they must survive untouched.
    std::vector<T> staged(input.size());
    std::memset(staged.data(), poison, bytes);
    for_each_layout_index(plan.shape(), [&](std::int64_t k) { staged[k] = input[k]; });
    CUDA_OK(cudaMemcpy(in.p, staged.data(), bytes, cudaMemcpyHostToDevice));
  }
  // The plan's workspace gets poisoned too, so nothing may rely on its contents.
  if (own_workspace && plan.workspace_bytes()) CUDA_OK(cudaMemset(ws.p, 0xFF, plan.workspace_bytes()));
  plan.execute(in.p, dst, stream, own_workspace ? ws.p : nullptr);
  CUDA_OK(cudaStreamSynchronize(stream));
  CUDA_OK(cudaGetLastError());
  out.resize(input.size());
  CUDA_OK(cudaMemcpy(out.data(), dst, bytes, cudaMemcpyDeviceToHost));
}

// GPU == CPU plan bitwise on every layout element, and every other element still holds the poison.
// Integers are run under two poisons, so an unwritten element cannot pass by equalling one of them.
template <class T>
void check_case(const Shape& shape, const Options& o, bool in_place, cudaStream_t stream, std::mt19937_64& rng,
                bool own_workspace = false, const std::vector<T>* given_input = nullptr) {
  SCOPED_TRACE("n=" + std::to_string(shape.n) + " batch=" + std::to_string(shape.batch) + " stride=" +
               std::to_string(shape.stride) + " distance=" + std::to_string(shape.distance) +
               (in_place ? " in place " : " out of place ") + describe(o));
  Plan cpu(shape, dtype_of<T>(), o, Backend::cpu);
  Plan gpu(shape, dtype_of<T>(), o, Backend::cuda);
  const auto extent = static_cast<std::size_t>(cpu.extent());
  auto input = given_input ? *given_input : random_data<T>(extent, rng);
  if constexpr (std::is_integral_v<T>)
    if (o.normalization == Normalization::inverse) {  // exact division: transform a spectrum
      Options plain = o;
      plain.normalization = Normalization::none;
      Plan(shape, dtype_of<T>(), plain, Backend::cpu).execute(input.data(), input.data());
    }
  std::vector<T> expect(extent);
  cpu.execute(input.data(), expect.data());
  std::vector<bool> in_layout(extent, false);
  for_each_layout_index(shape, [&](std::int64_t k) { in_layout[k] = true; });
  const int runs = std::is_integral_v<T> ? 2 : 1;
  for (int run = 0; run < runs; ++run) {
    const unsigned char poison = run == 0 ? 0xFF : 0x5A;
    std::vector<T> got;
    ASSERT_NO_FATAL_FAILURE(run_gpu(gpu, input, in_place, poison, stream, own_workspace, got));
    T poisoned;
    std::memset(&poisoned, poison, sizeof(T));
    std::int64_t bad = -1;
    for (std::size_t k = 0; k < extent && bad < 0; ++k) {
      const T& want = in_layout[k] ? expect[k] : poisoned;
      if (std::memcmp(&got[k], &want, sizeof(T)) != 0) bad = static_cast<std::int64_t>(k);
    }
    ASSERT_EQ(bad, -1) << "first differing buffer element " << bad << (bad >= 0 && !in_layout[bad] ? " (outside the layout: written)" : "")
                       << ": gpu " << (bad >= 0 ? to_double(got[bad]) : 0.0) << " cpu "
                       << (bad >= 0 && in_layout[bad] ? to_double(expect[bad]) : 0.0);
  }
}

// Every option combination the CUDA backend supports for T (all but checked integers), optionally
// with one normalization only.
template <class T>
std::vector<Options> modes(Normalization only = Normalization::none, bool one_normalization = false) {
  std::vector<Options> out;
  for (const Options& o : all_options<T>(/*with_checked_integers=*/false))
    if (!one_normalization || o.normalization == only) out.push_back(o);
  return out;
}

// Sizes crossing the one/two/three-pass boundaries of every tile configuration (schedule.hpp):
// 8-byte stabilized 12|21|30, 4-byte stabilized and 8-byte plain 13|22-23, 4-byte plain 14|24.
const std::vector<int> kModeSizes = {0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 12, 13, 14, 15, 16, 18};
const std::vector<int> kLargeSizes = {21, 22, 24, 25};

template <class T>
void every_mode(cudaStream_t stream) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  bool in_place = false;
  for (const Options& o : modes<T>())
    for (int L : kModeSizes) {
      ASSERT_NO_FATAL_FAILURE(check_case<T>({.n = std::int64_t{1} << L}, o, in_place, stream, rng));
      in_place = !in_place;
    }
}

template <class T>
void large_modes(cudaStream_t stream) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  const Normalization norm = std::is_integral_v<T> ? Normalization::inverse : Normalization::orthonormal;
  bool in_place = true;
  for (const Options& o : modes<T>(norm, true))
    for (int L : kLargeSizes) {
      ASSERT_NO_FATAL_FAILURE(check_case<T>({.n = std::int64_t{1} << L}, o, in_place, stream, rng));
      in_place = !in_place;
    }
}

TEST_F(CudaTest, EveryModeF64) { every_mode<double>(stream_); }
TEST_F(CudaTest, EveryModeF32) { every_mode<float>(stream_); }
TEST_F(CudaTest, EveryModeF16) { every_mode<f16>(stream_); }
TEST_F(CudaTest, EveryModeBF16) { every_mode<bf16>(stream_); }
TEST_F(CudaTest, EveryModeI32) { every_mode<std::int32_t>(stream_); }
TEST_F(CudaTest, EveryModeI64) { every_mode<std::int64_t>(stream_); }
TEST_F(CudaTest, LargeModesF64) { large_modes<double>(stream_); }
TEST_F(CudaTest, LargeModesF32) { large_modes<float>(stream_); }
TEST_F(CudaTest, LargeModesF16) { large_modes<f16>(stream_); }
TEST_F(CudaTest, LargeModesBF16) { large_modes<bf16>(stream_); }
TEST_F(CudaTest, LargeModesI32) { large_modes<std::int32_t>(stream_); }
TEST_F(CudaTest, LargeModesI64) { large_modes<std::int64_t>(stream_); }

// f32 plain, every size 2^0 .. 2^28, alternating in place and out of place.
TEST_F(CudaTest, F32Sizes0To28) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (int L = 0; L <= 28; ++L)
    ASSERT_NO_FATAL_FAILURE(check_case<float>({.n = std::int64_t{1} << L}, {}, L % 2 == 0, stream_, rng));
}

// One 2^30 f32 transform (4 GiB), in place; skipped when the device or host lacks the memory.
TEST_F(CudaTest, F32Size2To30) {
  std::size_t free_bytes = 0, total = 0;
  CUDA_OK(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < (std::size_t{5} << 30)) GTEST_SKIP() << "needs 5 GiB of free device memory, have " << free_bytes;
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  check_case<float>({.n = std::int64_t{1} << 30}, {.normalization = Normalization::orthonormal}, true, stream_, rng);
}

// Batches x strides x distances (blocked and interleaved), in place and out of place.
template <class T>
void layouts(const std::vector<Options>& options, cudaStream_t stream) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (const Options& o : options)
    for (int L : {0, 1, 3, 6, 12, 15, 19}) {
      const std::int64_t n = std::int64_t{1} << L;
      const std::vector<Shape> shapes = {
          {.n = n, .batch = 3},                                    // back to back
          {.n = n, .batch = 5, .stride = 1, .distance = n + 3},    // gaps, unaligned transforms
          {.n = n, .batch = 3, .stride = 2, .distance = 2 * n + 1},  // strided
          {.n = n, .batch = 4, .stride = 4, .distance = 1},        // interleaved
          {.n = n, .batch = 2, .stride = 5, .distance = 2},        // interleaved with gaps
      };
      for (const Shape& s : shapes)
        for (bool in_place : {false, true}) ASSERT_NO_FATAL_FAILURE(check_case<T>(s, o, in_place, stream, rng));
    }
}

TEST_F(CudaTest, LayoutsF32) {
  layouts<float>({{}, {.normalization = Normalization::inverse, .stabilization = Stabilization::neumaier},
                  {.algorithm = Algorithm::alman_rao},
                  {.normalization = Normalization::orthonormal, .stabilization = Stabilization::wide_onchip},
                  {.stabilization = Stabilization::wide_carry}}, stream_);
}
TEST_F(CudaTest, LayoutsF16) {
  layouts<f16>({{.normalization = Normalization::orthonormal},
                {.stabilization = Stabilization::kahan, .compute = Compute::storage},
                {.stabilization = Stabilization::wide_onchip, .compute = Compute::storage}}, stream_);
}
TEST_F(CudaTest, LayoutsBF16) { layouts<bf16>({{.compute = Compute::storage}, {.algorithm = Algorithm::alman_rao}}, stream_); }
TEST_F(CudaTest, LayoutsF64) { layouts<double>({{.stabilization = Stabilization::kahan}}, stream_); }
TEST_F(CudaTest, LayoutsI64) { layouts<std::int64_t>({{.normalization = Normalization::inverse}}, stream_); }

// Batched small transforms: many transforms per block, non-power-of-two batch counts.
TEST_F(CudaTest, BatchedSmall) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (int L = 0; L <= 15; ++L) {
    const Shape s{.n = std::int64_t{1} << L, .batch = (std::int64_t{1} << (20 - L)) + 3};
    ASSERT_NO_FATAL_FAILURE(check_case<float>(s, {}, L % 2 == 1, stream_, rng));
    ASSERT_NO_FATAL_FAILURE(check_case<bf16>(s, {.normalization = Normalization::orthonormal}, L % 2 == 0, stream_, rng));
    ASSERT_NO_FATAL_FAILURE(check_case<f16>(s, {.stabilization = Stabilization::neumaier, .compute = Compute::storage},
                                            L % 2 == 0, stream_, rng));
  }
}

// A caller-owned workspace (poisoned before use) gives the same results as the plan's own.
TEST_F(CudaTest, CallerWorkspace) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (int L : {15, 20}) {
    const Shape s{.n = std::int64_t{1} << L, .batch = 2};
    Plan probe(s, DType::f16, {.stabilization = Stabilization::neumaier}, Backend::cuda);
    EXPECT_GT(probe.workspace_bytes(), 0u);  // float work buffer + error plane
    ASSERT_NO_FATAL_FAILURE(check_case<f16>(s, {.stabilization = Stabilization::neumaier}, false, stream_, rng, true));
    ASSERT_NO_FATAL_FAILURE(check_case<float>(s, {.stabilization = Stabilization::kahan}, true, stream_, rng, true));
  }
  // Plain f32 works in the output buffer: no workspace at all.
  EXPECT_EQ(Plan({.n = 1 << 24}, DType::f32, {}, Backend::cuda).workspace_bytes(), 0u);
}

// The register-tile path (fast_pass.cuh) on buffers that are not 16-byte aligned: scalar loads and
// stores instead of 16-byte vectors, same bits; the element before and the elements after the
// layout keep their poison.
template <class T>
void unaligned_case(const Shape& shape, const Options& o, cudaStream_t stream, std::mt19937_64& rng, int offset = 1) {
  SCOPED_TRACE("unaligned (+" + std::to_string(offset) + ") n=" + std::to_string(shape.n) + " batch=" +
               std::to_string(shape.batch) + " " + describe(o));
  Plan cpu(shape, dtype_of<T>(), o, Backend::cpu);
  Plan gpu(shape, dtype_of<T>(), o, Backend::cuda);
  const auto extent = static_cast<std::size_t>(cpu.extent());
  const auto input = random_data<T>(extent, rng);
  std::vector<T> expect(extent);
  cpu.execute(input.data(), expect.data());
  const std::size_t padded = extent + 2 * offset;  // `offset` poisoned elements on each side
  DeviceBuffer in(padded * sizeof(T)), out(padded * sizeof(T));
  ASSERT_NE(in.p, nullptr);
  ASSERT_NE(out.p, nullptr);
  T* in1 = static_cast<T*>(in.p) + offset;
  T* out1 = static_cast<T*>(out.p) + offset;
  CUDA_OK(cudaMemset(out.p, 0xA5, padded * sizeof(T)));
  CUDA_OK(cudaMemcpy(in1, input.data(), extent * sizeof(T), cudaMemcpyHostToDevice));
  gpu.execute(in1, out1, stream);
  CUDA_OK(cudaStreamSynchronize(stream));
  std::vector<T> got(padded);
  CUDA_OK(cudaMemcpy(got.data(), out.p, padded * sizeof(T), cudaMemcpyDeviceToHost));
  T poisoned;
  std::memset(&poisoned, 0xA5, sizeof(T));
  for (int k = 0; k < offset; ++k) {
    EXPECT_EQ(std::memcmp(&got[k], &poisoned, sizeof(T)), 0) << "element before the layout written";
    EXPECT_EQ(std::memcmp(&got[padded - 1 - k], &poisoned, sizeof(T)), 0) << "element after the layout written";
  }
  const std::int64_t bad = first_bit_difference<T>(std::span<const T>(got.data() + offset, extent), std::span<const T>(expect));
  ASSERT_EQ(bad, -1) << "first differing element " << bad;
}

TEST_F(CudaTest, FastPathUnaligned) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (int L : {4, 7, 12, 13, 14, 15, 19, 24}) {
    const Shape s{.n = std::int64_t{1} << L, .batch = L < 15 ? 5 : 1};
    ASSERT_NO_FATAL_FAILURE(unaligned_case<float>(s, {}, stream_, rng));
    ASSERT_NO_FATAL_FAILURE(unaligned_case<f16>(s, {.normalization = Normalization::orthonormal}, stream_, rng));
    ASSERT_NO_FATAL_FAILURE(unaligned_case<bf16>(s, {.compute = Compute::storage}, stream_, rng));
  }
  // Cluster passes (cluster_pass.cuh: one at 2^15 x 64, two at 2^26) with scalar loads and stores.
  for (const Shape& s : {Shape{.n = std::int64_t{1} << 15, .batch = 64}, Shape{.n = std::int64_t{1} << 26}}) {
    ASSERT_NO_FATAL_FAILURE(unaligned_case<float>(s, {}, stream_, rng));
    ASSERT_NO_FATAL_FAILURE(unaligned_case<f16>(s, {.normalization = Normalization::orthonormal}, stream_, rng));
  }
}

// f16/bf16 computed in storage precision run as transforms of n/2 words of two elements (Pair16,
// paired 16-bit instructions) when both buffers are 4-byte aligned, else as the element plan: the
// CPU's bits either way. Covered here beyond EveryMode/LargeModes: buffers offset by one element
// (element plan) and by two (words, not 16-byte aligned: scalar loads and stores), the knob that
// turns pairs off, and data scaled into each format's subnormal range, so that sums, differences
// and the normalization's products are subnormal (the paired instructions must keep them as the
// CPU's rounded float operations do).
TEST_F(CudaTest, PairedSixteenBit) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (int L : {5, 6, 12, 15, 16, 17, 19, 24}) {
    const Shape s{.n = std::int64_t{1} << L, .batch = L < 16 ? 6 : L < 19 ? 2 : 1};
    for (int offset : {1, 2}) {
      ASSERT_NO_FATAL_FAILURE(unaligned_case<f16>(s, {.normalization = Normalization::orthonormal, .compute = Compute::storage},
                                                  stream_, rng, offset));
      ASSERT_NO_FATAL_FAILURE(unaligned_case<bf16>(s, {.normalization = Normalization::inverse, .compute = Compute::storage},
                                                   stream_, rng, offset));
    }
  }
  for (int L : {5, 9, 14, 16, 19, 21}) {
    const Shape s{.n = std::int64_t{1} << L, .batch = L < 16 ? 4 : 1};
    const auto count = static_cast<std::size_t>(s.n * s.batch);
    for (Normalization norm : {Normalization::none, Normalization::orthonormal, Normalization::inverse}) {
      const Options o{.normalization = norm, .compute = Compute::storage};
      std::vector<f16> tiny_h(count);
      std::vector<bf16> tiny_b(count);
      std::normal_distribution<double> d(0.0, 1.0);
      for (std::size_t k = 0; k < count; ++k) {
        tiny_h[k] = from_double<f16>(std::ldexp(d(rng), -22));   // f16 subnormals: below 2^-14
        tiny_b[k] = from_double<bf16>(std::ldexp(d(rng), -130));  // bf16 subnormals: below 2^-126
      }
      ASSERT_NO_FATAL_FAILURE(check_case<f16>(s, o, L % 2 == 0, stream_, rng, false, &tiny_h));
      ASSERT_NO_FATAL_FAILURE(check_case<bf16>(s, o, L % 2 == 1, stream_, rng, false, &tiny_b));
    }
  }
  for (int L : {5, 13, 20}) {
    const Shape s{.n = std::int64_t{1} << L, .batch = 3};
    ASSERT_NO_FATAL_FAILURE(
        check_case<bf16>(s, {.compute = Compute::storage, .tuning = {.paired_words = false}}, false, stream_, rng));
  }
}

// Every schedule the tuning knobs of the register-tile path select computes the same bits
// (including the fused pair of strided passes, fused_pass, with one and with many strips).
TEST_F(CudaTest, FastPathScheduleKnobs) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  const std::vector<Tuning> settings = {
      {.single_block_log = 12}, {.single_block_log = 13}, {.single_block_log = 14},
      {.first_pass_stages = 12}, {.first_pass_stages = 13},
      {.first_pass_stages = 10},  // three passes from 2^21: the last two fused
      {.first_pass_stages = 10, .fuse = false},
      {.first_pass_stages = 10, .fuse_strip_mib = 1},  // many strips
      {.first_pass_stages = 10, .fuse_strip_mib = 1, .fuse_lag = 1},
      {.stage_mode = 0},
      {.stage_mode = 2},  // cp.async staging for 2-byte storage too
      {.dependent_launch = false},  // passes without programmatic dependent launch
  };
  for (const Tuning& t : settings) {
    for (int L : {4, 5, 9, 12, 13, 14, 15, 17, 20, 22, 23, 24, 25}) {
      const Shape s{.n = std::int64_t{1} << L, .batch = L <= 14 ? 7 : 2};
      ASSERT_NO_FATAL_FAILURE(check_case<float>(s, {.tuning = t}, L % 2 == 0, stream_, rng));
      ASSERT_NO_FATAL_FAILURE(
          check_case<bf16>(s, {.normalization = Normalization::inverse, .tuning = t}, L % 2 == 1, stream_, rng));
    }
  }
}

// Cluster passes (cluster_pass.cuh) under every schedule knob, and the schedules without clusters
// (max_cluster_log = 0: three passes from 2^25, the last two fused): the same bits. Sizes: single
// cluster passes 2^15..2^17 (the default from 2^21 elements in all: batched at 2^15), two passes
// with clusters of 2, 4, 8 on the first pass (the defaults at 2^25..2^27; cluster_first forces
// them elsewhere, also at 2^24), on the second (cluster_first = 0, up to 8 at 2^28), on both
// (cluster_first = 1 at 2^28), and 16- to 256-byte rows (cluster_column_log).
TEST_F(CudaTest, ClusterSchedules) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  struct Setting {
    Tuning tuning;
    std::vector<int> sizes;
  };
  const std::vector<Setting> settings = {
      {{.max_cluster_log = 0}, {15, 16, 17, 25, 26}},
      {{.max_cluster_log = 1}, {15, 16, 26, 27}},
      {{.max_cluster_log = 2}, {16, 17, 27}},
      {{.cluster_column_log = 2}, {26, 27}},
      {{.cluster_column_log = 3}, {25, 26, 27}},  // 32-byte rows: 14 + 11, 15c2 + 11
      {{.cluster_column_log = 5}, {26}},  // 128-byte rows: 17c8 + 9
      {{.cluster_column_log = 6}, {25}},
      {{.cluster_first = 0}, {26, 27, 28}},
      {{.cluster_first = 1}, {28}},
      {{.cluster_first = 3}, {28}},
      {{.cluster_first = 1, .cluster_column_log = 5}, {24}},  // 15c2 + 9 below the default range
  };
  for (const Setting& k : settings) {
    for (int L : k.sizes) {
      const Shape s{.n = std::int64_t{1} << L, .batch = L <= 17 ? std::int64_t{1} << (21 - L) : 1};
      const Tuning& t = k.tuning;
      ASSERT_NO_FATAL_FAILURE(
          check_case<float>(s, {.normalization = Normalization::orthonormal, .tuning = t}, L % 2 == 0, stream_, rng));
      if (L <= 26) {
        ASSERT_NO_FATAL_FAILURE(
            check_case<bf16>(s, {.normalization = Normalization::inverse, .tuning = t}, L % 2 == 1, stream_, rng));
        ASSERT_NO_FATAL_FAILURE(check_case<f16>(s, {.compute = Compute::storage, .tuning = t}, L % 2 == 0, stream_, rng));
        ASSERT_NO_FATAL_FAILURE(check_case<std::int32_t>(s, {.tuning = t}, L % 2 == 1, stream_, rng));
      }
    }
  }
}

// The default two-pass cluster shapes of both device memory classes (schedule.cpp,
// kTwoPassShapes; Tuning::slow_memory picks the class whatever the device): 128-byte rows
// with clusters on both passes for f32 and i32 at 2^26..2^29, f16/bf16 computed in f32 at 2^27 and
// 2^28 and paired words of 2^27 and 2^28 (2^28 and 2^29 elements), beside the rule's shapes: the
// CPU's bits.
TEST_F(CudaTest, ClusterShapesOfBothMemoryClasses) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (bool slow : {false, true}) {
    const Tuning t{.slow_memory = slow};
    for (int L : {26, 27, 28, 29})
      ASSERT_NO_FATAL_FAILURE(check_case<float>({.n = std::int64_t{1} << L}, {.tuning = t}, L % 2 == 0, stream_, rng));
    ASSERT_NO_FATAL_FAILURE(check_case<std::int32_t>({.n = std::int64_t{1} << 28}, {.tuning = t}, false, stream_, rng));
    for (int L : {27, 28})
      ASSERT_NO_FATAL_FAILURE(check_case<bf16>({.n = std::int64_t{1} << L}, {.normalization = Normalization::inverse, .tuning = t},
                                               L % 2 == 1, stream_, rng));
    for (int L : {28, 29})
      ASSERT_NO_FATAL_FAILURE(
          check_case<f16>({.n = std::int64_t{1} << L}, {.compute = Compute::storage, .tuning = t}, L % 2 == 0, stream_, rng));
  }
}

// The stabilized register-tile kernels: Kahan/Neumaier on single-pass plans (n = 2^4..2^13, several
// transforms per block, a partial last block), wide_onchip and wide_carry on one, two and three (fused) stage
// groups, n <= 8 (one thread per transform) and a strided layout (gather, passes, scatter), with the
// work buffer of f16 computed in float. Sizes kept small for compute-sanitizer.
TEST_F(CudaTest, StabilizedFastPath) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (Stabilization st : {Stabilization::kahan, Stabilization::neumaier})
    for (int L : {4, 8, 12, 13}) {
      const Shape s{.n = std::int64_t{1} << L, .batch = 5};
      ASSERT_NO_FATAL_FAILURE(check_case<float>(s, {.stabilization = st}, L % 2 == 0, stream_, rng));
      ASSERT_NO_FATAL_FAILURE(check_case<bf16>(s, {.stabilization = st, .compute = Compute::storage}, false, stream_, rng));
      ASSERT_NO_FATAL_FAILURE(check_case<f16>(s, {.normalization = Normalization::inverse, .stabilization = st}, true, stream_, rng));
    }
  for (Stabilization mode : {Stabilization::wide_onchip, Stabilization::wide_carry}) {
    for (int L : {0, 2, 3, 4, 9, 13, 14, 17, 23}) {
      SCOPED_TRACE(std::string(to_string(mode)) + ", log2 n = " + std::to_string(L));
      const Options wide{.normalization = Normalization::orthonormal, .stabilization = mode};
      const std::int64_t n = std::int64_t{1} << L;
      const std::int64_t batch = L <= 13 ? 3 : 1;
      ASSERT_NO_FATAL_FAILURE(check_case<float>({.n = n, .batch = batch}, wide, L % 2 == 0, stream_, rng));
      ASSERT_NO_FATAL_FAILURE(check_case<f16>({.n = n, .batch = batch}, wide, false, stream_, rng, true));
      ASSERT_NO_FATAL_FAILURE(check_case<bf16>({.n = n, .batch = batch},
                                               {.stabilization = mode, .compute = Compute::storage}, true,
                                               stream_, rng));
      if (L <= 17)
        ASSERT_NO_FATAL_FAILURE(check_case<float>({.n = n, .batch = 2, .stride = 3, .distance = 3 * n + 1}, wide, L % 2 == 1,
                                                  stream_, rng, true));
    }
  }
}

// wide_carry's residual byte and resumed value take integer fast paths on the GPU (arithmetic.cuh)
// and the exact double definition elsewhere: crafted boundary values must give the CPU's bits.
// n = 2^14 (groups of 10 and 4 stages); transform t has x[0] = a, x[1] = b, x[1024] = -a, so after
// group 1 block 0 holds a + b and a - b (exact in double) and block 1 holds -a, and group 2's
// outputs include resume(a +- b) - a: the residual byte itself, exactly.
TEST_F(CudaTest, WideCarryBoundaryCases) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  const float u = 0x1p-23f;
  std::vector<std::pair<float, float>> cases = {
      {1.0f, 0x1p-24f},                      // tie to even (down): residual +ulp/2, clamped to 127
      {1.0f + u, 0x1p-24f},                  // tie to even (up)
      {2.0f - u, 0x1p-24f + 0x1p-40f},       // rounds up into the next binade
      {2.0f, -0x1p-30f}, {-2.0f, 0x1p-30f},  // just below a power of two: resumed in the lower binade
      {1.5f, 0x1p-33f}, {-1.5f, 0x1p-31f + 0x1p-44f}, {3.0f, 0x1.8p-25f},
      {0x1p-126f, 0x1p-140f}, {0x1p-130f, 0x1p-149f}, {0x1p-149f, 0x1p-149f},  // smallest normal, subnormal
      {0x1p127f, 0x1p103f}, {0x1.fffffep127f, 0x1p104f},                        // largest binade, overflow
  };
  std::uniform_real_distribution<float> unit(1.0f, 2.0f);
  std::uniform_int_distribution<int> scale(-60, 60), gap(22, 45), sign(0, 1);
  while (cases.size() < 64) {
    const float a = std::ldexp(unit(rng), scale(rng)) * (sign(rng) ? -1.0f : 1.0f);
    cases.push_back({a, std::ldexp(a, -gap(rng)) * unit(rng) * (sign(rng) ? -1.0f : 1.0f)});
  }
  const std::int64_t n = std::int64_t{1} << 14;
  std::vector<float> input(cases.size() * static_cast<std::size_t>(n), 0.0f);
  for (std::size_t t = 0; t < cases.size(); ++t) {
    float* x = input.data() + t * static_cast<std::size_t>(n);
    x[0] = cases[t].first, x[1] = cases[t].second, x[1024] = -cases[t].first;
  }
  const Shape shape{.n = n, .batch = static_cast<std::int64_t>(cases.size())};
  ASSERT_NO_FATAL_FAILURE(check_case<float>(shape, {.stabilization = Stabilization::wide_carry}, false, stream_, rng, false, &input));
}

TEST_F(CudaTest, UnsupportedAndMisuse) {
  EXPECT_THROW(Plan({.n = 1024}, DType::i32, {.check_overflow = true}, Backend::cuda), pagh::Error);
  Plan plan({.n = 1024}, DType::f32, {}, Backend::cuda);
  std::vector<float> x(1024);
  EXPECT_THROW(plan.execute(x.data(), x.data()), pagh::Error);  // host execute on a CUDA plan
  EXPECT_THROW(plan.execute(nullptr, nullptr, stream_), pagh::Error);
}

// Plan::describe reports the planner's layout for the device at hand, tuning included; a tuning
// value outside its range is refused by the constructor.
TEST_F(CudaTest, DescribeAndTuningRange) {
  const Plan fast({.n = 1 << 20}, DType::f32, {}, Backend::cuda);
  EXPECT_EQ(fast.describe().memory_passes, 2);
  EXPECT_NE(fast.describe().text.find("register tile"), std::string::npos) << fast.describe().text;
  const Plan tile({.n = 1 << 20}, DType::f32, {.tuning = {.register_tile = false}}, Backend::cuda);
  EXPECT_NE(tile.describe().text.find("general tile pass"), std::string::npos) << tile.describe().text;
  const Plan paired({.n = 1 << 20}, DType::f16, {.compute = Compute::storage}, Backend::cuda);
  EXPECT_NE(paired.describe().text.find("paired 16-bit words"), std::string::npos) << paired.describe().text;
  EXPECT_THROW(Plan({.n = 1 << 20}, DType::f32, {.tuning = {.fuse_lag = 0}}, Backend::cuda), pagh::Error);
}

}  // namespace
}  // namespace fwht::test
