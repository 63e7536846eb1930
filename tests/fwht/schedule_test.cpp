// The CPU backend's blocked schedule beyond plain f32 and its thread independence:
// - three passes over memory (a chunk pass of log2(128 KiB / sizeof(compute)) stages, then tile
//   passes of up to 8 stages, 6 for Alman-Rao) at the smallest sizes that need them for other
//   compute types and modes: f64 with Neumaier's error plane and orthonormal scaling at 2^23
//   (14 + 8 + 1 stages), int64 at 2^23, f32 Alman-Rao at 2^22 (13 + 6 + 3, a batch of two with a
//   gap), f16 computed in float at 2^24 with a stride (15 + 8 + 1, through the work buffer);
// - identical bits for 1, 2, 3 and 7 threads there and on the batched and wide paths, and the
//   same first failing element reported by a checked integer transform.
// Kept to a few seconds: the suite runs this file twice (AVX2 and generic kernels) on 2 cores.
#include <cstring>

#include "pagh/error.hpp"
#include "test_support.hpp"

namespace fwht::test {
namespace {

constexpr int kThreadCounts[] = {1, 2, 3, 7};

// Every element of `out` at the layout's positions against per-transform reference results.
template <class T>
void check_large(Shape shape, const Options& base, std::initializer_list<int> thread_counts = {1, 2, 3, 7}) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  Plan probe(shape, dtype_of<T>(), base);
  const auto extent = static_cast<std::size_t>(probe.extent());
  const auto distance = probe.shape().distance;
  const auto in = random_vector<T>(extent, rng);
  std::vector<std::vector<T>> expect(static_cast<std::size_t>(shape.batch), std::vector<T>(static_cast<std::size_t>(shape.n)));
  for (std::int64_t t = 0; t < shape.batch; ++t) {
    for (std::int64_t j = 0; j < shape.n; ++j) expect[t][j] = in[t * distance + j * shape.stride];
    reference::transform(std::span<T>(expect[t]), base);
  }
  for (int threads : thread_counts) {
    Options o = base;
    o.threads = threads;
    Plan plan(shape, dtype_of<T>(), o);
    std::vector<T> out = in;
    plan.execute(std::span<T>(out));
    for (std::int64_t t = 0; t < shape.batch; ++t)
      for (std::int64_t j = 0; j < shape.n; ++j)
        ASSERT_EQ(std::memcmp(&out[t * distance + j * shape.stride], &expect[t][j], sizeof(T)), 0)
            << to_string(dtype_of<T>()) << " n = " << shape.n << " " << describe(o) << ": transform " << t << " element " << j;
    // Elements between the transforms' strided positions are untouched.
    if (shape.stride > 1)
      for (std::int64_t j = 0; j + 1 < shape.n; ++j)
        ASSERT_EQ(std::memcmp(&out[j * shape.stride + 1], &in[j * shape.stride + 1], sizeof(T)), 0) << "gap " << j;
  }
}

// Large transforms: 2 and 7 threads (uneven splits of chunks and tiles); 1 and 3 below.
TEST(CpuSchedule, ThreePassesF64NeumaierOrthonormal) {
  check_large<double>({.n = std::int64_t{1} << 23},
                      {.normalization = Normalization::orthonormal, .stabilization = Stabilization::neumaier}, {2, 7});
}
TEST(CpuSchedule, ThreePassesI64) { check_large<std::int64_t>({.n = std::int64_t{1} << 23}, {}, {1, 3}); }
TEST(CpuSchedule, ThreePassesF32AlmanRaoBatched) {
  check_large<float>({.n = std::int64_t{1} << 22, .batch = 2, .distance = (std::int64_t{1} << 22) + 64},
                     {.normalization = Normalization::inverse, .algorithm = Algorithm::alman_rao}, {3, 7});
}
TEST(CpuSchedule, ThreePassesF16InFloatStrided) {
  check_large<f16>({.n = std::int64_t{1} << 24, .stride = 2}, {.normalization = Normalization::inverse}, {2, 7});
}

// Batched small transforms (one per thread at a time) and the wide path (wide_threads).
TEST(CpuSchedule, BatchedAndWidePathsIdenticalFor1237Threads) {
  check_large<float>({.n = 1 << 12, .batch = 37}, {.stabilization = Stabilization::kahan});
  check_large<float>({.n = 1 << 15, .batch = 9}, {.stabilization = Stabilization::wide_carry});
  check_large<bf16>({.n = 1 << 14, .batch = 11}, {.normalization = Normalization::orthonormal,
                                                   .stabilization = Stabilization::wide_onchip, .compute = Compute::storage});
  check_large<std::int32_t>({.n = 1 << 10, .batch = 65, .stride = 3}, {.algorithm = Algorithm::alman_rao});
}

// A checked integer transform with overflows in several transforms reports the first one (the
// smallest t n + i), whichever thread finds which.
TEST(CpuSchedule, FirstOverflowReportedForEveryThreadCount) {
  const std::int64_t n = 1 << 14, batch = 12;
  std::vector<std::int32_t> x(static_cast<std::size_t>(n * batch), 1);
  // Transforms of ones fit; transforms 5, 7 and 11 get two elements 2^30, whose sum (output
  // element 0, among others) overflows int32.
  for (std::int64_t t : {5, 7, 11}) x[static_cast<std::size_t>(t * n + 3)] = x[static_cast<std::size_t>(t * n + 5)] = 1 << 30;
  std::string first;
  for (int threads : kThreadCounts) {
    auto y = x;
    try {
      Plan({.n = n, .batch = batch}, DType::i32, {.check_overflow = true, .threads = threads}).execute(std::span<std::int32_t>(y));
      ADD_FAILURE() << "no overflow reported with " << threads << " threads";
    } catch (const pagh::Error& e) {
      if (first.empty()) first = e.what();
      EXPECT_EQ(std::string(e.what()), first) << threads << " threads";
    }
  }
  EXPECT_NE(first.find("overflow at element 0 of transform 5"), std::string::npos) << first;
}

}  // namespace
}  // namespace fwht::test
