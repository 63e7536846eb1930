// tensor_split_floor: the wide sketch kernel's warp-local transform rounds alone (H_1024 on each
// warp's 1024 slots of two 2^14-float shared buffers per block, as rounds A and B of
// sketch/src/compress/paths/wide_sketch.cu do per k), timed in a loop, and their error against
// FP64. Three arithmetics (issue 31, bench/NOTES.md "tensor-core rounds"):
//   fp32      FP32 butterflies in two register rounds (the default path's rounds A and B);
//   bf16x3    the library's tensor-core rounds: three exact bf16 parts (tensor_rounds.cuh);
//   fp16x2    an experiment, here only: two FP16 parts, hi = fp16(x s) and lo = fp16(x s - hi),
//             both rounded to nearest, of values scaled per warp by a power of two s (max |x s| in
//             [2^10, 2^11), so that the first axis' outputs, <= 16 max, stay below 2^15): ~22
//             significant bits, 4 MMAs per tile and axis instead of 6.
// A probe for bench/RESULTS.md, no library code. Timing: 132 x 2 blocks of 512 threads (one per
// SM, as the wide kernel), `iterations` rounds on both buffers, median of 5 launches by events;
// the values overflow during the timed loop, which does not change the instruction stream.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

#include "compress/paths/fused_common.cuh"
#include "compress/paths/tensor_rounds.cuh"
#include "compress/paths/wide_layout.hpp"

namespace {

using pagh::cuda::wide_swizzle;
namespace tensor = pagh::cuda::tensor;

constexpr int kSlots = 1 << 14, kThreads = 512, kRun = 1024;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "tensor_split_floor: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(70);
  }
}

// ---- fp32: rounds A and B as in wide_sketch.cu (KeepF32) -------------------------------------
__device__ __forceinline__ void fp32_rounds(float* buffer, int warp, int lane, float (&v)[32]) {
  float* row = buffer + (warp << 10) + (lane << 5);
#pragma unroll
  for (int q = 0; q < 8; ++q) {
    const float4 x = *reinterpret_cast<const float4*>(row + ((q ^ (lane & 7)) << 2));
    v[4 * q] = x.x, v[4 * q + 1] = x.y, v[4 * q + 2] = x.z, v[4 * q + 3] = x.w;
  }
  pagh::cuda::fused::butterfly_stages<0, 5>(v);
#pragma unroll
  for (int q = 0; q < 8; ++q) *reinterpret_cast<float4*>(row + ((q ^ (lane & 7)) << 2)) = make_float4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
  __syncwarp();
#pragma unroll
  for (int r = 0; r < 32; ++r) v[r] = buffer[(warp << 10) + (lane ^ ((r & 7) << 2)) + (r << 5)];
  pagh::cuda::fused::butterfly_stages<0, 5>(v);
#pragma unroll
  for (int r = 0; r < 32; ++r) buffer[(warp << 10) + (lane ^ ((r & 7) << 2)) + (r << 5)] = v[r];
}

// ---- fp16x2: two scaled FP16 parts ------------------------------------------------------------
__device__ __forceinline__ std::uint32_t bits(__half2 h) { return *reinterpret_cast<const std::uint32_t*>(&h); }
__device__ __forceinline__ void split2(float x0, float x1, std::uint32_t& hi, std::uint32_t& lo) {
  const __half2 h = __floats2half2_rn(x0, x1);
  const float2 back = __half22float2(h);
  hi = bits(h), lo = bits(__floats2half2_rn(x0 - back.x, x1 - back.y));  // the subtractions are exact
}
__device__ __forceinline__ void mma_f16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// B as one 64-bit register, as tensor::mma_bf16 (a constant operand then needs no copies).
__device__ __forceinline__ void mma_f16(float (&d)[4], const std::uint32_t (&a)[4], std::uint64_t b) {
  asm volatile(
      "{ .reg .b32 b0, b1;\n"
      "  mov.b64 {b0, b1}, %8;\n"
      "  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {b0, b1}, {%0, %1, %2, %3}; }"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
__device__ __forceinline__ std::uint32_t hadamard_pair_f16(int row, int col0) {
  std::uint32_t pair = 0;
#pragma unroll
  for (int e = 0; e < 2; ++e) pair |= ((__popc(row & (col0 + e)) & 1) ? 0xbc00u : 0x3c00u) << (16 * e);
  return pair;
}
// H_16 in FP16 in the fragments of tensor::Hadamard16 (there in bf16).
struct Hadamard16F16 {
  std::uint32_t a[4];
  std::uint64_t b[2];
  __device__ explicit Hadamard16F16(int lane) {
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      const int l = tensor::opaque(lane), g = l >> 2, t = l & 3;
      a[p] = hadamard_pair_f16(g + 8 * (p & 1), 2 * t + 8 * (p >> 1));
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int l = tensor::opaque(lane), g = l >> 2, t = l & 3;
      b[h] = hadamard_pair_f16(8 * h + g, 2 * t) | std::uint64_t{hadamard_pair_f16(8 * h + g, 2 * t + 8)} << 32;
    }
  }
};
// tensor::tile_both_axes with two FP16 parts; x is already scaled.
__device__ __forceinline__ void tile_both_axes_f16(float (&x)[8], const Hadamard16F16& h) {
  std::uint32_t part[2][4];
#pragma unroll
  for (int p = 0; p < 4; ++p) split2(x[2 * p], x[2 * p + 1], part[0][p], part[1][p]);
  float d[2][4] = {};
#pragma unroll
  for (int q = 1; q >= 0; --q)
#pragma unroll
    for (int nh = 0; nh < 2; ++nh) mma_f16(d[nh], h.a, part[q][2 * nh], part[q][2 * nh + 1]);
#pragma unroll
  for (int p = 0; p < 4; ++p) split2(d[p >> 1][2 * (p & 1)], d[p >> 1][2 * (p & 1) + 1], part[0][p], part[1][p]);
  float e[2][4] = {};
#pragma unroll
  for (int q = 1; q >= 0; --q)
#pragma unroll
    for (int nh = 0; nh < 2; ++nh) mma_f16(e[nh], part[q], h.b[nh]);
#pragma unroll
  for (int i = 0; i < 4; ++i) x[i] = e[0][i], x[4 + i] = e[1][i];
}
__device__ __forceinline__ void fp16x2_rounds(float* buffer, const tensor::TensorAddresses& at, const Hadamard16F16& h, float (&v)[32]) {
#pragma unroll
  for (int tile = 0; tile < 4; ++tile)
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      const float2 pair = *reinterpret_cast<const float2*>(buffer + (tile << 8) + at.load[p]);
      v[8 * tile + 2 * p] = pair.x, v[8 * tile + 2 * p + 1] = pair.y;
    }
  float most = 0;
#pragma unroll
  for (int r = 0; r < 32; ++r) most = fmaxf(most, fabsf(v[r]));
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) most = fmaxf(most, __shfl_xor_sync(0xffffffffu, most, o));
  // s = 2^(10 - e) for max = 2^e x 1.f; inverse 2^(e - 10). (Zero or tiny warps: s = 1.)
  const int e = static_cast<int>((__float_as_uint(most) >> 23) & 0xff) - 127;
  const bool scaled = e >= -100 && e <= 127;
  const float s = scaled ? __uint_as_float(static_cast<unsigned>(127 + 10 - e) << 23) : 1.0f;
  const float inverse = scaled ? __uint_as_float(static_cast<unsigned>(127 + e - 10) << 23) : 1.0f;
#pragma unroll
  for (int tile = 0; tile < 4; ++tile) {
    float x[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) x[i] = v[8 * tile + i] * s;
    tile_both_axes_f16(x, h);
#pragma unroll
    for (int i = 0; i < 8; ++i) v[8 * tile + i] = x[i];
  }
#pragma unroll
  for (int k = 3; k < 5; ++k)
#pragma unroll
    for (int r = 0; r < 32; ++r)
      if ((r & (1 << k)) == 0) {
        const float a = v[r], b = v[r | (1 << k)];
        v[r] = __fadd_rn(a, b), v[r | (1 << k)] = __fsub_rn(a, b);
      }
  __syncwarp();
#pragma unroll
  for (int tile = 0; tile < 4; ++tile)
#pragma unroll
    for (int i = 0; i < 8; ++i) buffer[(tile << 8) + at.store[i]] = v[8 * tile + i] * inverse;
}

// Each block: buffers a and b from vectors 2 blockIdx and 2 blockIdx + 1, `iterations` rounds on
// both (a block barrier after each, as the wide kernel's per-k barrier), then back.
template <int kVariant>  // 0 fp32, 1 bf16x3, 2 fp16x2
__global__ void __launch_bounds__(kThreads, 1) rounds_loop(const float* __restrict__ in, float* __restrict__ out, int iterations) {
  extern __shared__ __align__(16) float buffers[];
  const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * 2 * kSlots;
  for (int u = threadIdx.x; u < 2 * kSlots; u += kThreads)
    buffers[(u & kSlots) + wide_swizzle(static_cast<std::uint32_t>(u & (kSlots - 1)))] = in[base + u];
  __syncthreads();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const tensor::TensorAddresses at(warp, lane);
  const tensor::Hadamard16 h3(lane);
  const Hadamard16F16 h2(lane);
  float v[32];
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int side = 0; side < 2; ++side) {
      float* buffer = buffers + side * kSlots;
      if constexpr (kVariant == 0) fp32_rounds(buffer, warp, lane, v);
      if constexpr (kVariant == 1) tensor::tensor_rounds(buffer, at, h3, v);
      if constexpr (kVariant == 2) fp16x2_rounds(buffer, at, h2, v);
    }
    __syncthreads();
  }
  for (int u = threadIdx.x; u < 2 * kSlots; u += kThreads)
    out[base + u] = buffers[(u & kSlots) + wide_swizzle(static_cast<std::uint32_t>(u & (kSlots - 1)))];
}

template <int kVariant>
float run(const float* in, float* out, int blocks, int iterations) {
  const std::size_t shared = 2 * kSlots * sizeof(float);
  check(cudaFuncSetAttribute(rounds_loop<kVariant>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)), "attribute");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event"), check(cudaEventCreate(&stop), "event");
  check(cudaEventRecord(start), "record");
  rounds_loop<kVariant><<<blocks, kThreads, shared>>>(in, out, iterations);
  check(cudaGetLastError(), "launch");
  check(cudaEventRecord(stop), "record");
  check(cudaEventSynchronize(stop), "synchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
  cudaEventDestroy(start), cudaEventDestroy(stop);
  return ms;
}
float run_variant(int variant, const float* in, float* out, int blocks, int iterations) {
  return variant == 0 ? run<0>(in, out, blocks, iterations) : variant == 1 ? run<1>(in, out, blocks, iterations) : run<2>(in, out, blocks, iterations);
}

void fwht_runs(std::vector<double>& x) {
  for (std::size_t base = 0; base < x.size(); base += kRun)
    for (int h = 1; h < kRun; h *= 2)
      for (int i = 0; i < kRun; i += 2 * h)
        for (int j = i; j < i + h; ++j) {
          const double a = x[base + j], b = x[base + j + h];
          x[base + j] = a + b, x[base + j + h] = a - b;
        }
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 2000;
  if (iterations < 1) {
    std::fprintf(stderr, "tensor_split_floor: iterations (argument 1) must be a positive integer\n");
    return 64;
  }
  int device = 0, sms = 0;
  check(cudaGetDevice(&device), "device");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "attribute");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "properties");
  const char* names[] = {"fp32", "bf16x3", "fp16x2"};

  // Accuracy: 24 blocks (48 vectors of 2^14, 768 runs of 1024), one iteration, outputs poisoned.
  const int check_blocks = 24;
  const std::size_t count = static_cast<std::size_t>(check_blocks) * 2 * kSlots;
  float *d_in = nullptr, *d_out = nullptr;
  const std::size_t timed = static_cast<std::size_t>(sms) * 2 * kSlots;
  check(cudaMalloc(&d_in, std::max(count, timed) * 4), "malloc"), check(cudaMalloc(&d_out, std::max(count, timed) * 4), "malloc");
  std::mt19937_64 rng(20261126);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-40, 40), integer(-8, 8);
  std::printf("%s, %d SMs\n", prop.name, sms);
  std::printf("%-10s %-24s %12s %12s %10s\n", "variant", "input", "rel_error", "worst/||x||", "exact");
  for (int input = 0; input < 3; ++input) {
    const char* input_name = input == 0 ? "gaussian" : input == 1 ? "range 2^-40..2^40" : "integers -8..8";
    std::vector<float> x(count);
    for (float& v : x) v = input == 0 ? normal(rng) : input == 1 ? std::ldexp(normal(rng), exponent(rng)) : static_cast<float>(integer(rng));
    std::vector<double> ref(x.begin(), x.end());
    fwht_runs(ref);
    check(cudaMemcpy(d_in, x.data(), count * 4, cudaMemcpyHostToDevice), "copy");
    for (int variant = 0; variant < 3; ++variant) {
      check(cudaMemset(d_out, 0xff, count * 4), "poison");
      run_variant(variant, d_in, d_out, check_blocks, 1);
      std::vector<float> y(count);
      check(cudaMemcpy(y.data(), d_out, count * 4, cudaMemcpyDeviceToHost), "copy");
      double norm = 0, err = 0, worst = 0;
      bool exact = true, written = true;
      for (std::size_t base = 0; base < count; base += kRun) {
        double run_norm = 0, run_worst = 0;
        for (int j = 0; j < kRun; ++j) run_norm += static_cast<double>(x[base + j]) * x[base + j];
        for (int j = 0; j < kRun; ++j) {
          const std::size_t i = base + j;
          written = written && !std::isnan(y[i]);
          norm += ref[i] * ref[i], err += (y[i] - ref[i]) * (y[i] - ref[i]);
          run_worst = std::max(run_worst, std::fabs(y[i] - ref[i]));
          exact = exact && static_cast<double>(y[i]) == ref[i];
        }
        if (run_norm > 0) worst = std::max(worst, run_worst / std::sqrt(run_norm));
      }
      if (!written) std::printf("%-10s %-24s  NOT WRITTEN (NaN in output)\n", names[variant], input_name);
      std::printf("%-10s %-24s %12.3g %12.3g %10s\n", names[variant], input_name, std::sqrt(err / norm),
                  worst / std::numeric_limits<float>::epsilon(), exact ? "yes" : "no");
    }
  }
  std::printf("(worst/||x||: max |y - ref| over a run / the run's 2-norm, in FP32 eps)\n");

  // Timing: one block per SM, both buffers, `iterations` rounds; median of 5 after a warm-up.
  std::vector<float> x(timed);
  for (float& v : x) v = normal(rng);
  check(cudaMemcpy(d_in, x.data(), timed * 4, cudaMemcpyHostToDevice), "copy");
  std::printf("\n%-10s %12s %16s\n", "variant", "ms", "us/iteration");
  for (int variant = 0; variant < 3; ++variant) {
    run_variant(variant, d_in, d_out, sms, iterations);
    std::vector<float> times;
    for (int r = 0; r < 5; ++r) times.push_back(run_variant(variant, d_in, d_out, sms, iterations));
    std::sort(times.begin(), times.end());
    std::printf("%-10s %12.3f %16.3f\n", names[variant], times[2], 1000.0 * times[2] / iterations);
  }
  cudaFree(d_in), cudaFree(d_out);
  return 0;
}
