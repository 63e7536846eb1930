// Device helpers of sketch_bench --backend cuda: input conversion and transposition (setup, untimed).
#include <cuda_bf16.h>

#include <cstddef>

#include "sketch_bench_cuda.hpp"

namespace {
__global__ void to_bf16(const float* in, __nv_bfloat16* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = __float2bfloat16_rn(in[i]);
}
__global__ void transpose(const float* in, float* out, std::int64_t n) {
  __shared__ float tile[32][33];
  const std::int64_t r0 = blockIdx.x * std::int64_t{32}, c0 = blockIdx.y * std::int64_t{32};
  for (int y = threadIdx.y; y < 32; y += blockDim.y)
    if (r0 + threadIdx.x < n && c0 + y < n) tile[y][threadIdx.x] = in[(r0 + threadIdx.x) + (c0 + y) * n];
  __syncthreads();
  for (int y = threadIdx.y; y < 32; y += blockDim.y)
    if (r0 + y < n && c0 + threadIdx.x < n) out[(c0 + threadIdx.x) + (r0 + y) * n] = tile[threadIdx.x][y];
}
}  // namespace

void round_to_bf16(const float* in, void* out, std::size_t n) { to_bf16<<<1024, 256>>>(in, static_cast<__nv_bfloat16*>(out), n); }
void transpose_square(const float* in, float* out, std::int64_t n) {
  const auto blocks = static_cast<unsigned>((n + 31) / 32);
  transpose<<<dim3(blocks, blocks), dim3(32, 8)>>>(in, out, n);
}
