// The reference backend against the definition (Sylvester product), the quad-precision transform
// and the algebraic properties of the Walsh-Hadamard transform. The 16-bit conversions against
// GCC's own _Float16.
#include <cmath>
#include <limits>

#include "test_support.hpp"

namespace fwht::test {
namespace {

constexpr int kMaxSylvesterLog = 12;

std::vector<double> sylvester_of(const std::vector<double>& x) {
  std::vector<double> y(x.size());
  reference::sylvester(std::span<const double>(x), std::span<double>(y));
  return y;
}

double norm2(const std::vector<double>& v) {
  long double s = 0;
  for (double x : v) s += static_cast<long double>(x) * x;
  return std::sqrt(static_cast<double>(s));
}

TEST(Half, F16ConversionMatchesCompilerFloat16) {
  FWHT_TRACE_SEED();
  // Every f16 bit pattern converts to float exactly and back unchanged (NaNs stay NaN).
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const float f = f16::to_float(static_cast<std::uint16_t>(b));
    const auto ref = static_cast<float>(std::bit_cast<_Float16>(static_cast<std::uint16_t>(b)));
    if (std::isnan(ref)) {
      ASSERT_TRUE(std::isnan(f)) << b;
      continue;
    }
    ASSERT_EQ(f, ref) << "bits " << b;
    ASSERT_EQ(f16::from_float(f), b) << "round trip of bits " << b;
  }
  // Random floats over the whole range, with rounding ties included, against GCC's conversion.
  auto rng = test_rng();
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 2000000; ++i) {
    std::uint32_t u = bits(rng);
    if (i % 4 == 0) u = (u & 0xffffe000u) | 0x1000u;  // exactly halfway between two f16 values
    const float f = std::bit_cast<float>(u);
    if (std::isnan(f)) continue;
    const auto ref = std::bit_cast<std::uint16_t>(static_cast<_Float16>(f));
    ASSERT_EQ(f16::from_float(f), ref) << "float bits " << u;
  }
}

TEST(Half, Bf16ConversionRoundsToNearestEven) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 2000000; ++i) {
    std::uint32_t u = bits(rng);
    if (i % 4 == 0) u = (u & 0xffff0000u) | 0x8000u;  // ties
    const float f = std::bit_cast<float>(u);
    if (std::isnan(f) || std::isinf(f)) continue;
    // Independent rule: the nearer of the two neighbouring bf16 values, the even one on a tie.
    const std::uint32_t lo = u & 0xffff0000u, hi = lo + 0x10000u;
    const double dlo = std::fabs(static_cast<double>(std::bit_cast<float>(lo)) - f);
    if (std::isinf(std::bit_cast<float>(hi))) continue;  // next bf16 value up is infinite
    const double dhi = std::fabs(static_cast<double>(std::bit_cast<float>(hi)) - f);
    const bool pick_hi = dhi < dlo || (dhi == dlo && ((lo >> 16) & 1u));
    const auto expect = static_cast<std::uint16_t>((pick_hi ? hi : lo) >> 16);
    ASSERT_EQ(bf16::from_float(f), expect) << "float bits " << u;
  }
  EXPECT_TRUE(std::isnan(static_cast<float>(bf16(std::nanf("")))));
}

TEST(Reference, ScalarMatchesSylvesterF64) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (int L = 0; L <= kMaxSylvesterLog; ++L) {
    const std::size_t n = std::size_t{1} << L;
    auto x = random_vector<double>(n, rng);
    const auto expect = sylvester_of(x);
    reference::transform(std::span<double>(x));
    double err2 = 0;
    for (std::size_t i = 0; i < n; ++i) err2 += (x[i] - expect[i]) * (x[i] - expect[i]);
    // Derived as in cpu_test.cpp (expect_error_bound): L stages of double roundings add in
    // quadrature, rms <= sqrt(L / 3) u ||y|| with u = 2^-53, and the limit is twice that; the
    // Sylvester sum in long double adds about sqrt(n) 2^-64 ||y|| (a random walk of n roundings),
    // allowed twice. Measured: ~0.47 sqrt(L) u ||y||, 2.5x below the limit.
    const double ynorm = norm2(expect);
    const double bound = (2.0 / std::sqrt(3.0) * std::sqrt(double(L)) * 0x1p-53 + 2.0 * std::sqrt(double(n)) * 0x1p-64) * ynorm;
    EXPECT_LE(std::sqrt(err2), bound) << "n = " << n;
  }
}

TEST(Reference, IntegersExactAgainstSylvesterForEveryAlgorithm) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (int L = 0; L <= kMaxSylvesterLog; ++L) {
    const std::size_t n = std::size_t{1} << L;
    const auto x = random_vector<std::int64_t>(n, rng);
    std::vector<std::int64_t> expect(n);
    reference::sylvester(std::span<const std::int64_t>(x), std::span<std::int64_t>(expect));
    for (Algorithm a : {Algorithm::folklore, Algorithm::alman_rao}) {
      for (bool checked : {false, true}) {
        auto y = x;
        reference::transform(std::span<std::int64_t>(y), {.algorithm = a, .check_overflow = checked});
        ASSERT_EQ(y, expect) << "n = " << n << " algorithm " << to_string(a) << " checked " << checked;
        std::vector<std::int32_t> y32(x.begin(), x.end());
        reference::transform(std::span<std::int32_t>(y32), {.algorithm = a, .check_overflow = checked});
        ASSERT_EQ(std::vector<std::int64_t>(y32.begin(), y32.end()), expect) << "int32, n = " << n;
      }
    }
  }
}

TEST(Reference, QuadMatchesSylvesterAndNormalizes) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (int L : {0, 1, 5, 10, 11}) {
    const std::size_t n = std::size_t{1} << L;
    const auto x = random_vector<double>(n, rng);
    const auto expect = sylvester_of(x);  // long double accumulation
    for (Algorithm a : {Algorithm::folklore, Algorithm::alman_rao}) {
      for (Normalization norm : {Normalization::none, Normalization::orthonormal, Normalization::inverse}) {
        std::vector<__float128> q(x.begin(), x.end());
        reference::transform_quad(std::span<__float128>(q), norm, a);
        const double factor = norm == Normalization::none ? 1.0 : norm == Normalization::inverse ? 1.0 / n : 1.0 / std::sqrt(double(n));
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_NEAR(static_cast<double>(q[i]), expect[i] * factor, 1e-15 * (1 + std::fabs(expect[i] * factor)) * (L + 1))
              << "n = " << n << " i = " << i;
      }
    }
  }
}

TEST(Reference, KnownSpectra) {
  for (int L : {0, 3, 8}) {
    const std::size_t n = std::size_t{1} << L;
    // The transform of the delta at k is row k of H: (-1)^popcount(k & f).
    for (std::size_t k : {std::size_t{0}, n - 1, n / 2}) {
      std::vector<std::int32_t> x(n, 0);
      x[k] = 1;
      reference::transform(std::span<std::int32_t>(x));
      for (std::size_t f = 0; f < n; ++f) ASSERT_EQ(x[f], (std::popcount(k & f) % 2) ? -1 : 1) << "k " << k << " f " << f;
    }
    // The constant vector transforms to n times the delta at 0.
    std::vector<float> ones(n, 1.0f);
    reference::transform(std::span<float>(ones));
    for (std::size_t f = 0; f < n; ++f) ASSERT_EQ(ones[f], f == 0 ? float(n) : 0.0f);
  }
}

TEST(Reference, InvolutionParsevalLinearity) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (int L : {1, 4, 10, 16}) {
    const std::size_t n = std::size_t{1} << L;
    // H(Hx) = n x exactly for integers.
    const auto xi = random_vector<std::int64_t>(n, rng);
    auto yi = xi;
    reference::transform(std::span<std::int64_t>(yi));
    reference::transform(std::span<std::int64_t>(yi));
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(yi[i], static_cast<std::int64_t>(n) * xi[i]);
    // Parseval: ||Hx||^2 = n ||x||^2, and the orthonormal transform is an involution.
    const auto x = random_vector<double>(n, rng);
    auto y = x;
    reference::transform(std::span<double>(y));
    EXPECT_NEAR(norm2(y), std::sqrt(double(n)) * norm2(x), 1e-12 * L * norm2(y));
    auto z = x;
    reference::transform(std::span<double>(z), {.normalization = Normalization::orthonormal});
    reference::transform(std::span<double>(z), {.normalization = Normalization::orthonormal});
    for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(z[i], x[i], 1e-13 * L);
    // Linearity, exactly in integers: H(3a - 2b) = 3Ha - 2Hb.
    const auto a = random_vector<std::int64_t>(n, rng), b = random_vector<std::int64_t>(n, rng);
    std::vector<std::int64_t> mix(n);
    for (std::size_t i = 0; i < n; ++i) mix[i] = 3 * a[i] - 2 * b[i];
    auto ha = a, hb = b;
    reference::transform(std::span<std::int64_t>(ha));
    reference::transform(std::span<std::int64_t>(hb));
    reference::transform(std::span<std::int64_t>(mix));
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(mix[i], 3 * ha[i] - 2 * hb[i]);
  }
}

TEST(Reference, XorConvolutionTheorem) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (int L : {0, 2, 6, 9}) {
    const std::size_t n = std::size_t{1} << L;
    const auto a = random_vector<std::int64_t>(n, rng), b = random_vector<std::int64_t>(n, rng);
    std::vector<std::int64_t> direct(n, 0);
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t k = 0; k < n; ++k) direct[j ^ k] += a[j] * b[k];
    auto ha = a, hb = b;
    reference::transform(std::span<std::int64_t>(ha));
    reference::transform(std::span<std::int64_t>(hb));
    for (std::size_t i = 0; i < n; ++i) ha[i] *= hb[i];
    reference::transform(std::span<std::int64_t>(ha), {.normalization = Normalization::inverse, .check_overflow = true});
    EXPECT_EQ(ha, direct) << "n = " << n;
  }
}

TEST(Reference, StabilizedVariantsAreMoreAccurateOnAverage) {
  // Compensation cannot be worse than plain summation by much, and on N(0,1) data in f16 it helps
  // clearly; this pins down that the formulas do what they claim (Andersson 2025, Table 4.1).
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  const std::size_t n = 1 << 12;
  double err[3] = {0, 0, 0};
  for (int trial = 0; trial < 4; ++trial) {
    const auto x = random_vector<f16>(n, rng);
    std::vector<__float128> q(n);
    for (std::size_t i = 0; i < n; ++i) q[i] = to_double(x[i]);
    reference::transform_quad(std::span<__float128>(q));
    for (int s = 0; s < 3; ++s) {
      auto y = x;
      reference::transform(std::span<f16>(y), {.stabilization = Stabilization(s), .compute = Compute::storage});
      for (std::size_t i = 0; i < n; ++i) err[s] += std::fabs(to_double(y[i]) - static_cast<double>(q[i]));
    }
  }
  EXPECT_LT(err[1], err[0]) << "kahan vs plain";
  EXPECT_LT(err[2], err[0]) << "neumaier vs plain";
}

TEST(StageGroups, CoverEveryStageInBoundedGroups) {
  for (int L = 0; L <= 40; ++L) {
    const std::vector<int> g = stage_groups(L);
    int sum = 0;
    for (int x : g) sum += x;
    EXPECT_EQ(sum, L) << "log2 n = " << L;
    EXPECT_LE(g[0], 13) << "log2 n = " << L;
    for (std::size_t k = 1; k < g.size(); ++k) {
      EXPECT_GE(g[k], 4) << "log2 n = " << L;
      EXPECT_LE(g[k], 9) << "log2 n = " << L;
    }
    EXPECT_EQ(g.size(), L <= 13 ? 1u : L <= 22 ? 2u : L <= 31 ? 3u : 4u) << "log2 n = " << L;
  }
}

// One stage group built from its definition: the Kronecker factor H_(2^g) applied at `stride`,
// i.e. the plain double transform of every gathered column of v.
void apply_group_in_double(std::vector<double>& v, std::size_t stride, int g) {
  const std::size_t len = std::size_t{1} << g;
  std::vector<double> column(len);
  for (std::size_t base = 0; base < v.size(); base += len * stride)
    for (std::size_t c = 0; c < stride; ++c) {
      for (std::size_t r = 0; r < len; ++r) column[r] = v[base + c + r * stride];
      reference::transform(std::span<double>(column));
      for (std::size_t r = 0; r < len; ++r) v[base + c + r * stride] = column[r];
    }
}

// wide_onchip built independently from its definition: each stage group in double, then one
// rounding to float per element.
TEST(Reference, WideOnchipIsDoubleWithinGroupsRoundedBetween) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (int L : {0, 3, 10, 13, 14, 15, 19, 23}) {
    const std::size_t n = std::size_t{1} << L;
    const auto x = random_vector<float>(n, rng);
    std::vector<double> wide(x.begin(), x.end());
    std::size_t stride = 1;
    for (int g : stage_groups(L)) {
      apply_group_in_double(wide, stride, g);
      stride <<= g;
      for (double& w : wide) w = static_cast<float>(w);
    }
    const std::vector<float> expect(wide.begin(), wide.end());
    auto y = x;
    reference::transform(std::span<float>(y), {.stabilization = Stabilization::wide_onchip});
    ASSERT_EQ(first_bit_difference<float>(y, expect), -1) << "log2 n = " << L;
  }
}

// wide_carry built independently: as above, but a later group starts from the rounded value x plus
// the residual byte q = clamp(floor((|w| - |x|) / u + 1/2), -128, 127) in units u of 2^-8 float ulp
// in w's binade (from std::ilogb), with x's sign; x = 0 or subnormal carries nothing.
TEST(Reference, WideCarryResumesFromTheQuantizedResidual) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (int L : {0, 10, 13, 14, 15, 19, 23}) {
    const std::size_t n = std::size_t{1} << L;
    const auto x = random_vector<float>(n, rng);
    std::vector<double> wide(x.begin(), x.end());
    std::size_t stride = 1;
    const std::vector<int> groups = stage_groups(L);
    for (std::size_t k = 0; k < groups.size(); ++k) {
      apply_group_in_double(wide, stride, groups[k]);
      stride <<= groups[k];
      for (double& w : wide) {
        const float rounded = static_cast<float>(w);
        double resumed = rounded;
        if (std::fabs(rounded) >= std::numeric_limits<float>::min() && std::isfinite(rounded)) {
          const double u = std::ldexp(1.0, std::ilogb(w) - 31);
          const double q = std::clamp(std::floor((std::fabs(w) - std::fabs(rounded)) / u + 0.5), -128.0, 127.0);
          resumed = rounded + (w < 0 ? -q : q) * u;  // q moves the magnitude
          // 2^-9 ulp, or 2^-8 where the clamp to 127 cuts a residual near +ulp/2
          EXPECT_LE(std::fabs(w - resumed), (q == 127 ? 2 : 1) * u / 2);
        }
        w = k + 1 == groups.size() ? rounded : resumed;
      }
    }
    std::vector<float> expect(wide.begin(), wide.end());
    auto y = x;
    reference::transform(std::span<float>(y), {.stabilization = Stabilization::wide_carry});
    ASSERT_EQ(first_bit_difference<float>(y, expect), -1) << "log2 n = " << L;
    if (L <= 13) {  // one group: the same as wide_onchip
      auto z = x;
      reference::transform(std::span<float>(z), {.stabilization = Stabilization::wide_onchip});
      EXPECT_EQ(first_bit_difference<float>(y, z), -1) << "log2 n = " << L;
    }
  }
}

// wide_onchip against binary128 (mean absolute error, N(0,1) inputs): with one stage group (n <=
// 2^13) the output is the wide transform rounded once and beats Neumaier; every later group
// boundary adds one rounding (bench/NOTES.md, "stabilized modes"), so from 2^14 on it is only required to beat the
// plain transform clearly (it lands within ~1.25x of Neumaier there). wide_carry loses at most 2^-9
// ulp per boundary, so it must beat Neumaier at every size.
template <class T>
void expect_wide_accuracy(Compute compute) {
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  for (int L : {8, 12, 13, 14, 17}) {
    const std::size_t n = std::size_t{1} << L;
    double err[4] = {0, 0, 0, 0};  // none, neumaier, wide_onchip, wide_carry
    const Stabilization modes[4] = {Stabilization::none, Stabilization::neumaier, Stabilization::wide_onchip,
                                    Stabilization::wide_carry};
    for (int trial = 0; trial < 2; ++trial) {
      const auto x = random_vector<T>(n, rng);
      std::vector<__float128> q(n);
      for (std::size_t i = 0; i < n; ++i) q[i] = to_double(x[i]);
      reference::transform_quad(std::span<__float128>(q));
      for (int m = 0; m < 4; ++m) {
        auto y = x;
        reference::transform(std::span<T>(y), {.stabilization = modes[m], .compute = compute});
        for (std::size_t i = 0; i < n; ++i) err[m] += std::fabs(to_double(y[i]) - static_cast<double>(q[i]));
      }
    }
    if (L <= 13)
      EXPECT_LT(err[2], err[1]) << "one group, log2 n = " << L << ": wide_onchip vs neumaier";
    else
      EXPECT_LT(2 * err[2], err[0]) << "two groups, log2 n = " << L << ": wide_onchip vs plain";
    EXPECT_LT(err[3], err[1]) << "log2 n = " << L << ": wide_carry vs neumaier";
    if (L > 13) EXPECT_LT(err[3], err[2]) << "log2 n = " << L << ": wide_carry vs wide_onchip";
  }
}
TEST(Reference, WideOnchipAccuracyF32) { expect_wide_accuracy<float>(Compute::f32); }
TEST(Reference, WideOnchipAccuracyF16) { expect_wide_accuracy<f16>(Compute::storage); }

TEST(Reference, RejectsBadArguments) {
  std::vector<float> three(3);
  EXPECT_THROW(reference::transform(std::span<float>(three)), pagh::Error);
  std::vector<std::int32_t> ints(4);
  EXPECT_THROW(reference::transform(std::span<std::int32_t>(ints), {.stabilization = Stabilization::kahan}), pagh::Error);
  std::vector<double> doubles(4), errors(4);
  EXPECT_THROW(reference::transform(std::span<double>(doubles), {.stabilization = Stabilization::wide_onchip}), pagh::Error);
  EXPECT_THROW(reference::transform(std::span<double>(doubles), {.stabilization = Stabilization::wide_carry}), pagh::Error);
  EXPECT_THROW(reference::transform_with_errors(std::span<double>(doubles), std::span<double>(errors), Stabilization::wide_onchip),
               pagh::Error);
  std::vector<double> big(8192), out(8192);
  EXPECT_THROW(reference::sylvester(std::span<const double>(big), std::span<double>(out)), pagh::Error);
  // Checked integers: overflow and inexact inverse normalization are reported.
  std::vector<std::int32_t> huge{1 << 30, 1 << 30, 1 << 30, 1 << 30};
  EXPECT_THROW(reference::transform(std::span<std::int32_t>(huge), {.check_overflow = true}), pagh::Error);
  std::vector<std::int32_t> odd{1, 0};
  EXPECT_THROW(reference::transform(std::span<std::int32_t>(odd), {.normalization = Normalization::inverse, .check_overflow = true}),
               pagh::Error);
}

}  // namespace
}  // namespace fwht::test
