// The 16-bit formats' arithmetic rebuilt from the IEEE 754 definition, independently of
// fwht/src/common/arithmetic.hpp (whose Rounded type, normalization factor and carry constants the
// reference and the CPU backend share, so a bug there is invisible when they are compared with
// each other):
//   - rounding to binary16 / bfloat16: round to nearest, ties to even, on the exact value scaled so
//     that the format's quantum at that magnitude is 1 (std::nearbyint, default rounding mode),
//     gradual underflow below 2^emin, overflow to infinity past the largest finite value;
//   - Compute::storage: every butterfly a +- b and the normalization product v * s rounded once;
//     a sum or product of two values of these formats is computed in double first, which is exact
//     for binary16 and, for bfloat16, a double rounding that is innocuous because 53 >= 2 * 8 + 2
//     (Figueroa, "When is double rounding innocuous?", 1995);
//   - the normalization factor s = 1/sqrt(n) or 1/n rounded to the format (from long double);
//   - wide_onchip / wide_carry: stage groups in float, rounded to the format at each boundary;
//     wide_carry resumes a later group from x + sign(x) q u, q = clamp(floor((|w| - |x|) / u + 1/2),
//     -128, 127), u = 2^-8 of the format's (normal) ulp in w's float binade, i.e.
//     u = 2^(max(ilogb w, -126) - (p - 1) - 8) for p significand bits; x = 0 or non-finite carries
//     nothing.
// Every case is compared bit for bit with reference::transform and with the CPU backend.
#include <cfenv>
#include <cmath>
#include <limits>

#include "test_support.hpp"

namespace fwht::test {
namespace {

struct Format {
  int p;     // significand bits, the hidden one included
  int emin;  // exponent of the smallest normal value
  int emax;  // exponent of the largest finite value
};
constexpr Format kF16{11, -14, 15};
constexpr Format kBf16{8, -126, 127};
template <class T> constexpr Format format_of();
template <> constexpr Format format_of<f16>() { return kF16; }
template <> constexpr Format format_of<bf16>() { return kBf16; }

// x (a double, or a long double) rounded to the format, as a double (every value of both formats
// is a double).
template <class Real>
double round_to(Real x, Format f) {
  if (x == 0 || !std::isfinite(x)) return static_cast<double>(x);
  const int e = std::max<int>(std::ilogb(x), f.emin);      // the binade, or the subnormal range
  const int quantum = e - (f.p - 1);                        // exponent of the last significand bit
  const Real r = std::nearbyint(std::ldexp(x, -quantum));   // exact scaling, then ties-to-even
  const double y = static_cast<double>(std::ldexp(r, quantum));
  const double largest = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.p), f.emax);
  return std::fabs(y) > largest ? std::copysign(INFINITY, static_cast<double>(x)) : y;
}

// The format's value as a double, through the bits' IEEE layout (not the library's conversion).
template <class T>
double value_of(T v) {
  const Format f = format_of<T>();
  const int mantissa_bits = f.p - 1, exponent_bits = std::is_same_v<T, f16> ? 5 : 8, bias = f.emax;
  const unsigned bits = v.bits, exponent = (bits >> mantissa_bits) & ((1u << exponent_bits) - 1);
  const unsigned mantissa = bits & ((1u << mantissa_bits) - 1);
  const double sign = (bits >> 15) ? -1.0 : 1.0;
  if (exponent == (1u << exponent_bits) - 1) return mantissa ? std::nan("") : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(double(mantissa), f.emin - mantissa_bits);
  return sign * std::ldexp(double(mantissa + (1u << mantissa_bits)), int(exponent) - bias - mantissa_bits);
}

// The butterflies of stages [first, last) at strides 2^first.. in type W, with rounding r after each.
template <class W, class R>
void stages(std::vector<W>& x, int first, int last, R r) {
  for (int s = first; s < last; ++s) {
    const std::size_t h = std::size_t{1} << s;
    for (std::size_t i = 0; i < x.size(); i += 2 * h)
      for (std::size_t j = i; j < i + h; ++j) {
        const W a = x[j], b = x[j + h];
        x[j] = r(a + b);
        x[j + h] = r(a - b);
      }
  }
}

long double exact_factor(Normalization norm, std::size_t n) {
  if (norm == Normalization::orthonormal) return 1.0L / std::sqrt(static_cast<long double>(n));
  if (norm == Normalization::inverse) return 1.0L / static_cast<long double>(n);
  return 1.0L;
}

// The expected result of a 16-bit transform (values as doubles), built from the definitions above.
template <class T>
std::vector<double> expected(const std::vector<T>& in, const Options& o) {
  const Format f = format_of<T>();
  const std::size_t n = in.size();
  const int L = std::countr_zero(n);
  const auto to_format = [f](double v) { return round_to(v, f); };
  if (o.compute == Compute::f32) {  // float registers, one rounding to the format on store
    std::vector<float> w(n);
    for (std::size_t i = 0; i < n; ++i) w[i] = static_cast<float>(value_of(in[i]));
    stages(w, 0, L, [](float v) { return v; });
    const float s = static_cast<float>(exact_factor(o.normalization, n));
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = round_to(o.normalization == Normalization::none ? w[i] : w[i] * s, f);
    return out;
  }
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = value_of(in[i]);
  if (o.stabilization == Stabilization::none) {
    stages(x, 0, L, to_format);
  } else {  // wide_onchip / wide_carry: groups in float
    const std::vector<int> groups = stage_groups(L);
    std::vector<float> w(x.begin(), x.end());
    int first = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      stages(w, first, first + groups[g], [](float v) { return v; });
      first += groups[g];
      for (std::size_t i = 0; i < n; ++i) {
        x[i] = round_to(static_cast<double>(w[i]), f);
        double resumed = x[i];
        if (o.stabilization == Stabilization::wide_carry && x[i] != 0 && std::isfinite(x[i])) {
          const double u = std::ldexp(1.0, std::max(std::ilogb(w[i]), -126) - (f.p - 1) - 8);
          const double q = std::clamp(std::floor((std::fabs(double(w[i])) - std::fabs(x[i])) / u + 0.5), -128.0, 127.0);
          resumed = std::copysign(std::fabs(x[i]) + q * u, x[i]);
        }
        w[i] = static_cast<float>(resumed);
        EXPECT_EQ(double(w[i]), resumed) << "the resumed value must be a float";
      }
    }
  }
  if (o.normalization != Normalization::none) {
    const double s = round_to(exact_factor(o.normalization, n), f);
    for (double& v : x) v = round_to(v * s, f);
  }
  return x;
}

template <class T>
void expect_bits(const std::vector<T>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = value_of(got[i]);
    ASSERT_TRUE(g == want[i] && std::signbit(g) == std::signbit(want[i]))
        << what << ": element " << i << " is " << g << ", the definition gives " << want[i];
  }
}

template <class T>
void expect_definition(Compute compute, std::initializer_list<Stabilization> modes) {
  FWHT_TRACE_SEED();
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  auto rng = test_rng();
  for (int L : {0, 1, 2, 3, 5, 8, 11, 13, 14, 15, 17}) {
    const std::size_t n = std::size_t{1} << L;
    auto x = random_vector<T>(n, rng);
    // Also tiny values (gradual underflow) and large ones (near the top of f16's range).
    for (std::size_t i = 0; i < n; i += 5) x[i] = from_double<T>(to_double(x[i]) * 0x1p-20);
    for (std::size_t i = 3; i < n; i += 97) x[i] = from_double<T>(to_double(x[i]) * 64);
    for (Stabilization s : modes)
      for (Normalization norm : {Normalization::none, Normalization::orthonormal, Normalization::inverse}) {
        const Options o{.normalization = norm, .stabilization = s, .compute = compute};
        const std::string what = std::string(to_string(dtype_of<T>())) + " n = 2^" + std::to_string(L) + " " + describe(o);
        const auto want = expected(x, o);
        auto ref = x;
        reference::transform(std::span<T>(ref), o);
        ASSERT_NO_FATAL_FAILURE(expect_bits(ref, want, "reference " + what));
        std::vector<T> cpu(n);
        transform(std::span<const T>(x), std::span<T>(cpu), o);
        ASSERT_NO_FATAL_FAILURE(expect_bits(cpu, want, "cpu backend " + what));
      }
  }
}

TEST(SixteenBitDefinition, RoundingRuleAgreesWithTheConversions) {
  // The rule above against the compiler's _Float16 conversion and the bfloat16 conversion on
  // random float bit patterns, ties included: it is the rule the other tests rely on.
  FWHT_TRACE_SEED();
  auto rng = test_rng();
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    std::uint32_t u = bits(rng);
    if (i % 3 == 0) u = (u & 0xffffe000u) | 0x1000u;  // f16 ties
    if (i % 3 == 1) u = (u & 0xffff0000u) | 0x8000u;  // bf16 ties
    const float v = std::bit_cast<float>(u);
    if (std::isnan(v)) continue;
    ASSERT_EQ(round_to(double(v), kF16), double(static_cast<_Float16>(v))) << "float bits " << u;
    const double b = value_of(bf16::from_bits(bf16::from_float(v)));
    ASSERT_EQ(round_to(double(v), kBf16), b) << "float bits " << u;
  }
  EXPECT_EQ(round_to(65520.0, kF16), INFINITY);  // halfway past 65504 rounds to infinity
  EXPECT_EQ(round_to(65519.0, kF16), 65504.0);
  EXPECT_EQ(round_to(0x1p-25, kF16), 0.0);               // a tie with zero: even
  EXPECT_EQ(round_to(0x1.8p-24, kF16), 0x1p-23);         // 1.5 quanta: to even (2)
}

TEST(SixteenBitDefinition, F16StorageComputeEveryOperationRounded) {
  expect_definition<f16>(Compute::storage, {Stabilization::none, Stabilization::wide_onchip, Stabilization::wide_carry});
}
TEST(SixteenBitDefinition, Bf16StorageComputeEveryOperationRounded) {
  expect_definition<bf16>(Compute::storage, {Stabilization::none, Stabilization::wide_onchip, Stabilization::wide_carry});
}
TEST(SixteenBitDefinition, F16InFloatRoundedOnStore) { expect_definition<f16>(Compute::f32, {Stabilization::none}); }
TEST(SixteenBitDefinition, Bf16InFloatRoundedOnStore) { expect_definition<bf16>(Compute::f32, {Stabilization::none}); }

// The normalization factor alone, where it matters most: 1/sqrt(2^L) for odd L is not a
// power of two, so a factor left in float (not rounded to the format) changes products.
TEST(SixteenBitDefinition, NormalizationFactorIsRoundedToTheFormat) {
  for (int L : {1, 3, 5, 7}) {
    const std::size_t n = std::size_t{1} << L;
    std::vector<f16> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = f16(static_cast<float>(1 + (i % 7) * 0.125 + (i % 3) * 0.0009765625));
    const Options o{.normalization = Normalization::orthonormal, .compute = Compute::storage};
    auto ref = x;
    reference::transform(std::span<f16>(ref), o);
    ASSERT_NO_FATAL_FAILURE(expect_bits(ref, expected(x, o), "n = 2^" + std::to_string(L)));
  }
}

}  // namespace
}  // namespace fwht::test
