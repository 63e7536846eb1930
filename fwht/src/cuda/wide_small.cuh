// Stabilization::wide_onchip for the cases the register-tile pass does not take: whole transforms
// of n <= 8 (one thread per transform, any layout), and the copy between any plan_many layout and
// the packed buffer the register-tile pass needs (cuda_plan.cu gathers, transforms in place and
// scatters: two extra passes of memory traffic, for non-packed layouts only). Included by
// cuda_plan.cu, which instantiates it per traits type.
#pragma once

#include <string>

#include "cuda/arithmetic.cuh"
#include "pagh/cuda_check.hpp"
#include "cuda/fast_pass.hpp"
#include "pagh/error.hpp"

namespace fwht::cuda {

// n <= 8: one group (fwht::stage_groups), so: widen, every stage in the wide type, round once,
// normalize, store. Thread t takes transform t.
template <class Tr>
__global__ void wide_small(const LayoutCopy c, const FastArgs a) {
  using C = typename Tr::C;
  using S = typename Tr::S;
  using Wd = Wide<C>;
  using R = typename Wd::type;
  const std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (t >= c.batch) return;
  const S* src = static_cast<const S*>(c.src) + t * c.src_distance;
  S* dst = static_cast<S*>(c.dst) + t * c.dst_distance;
  const int n = static_cast<int>(c.n);
  R v[8] = {};
#pragma unroll
  for (int j = 0; j < 8; ++j)
    if (j < n) v[j] = Wd::widen(Tr::load_s(src[j * c.src_stride]));
#pragma unroll
  for (int k = 0; k < 3; ++k) {  // the reference's loops: stride h = 2^k, butterflies (j, j + h)
    const int h = 1 << k;
    if (h >= n) break;
#pragma unroll
    for (int j = 0; j < 8 - h; ++j)
      if ((j & h) == 0 && j + h < n) {
        const R x = v[j];
        v[j] = x + v[j + h];
        v[j + h] = x - v[j + h];
      }
  }
  const C scale = Math<C>::scale(a.scale);
#pragma unroll
  for (int j = 0; j < 8; ++j)
    if (j < n) dst[j * c.dst_stride] = final_value<Tr>(Wd::narrow(v[j]), a.scaled, scale, a.n, false);
}

template <class Tr>
void launch_wide_small(const LayoutCopy& c, const FastArgs& args, cudaStream_t stream) {
  if constexpr (!Tr::kInteger && sizeof(typename Tr::C) == 4) {
    if (c.n > 8) throw pagh::Error("fwht::Plan::execute (cuda)", "wide_small: n > 8");
    const std::int64_t blocks = (c.batch + 255) / 256;
    wide_small<Tr><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(c, args);
    PAGH_CUDA_CHECK(cudaGetLastError(), "fwht::Plan::execute (cuda)");
  } else {
    throw pagh::Error("fwht::Plan::execute (cuda)", "wide_onchip needs a floating 4-byte compute type");
  }
}

}  // namespace fwht::cuda
