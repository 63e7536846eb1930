// The estimator of DESIGN.md §1 on the device: the d single estimates s1(i) s2(j) c_t[h1(i) XOR
// h2(j)] of one entry, their median and half their range, with exactly the arithmetic of
// CompressedProduct (so device answers equal host answers bit for bit).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "estimate/device_queries.hpp"

namespace pagh::cuda::detail {

struct Estimate {
  double value, spread;
};

__device__ __forceinline__ void order_pair(double& x, double& y) {
  // A conditional swap rather than fmin/fmax, which would drop a NaN the host sort keeps.
  if (y < x) {
    const double t = x;
    x = y, y = t;
  }
}

// D > 0: a product with exactly D repetitions, sorted by an unrolled odd-even transposition
// network so the d values stay in registers. D == 0: any d <= kMaxDeviceRepetitions, insertion
// sort in local memory (rare: d > 7).
template <int D>
__device__ __forceinline__ Estimate estimate_entry(const ProductView& v, std::int64_t i, std::int64_t j) {
  constexpr int kSlots = D > 0 ? D : kMaxDeviceRepetitions;
  const int d = D > 0 ? D : v.repetitions;
  double s[kSlots];
#pragma unroll
  for (int t = 0; t < kSlots; ++t) {
    if (D == 0 && t >= d) break;
    const std::uint32_t h = v.bucket_a[t * v.rows + i] ^ v.bucket_b[t * v.cols + j];
    // The host multiplies the integer signs first, then the sketch value: +-c exactly.
    const int sign = static_cast<int>(v.sign_a[t * v.rows + i]) * static_cast<int>(v.sign_b[t * v.cols + j]);
    s[t] = sign * v.sketches[t * v.buckets + h];
  }
  if constexpr (D > 0) {
#pragma unroll
    for (int pass = 0; pass < D; ++pass)
#pragma unroll
      for (int k = pass & 1; k + 1 < D; k += 2) order_pair(s[k], s[k + 1]);
  } else {
    for (int a = 1; a < d; ++a) {
      const double x = s[a];
      int b = a;
      for (; b > 0 && x < s[b - 1]; --b) s[b] = s[b - 1];
      s[b] = x;
    }
  }
  // median_of() and summarize() of compressed_product.cpp: the middle value, or the mean of the two
  // middle ones; half the range.
  const double value = d % 2 ? s[d / 2] : 0.5 * (s[d / 2 - 1] + s[d / 2]);
  return {value, 0.5 * (s[d - 1] - s[0])};
}

// The ranking key of a value: the bits of |value|. For non-negative doubles the unsigned bit
// pattern orders like the number, so a radix sort of keys ranks by magnitude (bit 63 is always 0).
__device__ __forceinline__ std::uint64_t magnitude_key(double value) {
  return static_cast<std::uint64_t>(__double_as_longlong(fabs(value)));
}
inline constexpr int kMagnitudeKeyBits = 63;

// The key of the entry with row-major index idx of a sketch (for the streaming top-k).
template <int D>
struct SketchKey {
  ProductView view;
  __device__ std::uint64_t operator()(std::int64_t idx) const {
    return magnitude_key(estimate_entry<D>(view, idx / view.cols, idx % view.cols).value);
  }
};

// Calls f(std::integral_constant<int, D>) with D = d for d <= 7 (register kernels), else D = 0
// (at d = 8 the register kernels spill inside CUB's selection: no better than local memory).
template <class F>
void with_repetitions(int d, F&& f) {
  switch (d) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 3: return f(std::integral_constant<int, 3>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 5: return f(std::integral_constant<int, 5>{});
    case 6: return f(std::integral_constant<int, 6>{});
    case 7: return f(std::integral_constant<int, 7>{});
    default: return f(std::integral_constant<int, 0>{});
  }
}

// A 1-D launch covering n items with grid-stride loops (n may exceed the grid).
inline unsigned blocks_for(std::int64_t n, int threads) {
  const std::int64_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > (1 << 20) ? (1 << 20) : blocks));
}

}  // namespace pagh::cuda::detail
