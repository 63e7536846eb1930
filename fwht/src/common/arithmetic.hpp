// Scalar arithmetic types the transforms compute in, shared by the reference and the CPU backend.
//
// Storage type -> compute type:
//   double -> double, float -> float, f16/bf16 -> float (Compute::f32) or Rounded<f16|bf16>
//   (Compute::storage: every operation rounded to the 16-bit format), int32/int64 -> uint32/uint64
//   (wrapping: exact modulo 2^w) or __int128 when overflow is checked (exact, checked on store).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "fwht/half.hpp"
#include "fwht/options.hpp"

namespace fwht::detail {

using int128 = __int128;

// A value of a 16-bit format held in a float. Each operation is done in float and rounded once to
// the format, which is the correctly rounded 16-bit operation (see half.hpp).
template <class Format>
struct Rounded {
  float v = 0.0f;

  static Rounded of(float x) { return Rounded{Format::to_float(Format::from_float(x))}; }
  friend Rounded operator+(Rounded a, Rounded b) { return of(a.v + b.v); }
  friend Rounded operator-(Rounded a, Rounded b) { return of(a.v - b.v); }
  friend Rounded operator*(Rounded a, Rounded b) { return of(a.v * b.v); }
  friend Rounded operator-(Rounded a) { return Rounded{-a.v}; }
  friend bool operator<=(Rounded a, Rounded b) { return a.v <= b.v; }
};

template <class C> inline constexpr bool is_rounded = false;
template <class F> inline constexpr bool is_rounded<Rounded<F>> = true;
// Compute types with stabilized variants (the floating ones).
template <class C> inline constexpr bool is_floating_compute = std::is_floating_point_v<C> || is_rounded<C>;

template <class Format> inline Rounded<Format> abs_value(Rounded<Format> x) { return Rounded<Format>{std::fabs(x.v)}; }
inline double abs_value(double x) { return std::fabs(x); }
inline float abs_value(float x) { return std::fabs(x); }

// x * 2^k, exact for floating types while in range (Alman-Rao's prescale). 0 <= k < 64.
inline double times_pow2(double x, int k) { return x * std::bit_cast<double>(static_cast<std::uint64_t>(1023 + k) << 52); }
inline float times_pow2(float x, int k) { return x * std::bit_cast<float>(static_cast<std::uint32_t>(127 + k) << 23); }
template <class F> inline Rounded<F> times_pow2(Rounded<F> x, int k) { return Rounded<F>::of(times_pow2(x.v, k)); }
inline std::uint32_t times_pow2(std::uint32_t x, int k) { return x << k; }
inline std::uint64_t times_pow2(std::uint64_t x, int k) { return x << k; }
inline int128 times_pow2(int128 x, int k) { return x * (static_cast<int128>(1) << k); }

// x / 2 where x is known to be even (Alman-Rao's "tot"): an exact halving for floating types, an
// arithmetic shift of the two's-complement value for integers.
inline double halve(double x) { return x * 0.5; }
inline float halve(float x) { return x * 0.5f; }
template <class F> inline Rounded<F> halve(Rounded<F> x) { return Rounded<F>::of(x.v * 0.5f); }
inline std::uint32_t halve(std::uint32_t x) { return static_cast<std::uint32_t>(static_cast<std::int32_t>(x) >> 1); }
inline std::uint64_t halve(std::uint64_t x) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(x) >> 1); }
inline int128 halve(int128 x) { return x >> 1; }

// Number of nonzero base-8 digits of v: the exponent of Alman-Rao's prescale of element v.
inline int nonzero_octal_digits(std::uint64_t v) {
  int count = 0;
  for (; v != 0; v >>= 3) count += (v & 7u) != 0;
  return count;
}

// The normalization factor as a double: 1, 1/sqrt(n) or 1/n. Floating compute types round it once
// to their own format (via float for the 16-bit formats).
inline double normalization_factor(Normalization norm, std::int64_t n) {
  switch (norm) {
    case Normalization::none: return 1.0;
    case Normalization::orthonormal: return 1.0 / std::sqrt(static_cast<double>(n));
    case Normalization::inverse: return 1.0 / static_cast<double>(n);
  }
  return 1.0;
}

template <class C> inline C scale_in(double factor) { return static_cast<C>(factor); }
template <> inline Rounded<f16> scale_in<Rounded<f16>>(double f) { return Rounded<f16>::of(static_cast<float>(f)); }
template <> inline Rounded<bf16> scale_in<Rounded<bf16>>(double f) { return Rounded<bf16>::of(static_cast<float>(f)); }

// Stabilization::wide_onchip: the wide type of a compute type (exact conversion in, one rounding
// out). float -> double; a 16-bit format rounded per operation -> float. The wide value's extra
// low-order bits (29 for float, 13 or 16 for the 16-bit formats) are the group's error term.
//
// Stabilization::wide_carry: the residual of w against x = narrow(w) as one signed byte, on the
// bit patterns of the wide type: d = |w|bits - |widen(x)|bits counts steps of w's own ulp (the
// patterns between x and w all lie in w's binade), q = clamp(round-half-up(d / 2^shift), -128,
// 127) with shift = wide mantissa bits - compute mantissa bits - 8, i.e. q is the residual in units
// of 2^-8 ulp of the compute format in w's binade. resume(x, q) adds q << shift to the magnitude's
// pattern: |q << shift| < 2^(shift + 8), less than one step of the compute format, so it never
// crosses a binade boundary that x does not touch, and below a power of two it steps in the lower
// binade, where w was. Integer operations only: the CUDA backend (fwht/src/cuda/arithmetic.cuh)
// computes the same bits. x = 0, infinite or NaN carries nothing, and so does a subnormal float x
// (there d could exceed 32 bits, which the GPU's fast path relies on).
template <class Wt, class Bits, int kShift>
int carry_residual_bits(Wt w, Wt x_wide) {
  if (x_wide == Wt{0} || !std::isfinite(x_wide)) return 0;
  using Signed = std::make_signed_t<Bits>;
  constexpr Bits kMagnitude = ~(Bits{1} << (8 * sizeof(Bits) - 1));
  const Signed d = static_cast<Signed>(std::bit_cast<Bits>(w) & kMagnitude) - static_cast<Signed>(std::bit_cast<Bits>(x_wide) & kMagnitude);
  return static_cast<int>(std::clamp<Signed>((d + (Signed{1} << (kShift - 1))) >> kShift, -128, 127));
}
template <class Wt, class Bits, int kShift>
Wt carry_resume_bits(Wt x_wide, int q) {
  if (q == 0) return x_wide;
  return std::bit_cast<Wt>(static_cast<Bits>(std::bit_cast<Bits>(x_wide) + (static_cast<Bits>(q) << kShift)));
}

template <class C> struct Wide;
template <> struct Wide<float> {
  using type = double;
  static constexpr int kCarryShift = 52 - 23 - 8;
  static double widen(float x) { return x; }
  static float narrow(double x) { return static_cast<float>(x); }  // round to nearest even
  static int residual(double w, float x) {
    return std::fabs(x) < std::numeric_limits<float>::min() ? 0 : carry_residual_bits<double, std::uint64_t, kCarryShift>(w, x);
  }
  static double resume(float x, int q) { return carry_resume_bits<double, std::uint64_t, kCarryShift>(x, q); }
  static double carry(double w) { return resume(narrow(w), residual(w, narrow(w))); }
};
template <class F> struct FormatBits;
template <> struct FormatBits<f16> { static constexpr int kMantissa = 10; };
template <> struct FormatBits<bf16> { static constexpr int kMantissa = 7; };
template <class F> struct Wide<Rounded<F>> {
  using type = float;
  static constexpr int kCarryShift = 23 - FormatBits<F>::kMantissa - 8;
  static float widen(Rounded<F> x) { return x.v; }
  static Rounded<F> narrow(float x) { return Rounded<F>::of(x); }
  static int residual(float w, Rounded<F> x) { return carry_residual_bits<float, std::uint32_t, kCarryShift>(w, x.v); }
  static float resume(Rounded<F> x, int q) { return carry_resume_bits<float, std::uint32_t, kCarryShift>(x.v, q); }
  static float carry(float w) { return resume(narrow(w), residual(w, narrow(w))); }
};
template <class C> inline constexpr bool has_wide = requires { typename Wide<C>::type; };

inline constexpr int log2_of(std::int64_t n) { return std::countr_zero(static_cast<std::uint64_t>(n)); }

}  // namespace fwht::detail
