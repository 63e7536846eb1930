// Device helpers of the GPU benchmarks: input conversion and transposition (sketch_bench), top-k
// selections (recovery_bench, dense_recovery_bench); setup or baseline work, never the sketch.
#include <cub/device/device_radix_sort.cuh>
#include <cuda_bf16.h>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "dense_recovery.hpp"
#include "device_top_k.hpp"
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
__global__ void magnitudes_and_positions(const float* values, std::int64_t n, unsigned* keys, std::int64_t* positions) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n; i += std::int64_t{gridDim.x} * blockDim.x) {
    keys[i] = __float_as_uint(fabsf(values[i]));  // non-negative floats order like their bits
    positions[i] = i;
  }
}
void check_cuda(cudaError_t s, const char* what) {
  if (s != cudaSuccess) throw std::runtime_error(std::string("device_top_k_positions: ") + what + ": " + cudaGetErrorString(s));
}
}  // namespace

void device_top_k_positions(const float* values, std::int64_t n, std::size_t k, std::vector<std::int64_t>& positions) {
  positions.assign(std::min<std::size_t>(k, static_cast<std::size_t>(n)), 0);
  if (positions.empty()) return;
  unsigned *keys = nullptr, *sorted_keys = nullptr;
  std::int64_t *pos = nullptr, *sorted_pos = nullptr;
  void* temp = nullptr;
  std::size_t bytes = 0;
  check_cuda(cudaMalloc(&keys, n * sizeof(unsigned)), "cudaMalloc");
  check_cuda(cudaMalloc(&sorted_keys, n * sizeof(unsigned)), "cudaMalloc");
  check_cuda(cudaMalloc(&pos, n * sizeof(std::int64_t)), "cudaMalloc");
  check_cuda(cudaMalloc(&sorted_pos, n * sizeof(std::int64_t)), "cudaMalloc");
  magnitudes_and_positions<<<1024, 256>>>(values, n, keys, pos);
  check_cuda(cub::DeviceRadixSort::SortPairsDescending(nullptr, bytes, keys, sorted_keys, pos, sorted_pos, n), "sort");
  check_cuda(cudaMalloc(&temp, bytes), "cudaMalloc");
  check_cuda(cub::DeviceRadixSort::SortPairsDescending(temp, bytes, keys, sorted_keys, pos, sorted_pos, n), "sort");
  check_cuda(cudaMemcpy(positions.data(), sorted_pos, positions.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost), "download");
  cudaFree(temp), cudaFree(keys), cudaFree(sorted_keys), cudaFree(pos), cudaFree(sorted_pos);
}

void round_to_bf16(const float* in, void* out, std::size_t n) { to_bf16<<<1024, 256>>>(in, static_cast<__nv_bfloat16*>(out), n); }
void transpose_square(const float* in, float* out, std::int64_t n) {
  const auto blocks = static_cast<unsigned>((n + 31) / 32);
  transpose<<<dim3(blocks, blocks), dim3(32, 8)>>>(in, out, n);
}

// Helpers of dense_recovery_bench (dense_recovery.hpp).
namespace {
__global__ void set_row(float* b, std::int64_t ld, std::int64_t cols, std::int64_t row, float value) {
  for (std::int64_t j = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; j < cols; j += std::int64_t{gridDim.x} * blockDim.x)
    b[row + j * ld] = value;
}
__global__ void chunk_maxima(const float* c, std::int64_t n, std::int64_t chunk, float* maxima) {
  const std::int64_t chunks = (n + chunk - 1) / chunk;
  for (std::int64_t q = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; q < chunks; q += std::int64_t{gridDim.x} * blockDim.x) {
    float best = 0;
    for (std::int64_t i = q * chunk; i < n && i < (q + 1) * chunk; ++i) best = fmaxf(best, fabsf(c[i]));
    maxima[q] = best;
  }
}
__global__ void select_at_least(const float* c, std::int64_t n, float tau, unsigned long long* count, std::int64_t* idx, float* val,
                                std::int64_t capacity) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n; i += std::int64_t{gridDim.x} * blockDim.x)
    if (fabsf(c[i]) >= tau) {
      const unsigned long long at = atomicAdd(count, 1ull);
      if (at < static_cast<unsigned long long>(capacity)) idx[at] = i, val[at] = c[i];
    }
}
}  // namespace

void zero_row(float* b, std::int64_t ld, std::int64_t cols, std::int64_t row) { set_row<<<1024, 256>>>(b, ld, cols, row, 0.0f); }
void block_chunk_maxima(const float* c, std::int64_t n, std::int64_t chunk, float* maxima) {
  chunk_maxima<<<1024, 256>>>(c, n, chunk, maxima);
}
void block_select_at_least(const float* c, std::int64_t n, float tau, unsigned long long* count, std::int64_t* idx, float* val,
                           std::int64_t capacity) {
  select_at_least<<<4096, 256>>>(c, n, tau, count, idx, val, capacity);
}
