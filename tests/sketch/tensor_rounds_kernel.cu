// Test harness for the wide kernel's tensor-core rounds (compress/paths/tensor_rounds.cuh): each
// block of 512 threads loads 2^14 values into a shared buffer in the wide kernel's swizzled layout,
// and each of its 16 warps applies tensor_rounds to its 1024 slots (H_1024 on slot bits 0-9).
#include "tensor_rounds_kernel.hpp"

#include "compress/paths/tensor_rounds.cuh"
#include "compress/paths/wide_layout.hpp"

namespace pagh::cuda_test {
namespace {

constexpr int kSlots = 1 << 14, kThreads = 512;

__global__ void __launch_bounds__(kThreads, 1) tensor_rounds_kernel(const float* __restrict__ in, float* __restrict__ out) {
  extern __shared__ __align__(16) float buffer[];
  const float* from = in + static_cast<std::int64_t>(blockIdx.x) * kSlots;
  float* to = out + static_cast<std::int64_t>(blockIdx.x) * kSlots;
  for (int u = threadIdx.x; u < kSlots; u += kThreads) buffer[pagh::cuda::wide_swizzle(static_cast<std::uint32_t>(u))] = from[u];
  __syncthreads();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const pagh::cuda::tensor::TensorAddresses at(warp, lane);
  const pagh::cuda::tensor::Hadamard16 h(lane);
  float v[32];
  pagh::cuda::tensor::tensor_rounds(buffer, at, h, v);
  __syncthreads();
  for (int u = threadIdx.x; u < kSlots; u += kThreads) to[u] = buffer[pagh::cuda::wide_swizzle(static_cast<std::uint32_t>(u))];
}

}  // namespace

cudaError_t apply_tensor_rounds(const float* in, float* out, int vectors) {
  const cudaError_t set = cudaFuncSetAttribute(tensor_rounds_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSlots * 4);
  if (set != cudaSuccess) return set;
  tensor_rounds_kernel<<<vectors, kThreads, kSlots * 4>>>(in, out);
  const cudaError_t launched = cudaGetLastError();
  return launched != cudaSuccess ? launched : cudaDeviceSynchronize();
}

}  // namespace pagh::cuda_test
