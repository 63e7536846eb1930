// The general path of the CUDA sketch backend, for every option the fused kernel does not cover
// (f64, f16, bf16, stabilized or Alman-Rao transforms, sparse inputs, b < 2^12): sign-scatter a batch
// of lines into device vectors, transform them with the fwht CUDA plan (bit-identical to the CPU's
// transform), multiply and accumulate. Plus the small kernels both paths share: reducing partial
// spectra in a fixed order, widening to double, and transposing B so that its rows are contiguous.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "device_memory.hpp"
#include "compress/paths/kernels.hpp"

namespace pagh::cuda {
namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kWarpsPerBlock = 8;

unsigned grid_for(std::int64_t n, int threads = 256) {
  return static_cast<unsigned>(std::min<std::int64_t>((n + threads - 1) / threads, 1 << 16));
}

__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }

// Entry e of line `k` (chunk-relative): its position and value (as double, like the CPU engine).
struct LineReader {
  Lines lines;
  __device__ std::int64_t begin(std::int64_t k) const { return lines.start ? lines.start[k] : 0; }
  __device__ std::int64_t end(std::int64_t k) const { return lines.start ? lines.start[k + 1] : lines.length; }
  __device__ void read(std::int64_t k, std::int64_t e, std::int64_t& position, double& value) const {
    const std::int64_t at = lines.start ? e : k * lines.ld + e;
    position = lines.start ? lines.index[e] : e;
    value = lines.values_f64 ? lines.values_f64[at] : static_cast<double>(lines.values_f32[at]);
  }
};

// One warp per vector: x[h(i)] += s(i) * v_i in Acc. Lanes of one instruction that hit the same
// bucket are summed in lane (= entry) order by the lowest of them; instructions are ordered by
// __syncwarp, so every bucket's sum has one fixed order.
template <class Acc>
__global__ void scatter_lines(LineReader a, LineReader b, const std::uint32_t* __restrict__ bucket_a,
                              const std::int8_t* __restrict__ sign_a, const std::uint32_t* __restrict__ bucket_b,
                              const std::int8_t* __restrict__ sign_b, std::int64_t first, std::int64_t count,
                              std::int64_t buckets, Acc* __restrict__ vectors) {
  const int lane = threadIdx.x & 31;
  const std::int64_t vector = blockIdx.x * std::int64_t{kWarpsPerBlock} + (threadIdx.x >> 5);
  if (vector >= 2 * count) return;  // warp-uniform
  const bool is_a = (vector & 1) == 0;
  const LineReader& reader = is_a ? a : b;
  const std::uint32_t* bucket = is_a ? bucket_a : bucket_b;
  const std::int8_t* sign = is_a ? sign_a : sign_b;
  const std::int64_t k = first + vector / 2;
  Acc* out = vectors + vector * buckets;
  const std::int64_t e0 = reader.begin(k), e1 = reader.end(k);
  for (std::int64_t base = e0; base < e1; base += 32) {
    const std::int64_t e = base + lane;
    const bool valid = e < e1;
    std::int64_t position = 0;
    double value = 0;
    if (valid) reader.read(k, e, position, value);
    const std::uint32_t h = valid ? bucket[position] : 0u;
    const Acc x = static_cast<Acc>(valid && sign[position] < 0 ? -value : value);
    const unsigned active = __ballot_sync(kFull, valid);
    if (valid) {
      const unsigned peers = __match_any_sync(active, h);
      Acc sum = x;
      if (peers != (1u << lane)) {
        sum = Acc(0);
        for (unsigned rest = peers; rest; rest &= rest - 1) sum = add_rn(sum, __shfl_sync(peers, x, __ffs(rest) - 1));
      }
      if (lane == __ffs(peers) - 1) out[h] = add_rn(out[h], sum);
    }
    __syncwarp();
  }
}

template <class T>
__global__ void round_to(const float* __restrict__ in, T* __restrict__ out, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count; i += std::int64_t{gridDim.x} * blockDim.x) {
    if constexpr (std::is_same_v<T, __half>) out[i] = __float2half_rn(in[i]);
    else out[i] = __float2bfloat16_rn(in[i]);
  }
}

template <class T> __device__ __forceinline__ auto widen(T v) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(v);
  else return v;
}

// spectrum[h] += Ha_j[h] * Hb_j[h] for j in order (multiply, then add: rounded like the CPU).
template <class T, class Acc>
__global__ void multiply_accumulate(const T* __restrict__ vectors, std::int64_t pairs, std::int64_t b,
                                    Acc* __restrict__ spectrum) {
  for (std::int64_t h = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; h < b; h += std::int64_t{gridDim.x} * blockDim.x) {
    Acc acc = spectrum[h];
    for (std::int64_t j = 0; j < pairs; ++j)
      acc = add_rn(acc, mul_rn(static_cast<Acc>(widen(vectors[2 * j * b + h])), static_cast<Acc>(widen(vectors[(2 * j + 1) * b + h]))));
    spectrum[h] = acc;
  }
}

__global__ void reduce_partials(const float* __restrict__ partials, int groups, std::int64_t db, float* __restrict__ spectrum) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < db; i += std::int64_t{gridDim.x} * blockDim.x) {
    float sum = 0.0f;
    for (int g = 0; g < groups; ++g) sum = __fadd_rn(sum, partials[g * db + i]);
    spectrum[i] = sum;
  }
}

template <class Acc>
__global__ void widen_to_double(const Acc* __restrict__ in, std::int64_t count, double* __restrict__ out) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count; i += std::int64_t{gridDim.x} * blockDim.x)
    out[i] = static_cast<double>(in[i]);
}

// One block of 1024 threads: strided partial sums, then a fixed tree (deterministic).
__global__ void frobenius(const double* __restrict__ x, std::int64_t count, int repetitions, double* out) {
  __shared__ double part[1024];
  double sum = 0.0;
  for (std::int64_t i = threadIdx.x; i < count; i += 1024) sum += x[i] * x[i];
  part[threadIdx.x] = sum;
  __syncthreads();
  for (int width = 512; width > 0; width /= 2) {
    if (threadIdx.x < width) part[threadIdx.x] += part[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = sqrt(part[0] / repetitions);
}

// out[r * ld_out + c] = in[r + c * ld_in] through 32 x 32 shared tiles (both sides coalesced).
__global__ void transpose(const float* __restrict__ in, std::int64_t ld_in, std::int64_t rows, std::int64_t cols,
                          float* __restrict__ out, std::int64_t ld_out) {
  __shared__ float tile[32][33];
  const std::int64_t r0 = blockIdx.x * std::int64_t{32}, c0 = blockIdx.y * std::int64_t{32};
  for (int y = threadIdx.y; y < 32; y += blockDim.y) {
    const std::int64_t r = r0 + threadIdx.x, c = c0 + y;
    if (r < rows && c < cols) tile[y][threadIdx.x] = in[r + c * ld_in];
  }
  __syncthreads();
  for (int y = threadIdx.y; y < 32; y += blockDim.y) {
    const std::int64_t r = r0 + y, c = c0 + threadIdx.x;
    if (r < rows && c < cols) out[r * ld_out + c] = tile[threadIdx.x][y];
  }
}

}  // namespace

void launch_scatter(const Lines& a, const Lines& b, const std::uint32_t* bucket_a, const std::int8_t* sign_a,
                    const std::uint32_t* bucket_b, const std::int8_t* sign_b, std::int64_t first, std::int64_t count,
                    std::int64_t buckets, void* vectors, int acc_bytes, cudaStream_t stream) {
  if (count == 0) return;
  const auto blocks = static_cast<unsigned>((2 * count + kWarpsPerBlock - 1) / kWarpsPerBlock);
  if (acc_bytes == 8)
    scatter_lines<double><<<blocks, 32 * kWarpsPerBlock, 0, stream>>>(LineReader{a}, LineReader{b}, bucket_a, sign_a, bucket_b, sign_b,
                                                                     first, count, buckets, static_cast<double*>(vectors));
  else
    scatter_lines<float><<<blocks, 32 * kWarpsPerBlock, 0, stream>>>(LineReader{a}, LineReader{b}, bucket_a, sign_a, bucket_b, sign_b,
                                                                    first, count, buckets, static_cast<float*>(vectors));
  check_launch("scatter_lines", "pagh::cuda::launch_scatter");
}

void launch_round_to_16bit(const float* in, void* out, std::int64_t count, int dtype, cudaStream_t stream) {
  if (dtype == 2) round_to<__half><<<grid_for(count), 256, 0, stream>>>(in, static_cast<__half*>(out), count);
  else round_to<__nv_bfloat16><<<grid_for(count), 256, 0, stream>>>(in, static_cast<__nv_bfloat16*>(out), count);
  check_launch("round_to", "pagh::cuda::launch_round_to_16bit");
}

void launch_multiply_accumulate(const void* vectors, std::int64_t pairs, std::int64_t b, int dtype, void* spectrum,
                                cudaStream_t stream) {
  const unsigned grid = grid_for(b);
  switch (dtype) {
    case 0: multiply_accumulate<double, double><<<grid, 256, 0, stream>>>(static_cast<const double*>(vectors), pairs, b, static_cast<double*>(spectrum)); break;
    case 1: multiply_accumulate<float, float><<<grid, 256, 0, stream>>>(static_cast<const float*>(vectors), pairs, b, static_cast<float*>(spectrum)); break;
    case 2: multiply_accumulate<__half, float><<<grid, 256, 0, stream>>>(static_cast<const __half*>(vectors), pairs, b, static_cast<float*>(spectrum)); break;
    default: multiply_accumulate<__nv_bfloat16, float><<<grid, 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(vectors), pairs, b, static_cast<float*>(spectrum)); break;
  }
  check_launch("multiply_accumulate", "pagh::cuda::launch_multiply_accumulate");
}

void launch_reduce_partials(const float* partials, int groups, std::int64_t db, float* spectrum, cudaStream_t stream) {
  reduce_partials<<<grid_for(db), 256, 0, stream>>>(partials, groups, db, spectrum);
  check_launch("reduce_partials", "pagh::cuda::launch_reduce_partials");
}

void launch_widen(const void* spectrum, int acc_bytes, std::int64_t count, double* sketches, cudaStream_t stream) {
  if (acc_bytes == 8) widen_to_double<double><<<grid_for(count), 256, 0, stream>>>(static_cast<const double*>(spectrum), count, sketches);
  else widen_to_double<float><<<grid_for(count), 256, 0, stream>>>(static_cast<const float*>(spectrum), count, sketches);
  check_launch("widen_to_double", "pagh::cuda::launch_widen");
}

void launch_frobenius(const double* sketches, std::int64_t count, int repetitions, double* out, cudaStream_t stream) {
  frobenius<<<1, 1024, 0, stream>>>(sketches, count, repetitions, out);
  check_launch("frobenius", "pagh::cuda::launch_frobenius");
}

void launch_transpose(const float* in, std::int64_t ld_in, std::int64_t rows, std::int64_t cols, float* out,
                      std::int64_t ld_out, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const dim3 grid(static_cast<unsigned>((rows + 31) / 32), static_cast<unsigned>((cols + 31) / 32));
  if (grid.y > 65535u) throw Error("pagh::cuda::launch_transpose", "matrix too wide");
  transpose<<<grid, dim3(32, 8), 0, stream>>>(in, ld_in, rows, cols, out, ld_out);
  check_launch("transpose", "pagh::cuda::launch_transpose");
}

}  // namespace pagh::cuda
