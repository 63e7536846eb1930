// Device arithmetic: the compute types of fwht/src/common/arithmetic.hpp, on the GPU, with the same
// operation sequences, so results are bit-identical to the CPU backend and the reference.
//
// Storage S -> compute C -> work W (the type intermediate passes keep in device memory):
//   double/float/int:  C = double/float/uint (wrapping), W = S (same bits, so the output buffer is
//                      the work buffer: no workspace)
//   f16/bf16, f32:     C = float, W = float (a workspace buffer between passes)
//   f16/bf16, storage: C = Rounded16<Format> (float rounded after every operation), W = S (a
//                      rounded value is exactly representable in S: lossless in the output buffer)
// Error terms of stabilized transforms are kept in W between passes.
//
// Every operation is correctly rounded and compiled with -fmad=false (no contraction). Conversions
// float -> 16-bit use the hardware's round-to-nearest-even, which equals fwht/half.hpp for all
// non-NaN values (NaN payloads may differ).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace fwht::cuda {

struct HalfFormat {
  using storage = __half;
  static constexpr int kMantissa = 10, kMinExponent = -14;
  static __device__ __forceinline__ float round(float x) { return __half2float(__float2half_rn(x)); }
  static __device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
  static __device__ __forceinline__ __half from_float(float x) { return __float2half_rn(x); }
};
struct BFloatFormat {
  using storage = __nv_bfloat16;
  static constexpr int kMantissa = 7, kMinExponent = -126;
  static __device__ __forceinline__ float round(float x) { return __bfloat162float(__float2bfloat16_rn(x)); }
  static __device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
  static __device__ __forceinline__ __nv_bfloat16 from_float(float x) { return __float2bfloat16_rn(x); }
};

// A 16-bit value held in a float; every operation is done in float and rounded once to the format
// (the correctly rounded 16-bit operation, see fwht/half.hpp).
template <class F>
struct Rounded16 {
  float v;
  static __device__ __forceinline__ Rounded16 of(float x) { return Rounded16{F::round(x)}; }
  friend __device__ __forceinline__ Rounded16 operator+(Rounded16 a, Rounded16 b) { return of(__fadd_rn(a.v, b.v)); }
  friend __device__ __forceinline__ Rounded16 operator-(Rounded16 a, Rounded16 b) { return of(__fsub_rn(a.v, b.v)); }
  friend __device__ __forceinline__ Rounded16 operator*(Rounded16 a, Rounded16 b) { return of(__fmul_rn(a.v, b.v)); }
  friend __device__ __forceinline__ Rounded16 operator-(Rounded16 a) { return Rounded16{-a.v}; }
  friend __device__ __forceinline__ bool operator<=(Rounded16 a, Rounded16 b) { return a.v <= b.v; }
};

template <class T> struct Math;
template <> struct Math<double> {
  static __device__ __forceinline__ double abs(double x) { return fabs(x); }
  static __device__ __forceinline__ double halve(double x) { return x * 0.5; }
  static __device__ __forceinline__ double times_pow2(double x, int k) {
    return x * __longlong_as_double(static_cast<long long>(1023 + k) << 52);
  }
  static __device__ __forceinline__ double scale(double f) { return f; }
};
template <> struct Math<float> {
  static __device__ __forceinline__ float abs(float x) { return fabsf(x); }
  static __device__ __forceinline__ float halve(float x) { return x * 0.5f; }
  static __device__ __forceinline__ float times_pow2(float x, int k) { return x * __int_as_float((127 + k) << 23); }
  static __device__ __forceinline__ float scale(double f) { return __double2float_rn(f); }
};
template <class F> struct Math<Rounded16<F>> {
  using R = Rounded16<F>;
  static __device__ __forceinline__ R abs(R x) { return R{fabsf(x.v)}; }
  static __device__ __forceinline__ R halve(R x) { return R::of(x.v * 0.5f); }
  static __device__ __forceinline__ R times_pow2(R x, int k) { return R::of(Math<float>::times_pow2(x.v, k)); }
  static __device__ __forceinline__ R scale(double f) { return R::of(__double2float_rn(f)); }
};
template <> struct Math<std::uint32_t> {
  static __device__ __forceinline__ std::uint32_t halve(std::uint32_t x) {
    return static_cast<std::uint32_t>(static_cast<std::int32_t>(x) >> 1);
  }
  static __device__ __forceinline__ std::uint32_t times_pow2(std::uint32_t x, int k) { return x << k; }
};
template <> struct Math<std::uint64_t> {
  static __device__ __forceinline__ std::uint64_t halve(std::uint64_t x) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(x) >> 1);
  }
  static __device__ __forceinline__ std::uint64_t times_pow2(std::uint64_t x, int k) { return x << k; }
};

// Stabilization::wide_onchip: the wide type of a compute type, as fwht/src/common/arithmetic.hpp
// defines it (exact widening, one round-to-nearest-even narrowing), and wide_carry's residual byte
// and resumed value, with the same exact steps as the host (carry_residual, carry_resume).
__device__ __forceinline__ double pow2_double(int k) { return __longlong_as_double(static_cast<long long>(1023 + k) << 52); }
__device__ __forceinline__ int ulp_log2(float x, int mantissa, int min_exponent) {
  const int field = static_cast<int>((__float_as_uint(x) >> 23) & 0xffu);
  return max(field - 127, min_exponent) - mantissa;
}
__device__ __forceinline__ float pow2_float(int k) { return __uint_as_float(static_cast<unsigned>(127 + k) << 23); }
// The general definition, in double (exact but for the rint): the rare cases of the fast paths.
inline __device__ __noinline__ int carry_residual(double w, float x, int mantissa, int min_exponent) {
  if (!isfinite(x)) return 0;
  const double q = rint(__dmul_rn(__dsub_rn(w, static_cast<double>(x)), pow2_double(8 - ulp_log2(x, mantissa, min_exponent))));
  return static_cast<int>(fmin(fmax(q, -128.0), 127.0));
}
// The 16-bit formats: w - x is exact in float, and so is the scaling by two power-of-two factors
// (2^k alone may not be a float): the same value as the double definition.
__device__ __forceinline__ int carry_residual_of(float d, float x, int mantissa, int min_exponent) {
  if (!isfinite(x)) return 0;
  const int k = 8 - ulp_log2(x, mantissa, min_exponent), half = k / 2;
  const float q = rintf(__fmul_rn(__fmul_rn(d, pow2_float(half)), pow2_float(k - half)));
  return static_cast<int>(fminf(fmaxf(q, -128.0f), 127.0f));
}
// float from double, fast path on w's bits (no FP64 instruction: conversions run at a fraction of
// the FP32 rate): x = RN(w) keeps mantissa bits [29, 52); the 29 bits D below are the residual, or
// D - 2^29 when RN rounds up, in units of 2^(e - 52) (e = w's exponent), and ulp(x) / 256 is 2^21 of
// those (2^22 when rounding up carries into x's exponent). Needs x normal and finite.
__device__ __forceinline__ int carry_residual_float(double w) {
  const unsigned hi = static_cast<unsigned>(__double2hiint(w)), lo = static_cast<unsigned>(__double2loint(w));
  const int e = static_cast<int>((hi >> 20) & 0x7ffu) - 1023;
  const unsigned d = lo & 0x1fffffffu;
  const bool up = d + ((lo >> 29) & 1u) > 0x10000000u;                          // RN, ties to even
  const bool next_binade = up && (hi & 0xfffffu) == 0xfffffu && (lo >> 29) == 7u;  // mantissa all ones
  if (e < -126 || e > 127 || (e == 127 && next_binade)) return carry_residual(w, __double2float_rn(w), 23, -126);
  const int r = static_cast<int>(d) - (up ? 0x20000000 : 0);
  const int shift = next_binade ? 22 : 21, half = 1 << (shift - 1);
  int q = r >> shift;
  const int rem = r & ((1 << shift) - 1);
  q += (rem > half || (rem == half && (q & 1))) ? 1 : 0;
  if (static_cast<int>(hi) < 0) q = -q;
  return min(max(q, -128), 127);
}
__device__ __forceinline__ double carry_resume(float x, int q, int mantissa, int min_exponent) {
  if (q == 0) return x;
  return __dadd_rn(static_cast<double>(x), __dmul_rn(static_cast<double>(q), pow2_double(ulp_log2(x, mantissa, min_exponent) - 8)));
}
// x + q 2^(log2 ulp(x) - 8) for float x, widened on the bit pattern (no F2F): q << 21 added to the
// magnitude of the double whose low 29 bits are zero, so nothing carries past the mantissa, except
// below a power of two (the step there is in the lower binade's units), for subnormal and for
// non-finite x: the double arithmetic.
__device__ __forceinline__ double carry_resume_float(float x, int q) {
  const unsigned bits = __float_as_uint(x), field = (bits >> 23) & 0xffu;
  const int toward = (bits >> 31) ? -q : q;  // change of the magnitude
  if (field == 0u || field == 0xffu || (toward < 0 && (bits & 0x7fffffu) == 0u)) {
    const double wide = static_cast<double>(x);
    return q == 0 ? wide : __dadd_rn(wide, __dmul_rn(static_cast<double>(q), pow2_double(ulp_log2(x, 23, -126) - 8)));
  }
  const unsigned hi = (bits & 0x80000000u) | ((field + 896u) << 20) | ((bits & 0x7fffffu) >> 3);  // 896 = 1023 - 127
  const long long pattern = (static_cast<long long>(hi) << 32) | static_cast<long long>((bits & 7u) << 29);
  return __longlong_as_double(pattern + (static_cast<long long>(toward) << 21));
}

template <class C> struct Wide;
template <> struct Wide<float> {
  using type = double;
  static constexpr int kMantissa = 23, kMinExponent = -126;
  static __device__ __forceinline__ double widen(float x) { return static_cast<double>(x); }
  static __device__ __forceinline__ float narrow(double x) { return __double2float_rn(x); }
  static __device__ __forceinline__ int residual(double w, float) { return carry_residual_float(w); }
  static __device__ __forceinline__ double resume(float x, int q) { return carry_resume_float(x, q); }
};
template <class F> struct Wide<Rounded16<F>> {
  using type = float;
  static __device__ __forceinline__ float widen(Rounded16<F> x) { return x.v; }
  static __device__ __forceinline__ Rounded16<F> narrow(float x) { return Rounded16<F>::of(x); }
  static __device__ __forceinline__ int residual(float w, Rounded16<F> x) {
    return carry_residual_of(__fsub_rn(w, x.v), x.v, F::kMantissa, F::kMinExponent);  // w - x exact in float
  }
  static __device__ __forceinline__ float resume(Rounded16<F> x, int q) {
    return __double2float_rn(carry_resume(x.v, q, F::kMantissa, F::kMinExponent));  // exact
  }
};

// Traits of one (storage, compute) pair: conversions between S, C and W, and the final store.
template <class S_, class C_, class W_>
struct TraitsBase {
  using S = S_;
  using C = C_;
  using W = W_;
  static constexpr bool kInteger = std::is_integral_v<C_>;
};

template <class T>
struct NativeTraits : TraitsBase<T, T, T> {
  static __device__ __forceinline__ T load_s(T v) { return v; }
  static __device__ __forceinline__ T load_w(T v) { return v; }
  static __device__ __forceinline__ T to_w(T v) { return v; }
  static __device__ __forceinline__ T store_s(T v) { return v; }
};

template <class F>
struct Sixteen32Traits : TraitsBase<typename F::storage, float, float> {
  using S = typename F::storage;
  static __device__ __forceinline__ float load_s(S v) { return F::to_float(v); }
  static __device__ __forceinline__ float load_w(float v) { return v; }
  static __device__ __forceinline__ float to_w(float v) { return v; }
  static __device__ __forceinline__ S store_s(float v) { return F::from_float(v); }
};

template <class F>
struct SixteenStorageTraits : TraitsBase<typename F::storage, Rounded16<F>, typename F::storage> {
  using S = typename F::storage;
  using R = Rounded16<F>;
  static __device__ __forceinline__ R load_s(S v) { return R{F::to_float(v)}; }
  static __device__ __forceinline__ R load_w(S v) { return R{F::to_float(v)}; }
  static __device__ __forceinline__ S to_w(R v) { return F::from_float(v.v); }  // exact
  static __device__ __forceinline__ S store_s(R v) { return F::from_float(v.v); }
};

// Integers: wrapping unsigned arithmetic (exact modulo 2^w); inverse divides the signed result.
template <class I>
struct IntegerTraits : TraitsBase<I, std::make_unsigned_t<I>, I> {
  using U = std::make_unsigned_t<I>;
  static __device__ __forceinline__ U load_s(I v) { return static_cast<U>(v); }
  static __device__ __forceinline__ U load_w(I v) { return static_cast<U>(v); }
  static __device__ __forceinline__ I to_w(U v) { return static_cast<I>(v); }
  static __device__ __forceinline__ I store_s(U v) { return static_cast<I>(v); }
};

// Final store: normalize (floats: multiply by the scale rounded to C; integers: truncating signed
// division by n) and convert to the storage type.
template <class Tr>
__device__ __forceinline__ typename Tr::S final_value(typename Tr::C v, bool scaled, typename Tr::C scale, std::int64_t n,
                                                      bool inverse) {
  using S = typename Tr::S;
  if constexpr (Tr::kInteger) {
    const S w = Tr::store_s(v);  // two's complement: exact modulo 2^w
    return inverse ? static_cast<S>(w / n) : w;
  } else {
    return Tr::store_s(scaled ? v * scale : v);
  }
}

}  // namespace fwht::cuda
