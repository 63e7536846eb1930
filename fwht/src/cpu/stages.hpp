// Butterfly stages on a contiguous buffer, written once with GCC vector extensions and compiled per
// instruction set: stages_generic.cpp (baseline x86-64), stages_avx2.cpp (-mavx2) and
// stages_avx512.cpp (-mavx512f ...) include this file with FWHT_ISA set to their namespace and
// FWHT_VECTOR_BYTES to their register width. Everything here lives in that namespace and calls no
// inline function from another header: an out-of-line copy compiled with AVX2 must never be
// picked by the linker for the baseline build.
//
// Rounding contract: every butterfly is the exact operation sequence of the reference
// (fwht/src/reference/reference.cpp), stages run in the same order (stride 1, 2, 4, ...), and
// butterflies of one stage are independent, so results agree bit for bit.
#pragma once

#if !defined(FWHT_ISA) || !defined(FWHT_VECTOR_BYTES)
#error "define FWHT_ISA (the instruction-set namespace) and FWHT_VECTOR_BYTES before including stages.hpp"
#endif

#include <cstdint>
#include <type_traits>
#include <utility>

#include "cpu/kernels.hpp"

namespace fwht::cpu::FWHT_ISA {

using index = std::int64_t;

template <int Bytes> struct SignedOfSize;
template <> struct SignedOfSize<4> { using type = std::int32_t; };
template <> struct SignedOfSize<8> { using type = std::int64_t; };

// Scalar helpers for the native types; stages_generic.cpp adds specializations for the emulated
// 16-bit types and for __int128.
template <class T> struct ScalarMath;
template <> struct ScalarMath<double> {
  static double abs(double x) { return __builtin_fabs(x); }
  static double halve(double x) { return x * 0.5; }
  static double times_pow2(double x, int k) { return x * __builtin_bit_cast(double, static_cast<std::uint64_t>(1023 + k) << 52); }
};
template <> struct ScalarMath<float> {
  static float abs(float x) { return __builtin_fabsf(x); }
  static float halve(float x) { return x * 0.5f; }
  static float times_pow2(float x, int k) { return x * __builtin_bit_cast(float, static_cast<std::uint32_t>(127 + k) << 23); }
};
template <> struct ScalarMath<std::uint32_t> {
  static std::uint32_t halve(std::uint32_t x) { return static_cast<std::uint32_t>(static_cast<std::int32_t>(x) >> 1); }
  static std::uint32_t times_pow2(std::uint32_t x, int k) { return x << k; }
};
template <> struct ScalarMath<std::uint64_t> {
  static std::uint64_t halve(std::uint64_t x) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(x) >> 1); }
  static std::uint64_t times_pow2(std::uint64_t x, int k) { return x << k; }
};

// One lane per "vector": any type with ScalarMath.
template <class T>
struct ScalarOps {
  using V = T;
  static constexpr int lanes = 1;
  static V load(const T* p) { return *p; }
  static void store(T* p, V v) { *p = v; }
  static V abs(V v) { return ScalarMath<T>::abs(v); }
  static V halve(V v) { return ScalarMath<T>::halve(v); }
};

// One register of a native type: 16 bytes (SSE2), 32 (AVX2) or 64 (AVX-512). Vectors wider than the
// target's registers would compile, but their shuffles and selects fall apart into per-lane code.
template <class T>
struct VectorOps {
  typedef T V __attribute__((vector_size(FWHT_VECTOR_BYTES)));
  typedef typename SignedOfSize<sizeof(T)>::type S;
  typedef S M __attribute__((vector_size(FWHT_VECTOR_BYTES)));  // lane masks and shuffle indices
  static constexpr int lanes = FWHT_VECTOR_BYTES / sizeof(T);
  static V load(const T* p) {
    V v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(T* p, V v) { __builtin_memcpy(p, &v, sizeof v); }
  static V abs(V v) {  // floating types only: clear the sign bits
    constexpr S kMagnitude = static_cast<S>(~(static_cast<std::uint64_t>(1) << (8 * sizeof(T) - 1)));
    return reinterpret_cast<V>(reinterpret_cast<M>(v) & kMagnitude);
  }
  static V halve(V v) {
    if constexpr (std::is_floating_point_v<T>) return v * static_cast<T>(0.5);
    else return reinterpret_cast<V>(reinterpret_cast<M>(v) >> 1);  // arithmetic shift
  }
  // The partner of lane i in a stage of stride H < lanes is lane i ^ H; `low` marks the lanes
  // holding the first element (A) of their butterfly.
  template <int H> static M partner() {
    M m;
    for (int i = 0; i < lanes; ++i) m[i] = i ^ H;
    return m;
  }
  template <int H> static M low() {
    M m;
    for (int i = 0; i < lanes; ++i) m[i] = (i & H) ? 0 : -1;
    return m;
  }
};

template <class T>
using Ops = std::conditional_t<is_native<T>, VectorOps<T>, ScalarOps<T>>;

// The butterfly (A, B) -> (A+B, A-B), plain or with error terms (Andersson 2025).
template <Stabilization St, class O, class V>
inline void butterfly(V& a, V& b, V& ea, V& eb) {
  if constexpr (St == Stabilization::none) {
    const V t = a;
    a = t + b;
    b = t - b;
  } else {
    const V s = ea + eb, d = ea - eb;
    const V a2 = (a + b) - s;
    const V b2 = (a - b) - d;
    if constexpr (St == Stabilization::kahan) {
      ea = ((a2 - a) - b) + s;
      eb = ((b2 - a) + b) + d;
    } else {  // Neumaier: sum the two largest-magnitude terms first
      const V abs_a = O::abs(a), abs_b = O::abs(b), abs_a2 = O::abs(a2), abs_b2 = O::abs(b2);
      const V ea1 = ((a2 - a) - b) + s, ea2 = ((a2 - b) - a) + s, ea3 = ((-a - b) + a2) + s;
      const V eb1 = ((b2 - a) + b) + d, eb2 = ((b2 + b) - a) + d, eb3 = ((-a + b) + b2) + d;
      ea = ((abs_b <= abs_a2) & (abs_b <= abs_a)) ? ea1 : (((abs_a <= abs_a2) & (abs_a <= abs_b)) ? ea2 : ea3);
      eb = ((abs_b <= abs_b2) & (abs_b <= abs_a)) ? eb1 : (((abs_a <= abs_b2) & (abs_a <= abs_b)) ? eb2 : eb3);
    }
    a = a2;
    b = b2;
  }
}

// A stage of stride H < lanes inside one vector: each lane forms its butterfly with lane i ^ H.
template <Stabilization St, class O, int H>
inline void in_register_stage(typename O::V& v, typename O::V& ev) {
  using V = typename O::V;
  const auto low = O::template low<H>();
  const auto partner = O::template partner<H>();
  const V p = __builtin_shuffle(v, partner);
  if constexpr (St == Stabilization::none) {
    v = low ? v + p : p - v;  // low lanes: A + B; high lanes: A - B with A the partner
  } else {
    const V ep = __builtin_shuffle(ev, partner);
    V a = low ? v : p, b = low ? p : v, ea = low ? ev : ep, eb = low ? ep : ev;
    butterfly<St, O>(a, b, ea, eb);
    v = low ? a : b;
    ev = low ? ea : eb;
  }
}

// Stages 0 .. Count-1 (all strides below the vector width), one load and store per vector.
template <Stabilization St, class O, int Count, class T>
void in_register_stages(T* x, T* e, index len) {
  using V = typename O::V;
  constexpr bool kStab = St != Stabilization::none;
  for (index i = 0; i < len; i += O::lanes) {
    V v = O::load(x + i), ev{};
    if constexpr (kStab) ev = O::load(e + i);
    if constexpr (Count >= 1) in_register_stage<St, O, 1>(v, ev);
    if constexpr (Count >= 2) in_register_stage<St, O, 2>(v, ev);
    if constexpr (Count >= 3) in_register_stage<St, O, 4>(v, ev);
    if constexpr (Count >= 4) in_register_stage<St, O, 8>(v, ev);
    O::store(x + i, v);
    if constexpr (kStab) O::store(e + i, ev);
  }
}

// Two stages at strides h and 2h (h >= lanes) with one load and store per vector.
template <Stabilization St, class O, class T>
void radix4_stages(T* x, T* e, index len, index h) {
  using V = typename O::V;
  constexpr bool kStab = St != Stabilization::none;
  for (index base = 0; base < len; base += 4 * h) {
    for (index j = base; j < base + h; j += O::lanes) {
      V x0 = O::load(x + j), x1 = O::load(x + j + h), x2 = O::load(x + j + 2 * h), x3 = O::load(x + j + 3 * h);
      V e0{}, e1{}, e2{}, e3{};
      if constexpr (kStab) e0 = O::load(e + j), e1 = O::load(e + j + h), e2 = O::load(e + j + 2 * h), e3 = O::load(e + j + 3 * h);
      butterfly<St, O>(x0, x1, e0, e1);
      butterfly<St, O>(x2, x3, e2, e3);
      butterfly<St, O>(x0, x2, e0, e2);
      butterfly<St, O>(x1, x3, e1, e3);
      O::store(x + j, x0), O::store(x + j + h, x1), O::store(x + j + 2 * h, x2), O::store(x + j + 3 * h, x3);
      if constexpr (kStab) O::store(e + j, e0), O::store(e + j + h, e1), O::store(e + j + 2 * h, e2), O::store(e + j + 3 * h, e3);
    }
  }
}

template <Stabilization St, class O, class T>
void radix2_stage(T* x, T* e, index len, index h) {
  using V = typename O::V;
  constexpr bool kStab = St != Stabilization::none;
  for (index base = 0; base < len; base += 2 * h) {
    for (index j = base; j < base + h; j += O::lanes) {
      V x0 = O::load(x + j), x1 = O::load(x + j + h), e0{}, e1{};
      if constexpr (kStab) e0 = O::load(e + j), e1 = O::load(e + j + h);
      butterfly<St, O>(x0, x1, e0, e1);
      O::store(x + j, x0), O::store(x + j + h, x1);
      if constexpr (kStab) O::store(e + j, e0), O::store(e + j + h, e1);
    }
  }
}

template <Stabilization St, class O, class T>
void folklore_stages_with(T* x, T* e, index len, int k0, int k1) {
  int k = k0;
  if constexpr (O::lanes > 1) {
    constexpr int kInRegister = __builtin_ctz(O::lanes);
    if (k < kInRegister && k < k1) {
      // Callers start at stage 0 whenever a stride below the vector width is involved.
      const int count = (k1 < kInRegister ? k1 : kInRegister);
      if (count == 1) in_register_stages<St, O, 1>(x, e, len);
      if constexpr (kInRegister >= 2)
        if (count == 2) in_register_stages<St, O, 2>(x, e, len);
      if constexpr (kInRegister >= 3)
        if (count == 3) in_register_stages<St, O, 3>(x, e, len);
      if constexpr (kInRegister >= 4)
        if (count == 4) in_register_stages<St, O, 4>(x, e, len);
      k = count;
    }
  }
  for (; k + 1 < k1; k += 2) radix4_stages<St, O>(x, e, len, index{1} << k);
  if (k < k1) radix2_stage<St, O>(x, e, len, index{1} << k);
}

template <class T, Stabilization St>
void folklore_stages(T* x, T* e, index len, int k0, int k1) {
  if (len < Ops<T>::lanes)
    folklore_stages_with<St, ScalarOps<T>>(x, e, len, k0, k1);  // shorter than one vector
  else
    folklore_stages_with<St, Ops<T>>(x, e, len, k0, k1);
}

// Alman-Rao's 23-operation H8 kernel on (a..h) at stride m; inputs b..h arrive prescaled by 2.
template <class O, class T>
void h8_stage(T* x, index len, index m) {
  using V = typename O::V;
  for (index base = 0; base < len; base += 8 * m) {
    for (index j = base; j < base + m; j += O::lanes) {
      T* p = x + j;
      const V a = O::load(p), b = O::load(p + m), c = O::load(p + 2 * m), d = O::load(p + 3 * m);
      const V e = O::load(p + 4 * m), f = O::load(p + 5 * m), g = O::load(p + 6 * m), h = O::load(p + 7 * m);
      const V B1 = b + c, B2 = d + h, B3 = f + g;
      const V tot = O::halve(((B1 + B2) + B3) + e);
      const V diff = a - tot;
      const V D = diff + d, E = diff + e, H = diff + h;
      O::store(p, a + tot), O::store(p + m, (E + c) + g), O::store(p + 2 * m, (E + b) + f), O::store(p + 3 * m, E + B2);
      O::store(p + 4 * m, D + B1), O::store(p + 5 * m, (H + c) + f), O::store(p + 6 * m, (H + b) + g), O::store(p + 7 * m, D + B3);
    }
  }
}

template <class T>
void alman_rao_stages(T* x, index len, int k0, int k1, int r, index prescale_offset) {
  int k = k0;
  if (k < r) {
    const int end = r < k1 ? r : k1;
    folklore_stages<T, Stabilization::none>(x, nullptr, len, k, end);
    k = end;
  }
  if (k0 <= r && r < k1 && prescale_offset >= 0) {
    // Scale element i by 2^(nonzero base-8 digits of i above the first r stages).
    for (index i = 0; i < len; ++i) {
      int digits = 0;
      for (auto v = static_cast<std::uint64_t>(prescale_offset + i) >> r; v != 0; v >>= 3) digits += (v & 7u) != 0;
      if (digits != 0) x[i] = ScalarMath<T>::times_pow2(x[i], digits);
    }
  }
  for (; k < k1; k += 3) {
    const index m = index{1} << k;
    if (m >= Ops<T>::lanes)
      h8_stage<Ops<T>>(x, len, m);
    else
      h8_stage<ScalarOps<T>>(x, len, m);
  }
}

}  // namespace fwht::cpu::FWHT_ISA

#include "cpu/plain_stages.hpp"

// Explicit instantiations, used by each stages_<isa>.cpp.
#define FWHT_INSTANTIATE_FOLKLORE(T, St) template void folklore_stages<T, Stabilization::St>(T*, T*, index, int, int);
#define FWHT_INSTANTIATE_ALMAN_RAO(T) template void alman_rao_stages<T>(T*, index, int, int, int, index);
#define FWHT_INSTANTIATE_PLAIN(T)                                      \
  template void plain_stages<T>(T*, const T*, index, int, int); \
  template void plain_columns<T>(T*, index, int, int);          \
  template void small_transforms<T>(SmallFn*);
#define FWHT_INSTANTIATE_FLOATING(T)     \
  FWHT_INSTANTIATE_FOLKLORE(T, none)     \
  FWHT_INSTANTIATE_FOLKLORE(T, kahan)    \
  FWHT_INSTANTIATE_FOLKLORE(T, neumaier) \
  FWHT_INSTANTIATE_ALMAN_RAO(T)
#define FWHT_INSTANTIATE_INTEGER(T)  \
  FWHT_INSTANTIATE_FOLKLORE(T, none) \
  FWHT_INSTANTIATE_ALMAN_RAO(T)
#define FWHT_INSTANTIATE_PRODUCT(T) template void plain_product<T>(T*, T*, T*, int, const BlockFill<T>&);
#define FWHT_INSTANTIATE_NATIVE           \
  FWHT_INSTANTIATE_FLOATING(double)       \
  FWHT_INSTANTIATE_FLOATING(float)        \
  FWHT_INSTANTIATE_PRODUCT(double)        \
  FWHT_INSTANTIATE_PRODUCT(float)         \
  FWHT_INSTANTIATE_INTEGER(std::uint32_t) \
  FWHT_INSTANTIATE_INTEGER(std::uint64_t) \
  FWHT_INSTANTIATE_PLAIN(double)          \
  FWHT_INSTANTIATE_PLAIN(float)           \
  FWHT_INSTANTIATE_PLAIN(std::uint32_t)   \
  FWHT_INSTANTIATE_PLAIN(std::uint64_t)
