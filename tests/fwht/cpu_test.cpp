// The CPU backend against the reference, bit for bit, for every dtype x stabilization x algorithm x
// normalization x compute type, sizes 2^0..2^20 (and one 2^26), batches, strides, distances,
// in place and out of place, any thread count; plus error bounds against binary128 and every bad
// argument. ctest runs this file three times: with the kernels the CPU selects, with
// PAGH_FWHT_ISA=avx2 and with PAGH_FWHT_ISA=generic (isa_main.cpp caps the library's choice).
#include <cmath>

#include <functional>
#include <limits>

#include "fwht/cpu_isa.hpp"
#include "cpu/kernels.hpp"
#include "test_support.hpp"

namespace fwht::test {
namespace {

// Sizes up to 2^max_log: every size to 2^16, then the pass boundaries of the blocked schedule.
std::vector<int> sizes(int max_log) {
  std::vector<int> out;
  for (int L = 0; L <= max_log; ++L)
    if (L <= 16 || L == 17 || L == 18 || L == 20) out.push_back(L);
  return out;
}

template <class T>
void expect_matches_reference(int max_log) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (const Options& base : all_options<T>()) {
    for (int L : sizes(max_log)) {
      const std::size_t n = std::size_t{1} << L;
      // (Unchecked int32 Alman-Rao may wrap in its prescaled intermediates at large n; both
      // implementations then wrap identically, which is what this test compares.)
      auto x = random_vector<T>(n, rng);
      // Integer inverse normalization divides by n: give it a spectrum (checked mode rejects
      // inexact division, tested below).
      if constexpr (std::is_integral_v<T>)
        if (base.normalization == Normalization::inverse) reference::transform(std::span<T>(x));
      auto expect = x;
      reference::transform(std::span<T>(expect), base);
      Options o = base;
      o.threads = (L % 2) ? 2 : 1;
      std::vector<T> out(n);
      transform(std::span<const T>(x), std::span<T>(out), o);
      const auto diff = first_bit_difference<T>(out, expect);
      ASSERT_EQ(diff, -1) << to_string(dtype_of<T>()) << " n = 2^" << L << " " << describe(o) << " first difference at "
                          << diff << ": " << to_double(out[std::max<std::int64_t>(diff, 0)]) << " vs "
                          << to_double(expect[std::max<std::int64_t>(diff, 0)]);
      auto in_place = x;
      transform(std::span<T>(in_place), o);
      ASSERT_EQ(first_bit_difference<T>(in_place, out), -1) << "in place differs from out of place, n = 2^" << L;
    }
  }
}

TEST(CpuBackend, F64MatchesReferenceBitForBit) { expect_matches_reference<double>(20); }
TEST(CpuBackend, F32MatchesReferenceBitForBit) { expect_matches_reference<float>(20); }
TEST(CpuBackend, F16MatchesReferenceBitForBit) { expect_matches_reference<f16>(18); }
TEST(CpuBackend, Bf16MatchesReferenceBitForBit) { expect_matches_reference<bf16>(18); }
TEST(CpuBackend, I32MatchesReferenceBitForBit) { expect_matches_reference<std::int32_t>(20); }
TEST(CpuBackend, I64MatchesReferenceBitForBit) { expect_matches_reference<std::int64_t>(20); }

TEST(CpuBackend, LargeF32TransformMatchesReference) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  const std::size_t n = std::size_t{1} << 26;
  auto x = random_vector<float>(n, rng);
  auto expect = x;
  reference::transform(std::span<float>(expect));
  transform(std::span<float>(x), {.threads = 2});
  ASSERT_EQ(first_bit_difference<float>(x, expect), -1);
}

// Error of the unnormalized transform against binary128, derived from the formats and log2 n:
// stage s rounds every element once, |delta| <= u |v| (u = the compute type's unit roundoff), so
// its error vector has norm <= u ||y_s||; the remaining stages multiply that norm by exactly
// sqrt(2^(L-s)), so each stage contributes at most u ||y|| to the output (||y|| = sqrt(n) ||x||).
// In the worst case the L contributions align (L u ||y||); rounding errors of random data are
// uncorrelated with mean zero and E[delta^2] <= u^2 / 3 (the error is uniform within +-ulp/2 and
// ulp <= 2u|v|), so they add in quadrature: rms <= sqrt(L / 3) u ||y||, and one rounding to the
// storage format (16-bit formats computed in float) adds u_s^2 / 3. The limit is twice that:
//   ||y - y*||_2 <= (2 / sqrt(3)) sqrt(L u_c^2 + u_s^2) ||y||.
// Measured (N(0,1) inputs, 30 draws each, plain transforms, the worst case): 0.40-0.47 sqrt(L) u
// ||y|| from n = 2^8 on (about 2.5x below the limit), up to 0.95 u ||y|| at n = 2 (below the
// limit 1.15 u ||y||, and below the rigorous L u ||y|| there); stabilized transforms are more
// accurate. At n = 16 a draw would have to exceed its mean by 2.7x in norm, a chi-square(16)
// variable 7.4x its mean: probability < 1e-15. The limit separates the formats: a 16-bit path
// that stored bfloat16 instead of binary16 errs by ~3.4 (float compute) to ~15 (n = 2^16) times
// the binary16 limit, which the test checks as well.
template <class T>
double error_of(const std::vector<T>& x, const std::vector<__float128>& exact, Stabilization s, Compute compute) {
  auto y = x;
  transform(std::span<T>(y), {.stabilization = s, .compute = compute});
  double err = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double d = to_double(y[i]) - static_cast<double>(exact[i]);
    err += d * d;
  }
  return std::sqrt(err);
}

template <class T>
void expect_error_bound(Compute compute, double u_compute, double u_store) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (int L : {1, 4, 8, 12, 16}) {
    const std::size_t n = std::size_t{1} << L;
    const auto x = random_vector<T>(n, rng);
    std::vector<__float128> q(n);
    double xnorm2 = 0;
    for (std::size_t i = 0; i < n; ++i) q[i] = to_double(x[i]), xnorm2 += to_double(x[i]) * to_double(x[i]);
    reference::transform_quad(std::span<__float128>(q));
    const double ynorm = std::sqrt(double(n) * xnorm2);
    const double bound = 2.0 / std::sqrt(3.0) * std::sqrt(L * u_compute * u_compute + u_store * u_store) * ynorm;
    for (Stabilization s :
         {Stabilization::none, Stabilization::kahan, Stabilization::neumaier, Stabilization::wide_onchip, Stabilization::wide_carry}) {
      if (is_wide(s) && std::is_same_v<T, double>) continue;
      EXPECT_LE(error_of(x, q, s, compute), bound) << "n = 2^" << L << " stabilization " << to_string(s);
    }
    // The same data in bfloat16 misses the binary16 limit (by 3x or more, from n = 2^8): the limit
    // tells the formats apart.
    if constexpr (std::is_same_v<T, f16>)
      if (L >= 8) {
        std::vector<bf16> xb(n);
        std::vector<__float128> qb(n);
        for (std::size_t i = 0; i < n; ++i) xb[i] = bf16(static_cast<float>(x[i])), qb[i] = static_cast<float>(xb[i]);
        reference::transform_quad(std::span<__float128>(qb));
        EXPECT_GT(error_of(xb, qb, Stabilization::none, compute), bound) << "n = 2^" << L << ": bf16 passes the f16 limit";
      }
  }
}

TEST(CpuBackend, ErrorBoundF64) { expect_error_bound<double>(Compute::f32, 0x1p-53, 0); }
TEST(CpuBackend, ErrorBoundF32) { expect_error_bound<float>(Compute::f32, 0x1p-24, 0); }
TEST(CpuBackend, ErrorBoundF16Storage) { expect_error_bound<f16>(Compute::storage, 0x1p-11, 0); }
TEST(CpuBackend, ErrorBoundBf16Storage) { expect_error_bound<bf16>(Compute::storage, 0x1p-8, 0); }
TEST(CpuBackend, ErrorBoundF16InFloat) { expect_error_bound<f16>(Compute::f32, 0x1p-24, 0x1p-11); }
TEST(CpuBackend, ErrorBoundBf16InFloat) { expect_error_bound<bf16>(Compute::f32, 0x1p-24, 0x1p-8); }

TEST(CpuBackend, IntegersExactAgainstSylvester) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (int L = 0; L <= 12; ++L) {
    const std::size_t n = std::size_t{1} << L;
    const auto x = random_vector<std::int64_t>(n, rng);
    std::vector<std::int64_t> expect(n), y(n);
    reference::sylvester(std::span<const std::int64_t>(x), std::span<std::int64_t>(expect));
    for (Algorithm a : {Algorithm::folklore, Algorithm::alman_rao}) {
      transform(std::span<const std::int64_t>(x), std::span<std::int64_t>(y), {.algorithm = a});
      ASSERT_EQ(y, expect) << "n = 2^" << L;
    }
  }
}

// Batches with stride and distance: every transform equals the reference, elements outside the
// layout are untouched, and the result does not depend on the thread count.
template <class T>
void expect_batched_layout(Shape shape, const Options& o) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  Plan plan(shape, dtype_of<T>(), o);
  const auto extent = static_cast<std::size_t>(plan.extent());
  const auto in = random_vector<T>(extent, rng);
  const T poison = from_double<T>(-7);
  std::vector<T> out(extent, poison);
  plan.execute(std::span<const T>(in), std::span<T>(out));
  std::vector<bool> touched(extent, false);
  const auto dist = plan.shape().distance;
  for (std::int64_t t = 0; t < shape.batch; ++t) {
    std::vector<T> x(shape.n);
    for (std::int64_t j = 0; j < shape.n; ++j) {
      x[j] = in[t * dist + j * shape.stride];
      touched[t * dist + j * shape.stride] = true;
    }
    reference::transform(std::span<T>(x), o);
    for (std::int64_t j = 0; j < shape.n; ++j)
      ASSERT_EQ(std::memcmp(&out[t * dist + j * shape.stride], &x[j], sizeof(T)), 0)
          << "transform " << t << " element " << j << " n " << shape.n << " " << describe(o);
  }
  for (std::size_t i = 0; i < extent; ++i)
    if (!touched[i]) ASSERT_EQ(std::memcmp(&out[i], &poison, sizeof(T)), 0) << "gap element " << i << " was written";
  // In place over the same layout, with another thread count, gives the same bits.
  auto inplace = in;
  Options other = o;
  other.threads = o.threads == 1 ? 2 : 1;
  Plan plan2(shape, dtype_of<T>(), other);
  plan2.execute(std::span<T>(inplace));
  for (std::size_t i = 0; i < extent; ++i)
    if (touched[i]) ASSERT_EQ(std::memcmp(&inplace[i], &out[i], sizeof(T)), 0) << "in place, element " << i;
}

TEST(CpuBackend, BatchesStridesAndDistances) {
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{8}, std::int64_t{1} << 10, std::int64_t{1} << 17}) {
    expect_batched_layout<float>({.n = n, .batch = 3}, {.threads = 2});
    expect_batched_layout<float>({.n = n, .batch = 3, .stride = 2, .distance = 2 * n + 5}, {.threads = 1});
    expect_batched_layout<double>({.n = n, .batch = 4, .stride = 4, .distance = 1}, {.stabilization = Stabilization::neumaier});
    expect_batched_layout<f16>({.n = n, .batch = 2, .stride = 3, .distance = 3 * n}, {.normalization = Normalization::orthonormal});
    expect_batched_layout<std::int32_t>({.n = n, .batch = 5, .stride = 1, .distance = n + 1}, {.algorithm = Algorithm::alman_rao});
    expect_batched_layout<std::int64_t>({.n = n, .batch = 2, .stride = 2, .distance = 1}, {.check_overflow = true});
  }
}

TEST(CpuBackend, ManySmallTransforms) {
  for (std::int64_t log_n : {7, 11, 15}) expect_batched_layout<float>({.n = std::int64_t{1} << log_n, .batch = 64}, {});
}

TEST(CpuBackend, IntegerOverflowWrapsOrIsReported) {
  const std::int32_t big = 1 << 30;
  std::vector<std::int32_t> x{big, big, big, big};
  // Unchecked: exact modulo 2^32 (H x = [4 big, 0, 0, 0], and 4 * 2^30 = 2^32 wraps to 0).
  auto wrapped = x;
  transform(std::span<std::int32_t>(wrapped));
  EXPECT_EQ(wrapped, (std::vector<std::int32_t>{0, 0, 0, 0}));
  auto checked = x;
  try {
    transform(std::span<std::int32_t>(checked), {.check_overflow = true});
    FAIL() << "overflow not reported";
  } catch (const pagh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("overflow at element 0 of transform 0"), std::string::npos) << e.what();
  }
  // Exact division by n is checked too.
  std::vector<std::int64_t> odd{1, 0, 0, 0};
  EXPECT_THROW(transform(std::span<std::int64_t>(odd), {.normalization = Normalization::inverse, .check_overflow = true}),
               pagh::Error);
  // int64 values whose transform needs more than 64 bits.
  std::vector<std::int64_t> huge(8, std::numeric_limits<std::int64_t>::max() / 4);
  EXPECT_THROW(transform(std::span<std::int64_t>(huge), {.check_overflow = true}), pagh::Error);
}

TEST(CpuBackend, RoundTripsWithInverse) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  const auto x = random_vector<std::int64_t>(1 << 14, rng);
  auto y = x;
  transform(std::span<std::int64_t>(y));
  transform(std::span<std::int64_t>(y), {.normalization = Normalization::inverse, .check_overflow = true});
  EXPECT_EQ(y, x);
}

void expect_error_containing(const std::function<void()>& f, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing '" << text << "'";
  } catch (const pagh::Error& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(CpuBackend, RejectsBadArguments) {
  expect_error_containing([] { Plan({.n = 3}, DType::f32); }, "n = 3 is not a power of two");
  expect_error_containing([] { Plan({.n = 0}, DType::f32); }, "n = 0 is not a power of two");
  expect_error_containing([] { Plan({.n = 8, .batch = 0}, DType::f32); }, "batch = 0");
  expect_error_containing([] { Plan({.n = 8, .stride = 0}, DType::f32); }, "stride = 0");
  expect_error_containing([] { Plan({.n = 8, .distance = -1}, DType::f32); }, "distance = -1");
  expect_error_containing([] { Plan({.n = 8, .batch = 2, .distance = 4}, DType::f32); }, "transforms overlap");
  expect_error_containing([] { Plan({.n = std::int64_t{1} << 62, .stride = 4}, DType::f32); }, "overflows 64-bit");
  expect_error_containing([] { Plan({.n = 8}, DType::i32, {.stabilization = Stabilization::kahan}); }, "floating types only");
  expect_error_containing([] { Plan({.n = 8}, DType::i64, {.normalization = Normalization::orthonormal}); }, "not exact");
  expect_error_containing([] { Plan({.n = 8}, DType::f32, {.stabilization = Stabilization::neumaier, .algorithm = Algorithm::alman_rao}); },
                          "alman_rao has no stabilized variant");
  expect_error_containing([] { Plan({.n = 8}, DType::f32, {.threads = -1}); }, "threads = -1");
#if !defined(FWHT_HAVE_CUDA_BACKEND)
  expect_error_containing([] { Plan({.n = 8}, DType::f32, {}, Backend::cuda); }, "no CUDA backend");
#endif
  Plan plan({.n = 8}, DType::f32);
  std::vector<float> small(4), ok(8);
  std::vector<double> wrong(8);
  expect_error_containing([&] { plan.execute(std::span<float>(small)); }, "shorter than the plan's extent 8");
  expect_error_containing([&] { plan.execute(std::span<double>(wrong)); }, "does not match the plan's f32");
  expect_error_containing([&] { plan.execute(ok.data(), ok.data() + 1); }, "overlap");
  expect_error_containing([&] { plan.execute(nullptr, ok.data()); }, "null data pointer");
  expect_error_containing([&] { plan.execute(ok.data(), ok.data(), nullptr); }, "CPU plan");
  std::vector<float> three(3), four(4);
  expect_error_containing([&] { transform(std::span<float>(three)); }, "not a power of two");
  expect_error_containing([&] { transform(std::span<const float>(four), std::span<float>(three)); }, "output has 3");
  expect_error_containing([] { parse_dtype("f8"); }, "expected f64|f32|f16|bf16|i32|i64");
  expect_error_containing([] { parse_stabilization("kahn"); }, "'kahn'");
  EXPECT_EQ(parse_stabilization("wide_onchip"), Stabilization::wide_onchip);
  EXPECT_EQ(to_string(Stabilization::wide_onchip), "wide_onchip");
  EXPECT_EQ(parse_stabilization("wide_carry"), Stabilization::wide_carry);
  EXPECT_EQ(to_string(Stabilization::wide_carry), "wide_carry");
  expect_error_containing([] { Plan({.n = 8}, DType::f64, {.stabilization = Stabilization::wide_carry}); }, "wide_carry");
  expect_error_containing([] { Plan({.n = 8}, DType::f64, {.stabilization = Stabilization::wide_onchip}); },
                          "f64 has none");
  expect_error_containing([] { Plan({.n = 8}, DType::i32, {.stabilization = Stabilization::wide_onchip}); },
                          "floating types only");
  expect_error_containing(
      [] { Plan({.n = 8}, DType::f32, {.stabilization = Stabilization::wide_onchip, .algorithm = Algorithm::alman_rao}); },
      "alman_rao has no stabilized variant");
}

// describe() names the kernels' instruction set (the one select_kernels picks under this run's
// cap, isa_main.cpp) and the schedule.
TEST(CpuBackend, LimitCpuIsaCapsThePlansMadeAfterIt) {
  const CpuIsa before = cpu_isa();
  limit_cpu_isa(CpuIsa::generic);
  EXPECT_EQ(cpu_isa(), CpuIsa::generic);
  EXPECT_NE(Plan({.n = 1 << 10}, DType::f32, {.threads = 1}).describe().text.find("generic kernels"), std::string::npos);
  limit_cpu_isa(before);  // this run's cap again (isa_main.cpp)
  EXPECT_EQ(cpu_isa(), before);
}

TEST(CpuBackend, DescribeNamesKernelsAndRoute) {
  const std::string isa = cpu::select_kernels<float>().isa;
  const std::string plain = Plan({.n = 1 << 10}, DType::f32, {.threads = 1}).describe().text;
  EXPECT_EQ(plain, "cpu plan, " + isa + " kernels, in the output buffer, cache-oblivious blocks\n");
  const std::string stabilized =
      Plan({.n = 1 << 10}, DType::f32, {.stabilization = Stabilization::neumaier, .threads = 1}).describe().text;
  EXPECT_EQ(stabilized, "cpu plan, " + isa + " kernels, per-thread buffer\n");
  const std::string strided = Plan({.n = 1 << 18, .stride = 2}, DType::f32, {.threads = 1}).describe().text;
  EXPECT_EQ(strided, "cpu plan, " + isa + " kernels, chunk and tile passes\n");
}

TEST(CpuBackend, NamesRoundTrip) {
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::i32, DType::i64}) EXPECT_EQ(parse_dtype(to_string(t)), t);
  EXPECT_EQ(parse_algorithm("alman_rao"), Algorithm::alman_rao);
  EXPECT_EQ(parse_normalization("orthonormal"), Normalization::orthonormal);
  EXPECT_EQ(parse_compute("storage"), Compute::storage);
  EXPECT_EQ(parse_backend("cuda"), Backend::cuda);
}

}  // namespace
}  // namespace fwht::test
