// Butterflies on registers, written as fwht/src/reference/reference.cpp writes them (same operation
// order, so the same rounding): plain, Kahan and Neumaier (Andersson 2025), and Alman-Rao's
// 23-operation H8 kernel.
#pragma once

#include "cuda/arithmetic.cuh"
#include "fwht/options.hpp"

namespace fwht::cuda {

template <Stabilization St, class C>
__device__ __forceinline__ void butterfly(C& A, C& B, C& eA, C& eB) {
  if constexpr (St == Stabilization::none) {
    const C a = A;
    A = a + B;
    B = a - B;
  } else {
    const C a = A, b = B, ea = eA, eb = eB;
    const C a2 = (a + b) - (ea + eb);
    const C b2 = (a - b) - (ea - eb);
    if constexpr (St == Stabilization::kahan) {
      eA = ((a2 - a) - b) + (ea + eb);
      eB = ((b2 - a) + b) + (ea - eb);
    } else {  // Neumaier: recover each error summing the two largest-magnitude terms first
      // The reference's three cases per error, without branches: each case is ((p + q) + r) over
      // the same three terms in a case-dependent order (x - y is x + (-y) exactly), so the operands
      // are selected and one sequence of additions runs; results are bit-identical to
      //   eA = c1 ? ((a2 - a) - b) : c2 ? ((a2 - b) - a) : ((-a - b) + a2), then + (ea + eb),
      //   eB = d1 ? ((b2 - a) + b) : d2 ? ((b2 + b) - a) : ((-a + b) + b2), then + (ea - eb).
      using M = Math<C>;
      const C abs_a = M::abs(a), abs_b = M::abs(b), abs_a2 = M::abs(a2), abs_b2 = M::abs(b2);
      const C na = -a, nb = -b;
      const bool c1 = abs_b <= abs_a2 && abs_b <= abs_a, c2 = abs_a <= abs_a2 && abs_a <= abs_b;
      const bool d1 = abs_b <= abs_b2 && abs_b <= abs_a, d2 = abs_a <= abs_b2 && abs_a <= abs_b;
      const C pa = (c1 || c2) ? a2 : na, qa = c1 ? na : nb, ra = c1 ? nb : (c2 ? na : a2);
      const C pb = (d1 || d2) ? b2 : na, qb = d1 ? na : b, rb = d1 ? b : (d2 ? na : b2);
      eA = ((pa + qa) + ra) + (ea + eb);
      eB = ((pb + qb) + rb) + (ea - eb);
    }
    A = a2;
    B = b2;
  }
}

// Stages 0..R-1 of a radix-2^R group held in v[0 .. 2^R) (element m at stride h * m), in
// increasing stage order.
template <Stabilization St, int R, class C>
__device__ __forceinline__ void radix_stages(C (&v)[1 << R], C (&e)[1 << R]) {
#pragma unroll
  for (int k = 0; k < R; ++k)
#pragma unroll
    for (int m = 0; m < (1 << R); ++m)
      if ((m & (1 << k)) == 0) butterfly<St>(v[m], v[m | (1 << k)], e[m], e[m | (1 << k)]);
}

// Alman-Rao's H8 on (a..h); inputs b..h arrive prescaled by 2 (reference.cpp, h8).
template <class C>
__device__ __forceinline__ void h8(C (&x)[8]) {
  const C a = x[0], b = x[1], c = x[2], d = x[3], e = x[4], f = x[5], g = x[6], h = x[7];
  const C B1 = b + c, B2 = d + h, B3 = f + g;
  const C tot = Math<C>::halve(((B1 + B2) + B3) + e);
  const C diff = a - tot;
  const C D = diff + d, E = diff + e, H = diff + h;
  x[0] = a + tot;
  x[1] = (E + c) + g;
  x[2] = (E + b) + f;
  x[3] = E + B2;
  x[4] = D + B1;
  x[5] = (H + c) + f;
  x[6] = (H + b) + g;
  x[7] = D + B3;
}

}  // namespace fwht::cuda
