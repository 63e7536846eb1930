// Device arithmetic: the compute types of fwht/src/common/arithmetic.hpp, on the GPU, with the same
// operation sequences, so results are bit-identical to the CPU backend and the reference.
//
// Storage S -> compute C -> work W (the type intermediate passes keep in device memory):
//   double/float/int:  C = double/float/uint (wrapping), W = S (same bits, so the output buffer is
//                      the work buffer: no workspace)
//   f16/bf16, f32:     C = float, W = float (a workspace buffer between passes)
//   f16/bf16, storage: C = Rounded16<Format> (float rounded after every operation), W = S (a
//                      rounded value is exactly representable in S: lossless in the output buffer)
//   f16/bf16, storage, C = S = W = Pair16<Format>: elements 2i and 2i + 1 in one 32-bit word, added
//   paired:            and subtracted by the paired 16-bit instructions (Rounded16's results, two
//                      at a time); the plan of n/2 words (cuda_plan.cu, PairedPlan)
// Error terms of stabilized transforms are kept in W between passes.
//
// Every operation is correctly rounded and compiled with -fmad=false (no contraction). Conversions
// float -> 16-bit use the hardware's round-to-nearest-even, which equals fwht/half.hpp for all
// non-NaN values (NaN payloads may differ).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace fwht::cuda {

struct HalfFormat {
  using storage = __half;
  static constexpr int kMantissa = 10;
  static __device__ __forceinline__ float round(float x) { return __half2float(__float2half_rn(x)); }
  static __device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
  static __device__ __forceinline__ __half from_float(float x) { return __float2half_rn(x); }
};
struct BFloatFormat {
  using storage = __nv_bfloat16;
  static constexpr int kMantissa = 7;
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

// Two 16-bit values in one 32-bit word: element 2i in the low half, 2i + 1 in the high half. A sum or
// difference is the paired instruction (HADD2/HSUB2, each half correctly rounded, subnormals kept),
// which is Rounded16's float operation and rounding: the sum of two 16-bit values is exact in float,
// or (exponents more than 13 (f16) / 15 (bf16) apart) so close to the larger one that float's
// rounding cannot move it across a rounding boundary of the format. Products (the normalization
// only) are HMUL2 (f16: the product of two f16 values is exact in float, so one rounding either
// way) and, for bf16, a fused multiply-add of -0 (one rounding of the exact product, which
// Rounded16's float product equals except for products below float's normal range, |x| < 2^-126,
// whose float rounding may differ in the last bit: a transformed value below ~2^-95 times 1/n).
template <class F>
struct Pair16 {
  unsigned bits;  // both halves, as the paired instructions' "r" operands take them
  static constexpr bool kHalf = std::is_same_v<F, HalfFormat>;
  friend __device__ __forceinline__ Pair16 operator+(Pair16 a, Pair16 b) {
    Pair16 r;
    if constexpr (kHalf) asm("add.rn.f16x2 %0, %1, %2;" : "=r"(r.bits) : "r"(a.bits), "r"(b.bits));
    else asm("{.reg .b32 k; mov.b32 k, 0x3f803f80; fma.rn.bf16x2 %0, %1, k, %2;}" : "=r"(r.bits) : "r"(a.bits), "r"(b.bits));  // a * 1 + b
    return r;
  }
  friend __device__ __forceinline__ Pair16 operator-(Pair16 a, Pair16 b) {
    Pair16 r;
    if constexpr (kHalf) asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r.bits) : "r"(a.bits), "r"(b.bits));
    else asm("{.reg .b32 k; mov.b32 k, 0xbf80bf80; fma.rn.bf16x2 %0, %1, k, %2;}" : "=r"(r.bits) : "r"(b.bits), "r"(a.bits));  // b * -1 + a
    return r;
  }
  friend __device__ __forceinline__ Pair16 operator*(Pair16 a, Pair16 b) {
    Pair16 r;
    if constexpr (kHalf) asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r.bits) : "r"(a.bits), "r"(b.bits));
    else asm("{.reg .b32 k; mov.b32 k, 0x80008000; fma.rn.bf16x2 %0, %1, %2, k;}" : "=r"(r.bits) : "r"(a.bits), "r"(b.bits));
    return r;
  }
  // The stage on element bit 0, inside the word: (a, b) -> (a + b, a - b) as (a, b) * (1, -1) + (b, a),
  // one fused operation with exact products (one rounding, as the sum's).
  static __device__ __forceinline__ Pair16 first_stage(Pair16 x) {
    Pair16 r;
    unsigned swapped;
    asm("prmt.b32 %0, %1, %1, 0x1032;" : "=r"(swapped) : "r"(x.bits));
    if constexpr (kHalf) asm("{.reg .b32 k; mov.b32 k, 0xbc003c00; fma.rn.f16x2 %0, %1, k, %2;}" : "=r"(r.bits) : "r"(x.bits), "r"(swapped));
    else asm("{.reg .b32 k; mov.b32 k, 0xbf803f80; fma.rn.bf16x2 %0, %1, k, %2;}" : "=r"(r.bits) : "r"(x.bits), "r"(swapped));
    return r;
  }
  static __device__ __forceinline__ Pair16 of(float lo, float hi) {  // each rounded to the format
    Pair16 r;
    if constexpr (kHalf) {
      const __half2 p = __floats2half2_rn(lo, hi);
      std::memcpy(&r.bits, &p, 4);
    } else {
      const __nv_bfloat162 p = __floats2bfloat162_rn(lo, hi);
      std::memcpy(&r.bits, &p, 4);
    }
    return r;
  }
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
template <class F> struct Math<Pair16<F>> {
  static __device__ __forceinline__ Pair16<F> scale(double f) {
    const float s = F::round(__double2float_rn(f));  // Rounded16's scale, in both halves
    return Pair16<F>::of(s, s);
  }
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
// and resumed value on the bit patterns, as carry_residual_bits / carry_resume_bits in
// fwht/src/common/arithmetic.hpp (integer operations only: the same bits as the host).
// The generic residual on float patterns (the wide type of the 16-bit formats).
template <int kShift>
__device__ __forceinline__ int carry_residual_bits(float w, float x_wide) {
  const int x = __float_as_int(x_wide) & 0x7fffffff;
  if (x == 0 || x >= 0x7f800000) return 0;  // zero, infinite or NaN: nothing to carry
  const int d = (__float_as_int(w) & 0x7fffffff) - x;
  const int q = (d + (1 << (kShift - 1))) >> kShift;
  return q < -128 ? -128 : q > 127 ? 127 : q;
}
// Adding q << kShift to the pattern (q = 0 leaves it as it is: no test needed).
template <int kShift>
__device__ __forceinline__ double carry_resume_bits(double x_wide, int q) {
  return __longlong_as_double(__double_as_longlong(x_wide) + (static_cast<long long>(q) * (1LL << kShift)));
}
template <int kShift>
__device__ __forceinline__ float carry_resume_bits(float x_wide, int q) {
  return __int_as_float(__float_as_int(x_wide) + q * (1 << kShift));
}

template <class C> struct Wide;
template <> struct Wide<float> {
  using type = double;
  static constexpr int kCarryShift = 52 - 23 - 8;
  static __device__ __forceinline__ double widen(float x) { return static_cast<double>(x); }
  static __device__ __forceinline__ float narrow(double x) { return __double2float_rn(x); }
  // carry_residual_bits on 32-bit words: for normal x, |d| < 2^29 fits the difference of the low
  // words, and x's widened low word is its 3 lowest mantissa bits << 29 (no conversion).
  static __device__ __forceinline__ int residual(double w, float x) {
    const unsigned bits = __float_as_uint(x), field = (bits >> 23) & 0xffu;
    if (field == 0u || field == 0xffu) return 0;  // zero or subnormal, infinite or NaN
    const int d = static_cast<int>(static_cast<unsigned>(__double2loint(w)) - ((bits & 7u) << 29));
    const int q = (d + (1 << (kCarryShift - 1))) >> kCarryShift;
    return q < -128 ? -128 : q > 127 ? 127 : q;
  }
  static __device__ __forceinline__ double resume(float x, int q) { return carry_resume_bits<kCarryShift>(static_cast<double>(x), q); }
};
template <class F> struct Wide<Rounded16<F>> {
  using type = float;
  static constexpr int kCarryShift = 23 - F::kMantissa - 8;
  static __device__ __forceinline__ float widen(Rounded16<F> x) { return x.v; }
  static __device__ __forceinline__ Rounded16<F> narrow(float x) { return Rounded16<F>::of(x); }
  static __device__ __forceinline__ int residual(float w, Rounded16<F> x) { return carry_residual_bits<kCarryShift>(w, x.v); }
  static __device__ __forceinline__ float resume(Rounded16<F> x, int q) { return carry_resume_bits<kCarryShift>(x.v, q); }
};

// Traits of one (storage, compute) pair: conversions between S, C and W, and the final store.
template <class S_, class C_, class W_>
struct TraitsBase {
  using S = S_;
  using C = C_;
  using W = W_;
  static constexpr bool kInteger = std::is_integral_v<C_>;
  static constexpr bool kPairs = false;  // Pair16 words (SixteenPairTraits)
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

// f16/bf16 computed in storage precision, two elements per word (the paired plan of n/2 words):
// a first pass's load applies the stage on element bit 0 inside each word; every later stage is a
// stage of the word array (word bit j = element bit j + 1), in the same increasing order.
template <class F>
struct SixteenPairTraits : TraitsBase<Pair16<F>, Pair16<F>, Pair16<F>> {
  using R = Pair16<F>;
  static constexpr bool kPairs = true;
  static __device__ __forceinline__ R load_s(R v) { return R::first_stage(v); }
  static __device__ __forceinline__ R load_w(R v) { return v; }
  static __device__ __forceinline__ R to_w(R v) { return v; }
  static __device__ __forceinline__ R store_s(R v) { return v; }
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
