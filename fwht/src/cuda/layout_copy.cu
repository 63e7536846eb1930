// Copy between a plan_many layout and a packed buffer (see wide_small.cuh): element j of
// transform t moves from src + t*src_distance + j*src_stride to dst + t*dst_distance +
// j*dst_stride. Bits are copied unchanged (2- or 4-byte words).
#include <algorithm>
#include <string>

#include "pagh/cuda_check.hpp"
#include "cuda/fast_pass.hpp"
#include "pagh/error.hpp"

namespace fwht::cuda {
namespace {

template <class Word>
__global__ void layout_copy(const LayoutCopy c, int log2n) {
  const std::int64_t total = c.n * c.batch;
  const Word* src = static_cast<const Word*>(c.src);
  Word* dst = static_cast<Word*>(c.dst);
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < total;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t t = k >> log2n, j = k & (c.n - 1);
    dst[t * c.dst_distance + j * c.dst_stride] = src[t * c.src_distance + j * c.src_stride];
  }
}

}  // namespace

void launch_layout_copy(const LayoutCopy& c, int element_bytes, cudaStream_t stream) {
  const int log2n = __builtin_ctzll(static_cast<unsigned long long>(c.n));
  const std::int64_t total = c.n * c.batch;
  const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>((total + 255) / 256, 65536));
  if (element_bytes == 4) layout_copy<unsigned><<<blocks, 256, 0, stream>>>(c, log2n);
  else if (element_bytes == 2) layout_copy<unsigned short><<<blocks, 256, 0, stream>>>(c, log2n);
  else throw pagh::Error("fwht::Plan::execute (cuda)", "layout copy of " + std::to_string(element_bytes) + "-byte elements");
  PAGH_CUDA_CHECK(cudaGetLastError(), "fwht::Plan::execute (cuda)");
}

}  // namespace fwht::cuda
