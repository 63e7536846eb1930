// Device pieces shared by the two fused sketch kernels (fused_sketch.cu: slices of 2^12 buckets;
// cluster_sketch.cu: clusters of such slices): the block geometry, the shared-memory swizzle, the
// register stages, the deterministic scatter of one warp instruction, and the round-1/round-2
// accesses. See fused_sketch.cu for the design.
#pragma once

#include <cstdint>

#include "compress/paths/kernels.hpp"

namespace pagh::cuda::fused {

constexpr int kThreads = 64;
constexpr int kSlice = 1 << kSliceLog;     // 4096 buckets
constexpr int kRegs = kSlice / kThreads;   // 64 elements per thread
constexpr unsigned kFull = 0xffffffffu;
// 32 KiB of shared memory per block: 6 blocks fill an SM's 228 KiB; registers follow (<= 170).
constexpr int kBlocksPerSm = 6;
static_assert(kRegs == 64 && kSliceLog == 12, "the two rounds below assume 2^6 x 2^6");

__device__ __forceinline__ int swizzle(int e) { return e ^ (((e >> 6) & 7) << 2); }

// The swizzled addresses of a thread's elements as 8 base registers plus compile-time offsets
// (otherwise the compiler hoists 80 loop-invariant addresses and spills):
//   round 1, element tid | r << 6:      swizzle = (tid ^ ((r & 7) << 2)) + (r << 6)
//   round 2, element tid << 6 | 4q:     swizzle = (tid << 6) + 4 * ((q & 8) | ((q & 7) ^ (tid & 7)))
struct Addresses {
  int round1[8], round2[8];
  __device__ explicit Addresses(int tid) {
#pragma unroll
    for (int j = 0; j < 8; ++j) round1[j] = tid ^ (j << 2), round2[j] = (tid << 6) + 4 * (j ^ (tid & 7));
  }
  __device__ __forceinline__ int first(int r) const { return round1[r & 7] + (r << 6); }
  __device__ __forceinline__ int second(int q) const { return round2[q & 7] + 4 * (q & 8); }
};

// Butterflies on register bits [kFirst, kFirst + kCount) in increasing order: (a, b) -> (a + b,
// a - b), as the reference writes them (also the wide kernel's rounds, wide_sketch.cu).
template <int kFirst, int kCount, int kN>
__device__ __forceinline__ void butterfly_stages(float (&v)[kN]) {
#pragma unroll
  for (int k = kFirst; k < kFirst + kCount; ++k) {
#pragma unroll
    for (int r = 0; r < kN; ++r) {
      if ((r & (1 << k)) == 0) {
        const float a = v[r], b = v[r | (1 << k)];
        v[r] = __fadd_rn(a, b);
        v[r | (1 << k)] = __fsub_rn(a, b);
      }
    }
  }
}

// Stages on register bits [0, 6).
__device__ __forceinline__ void register_stages(float (&v)[kRegs]) { butterfly_stages<0, 6>(v); }

// buf[h_lo] += sign * value for every entry of one line (one warp, entry i on lane i mod 32 of
// instruction i / 32). code (prepare_scatter): the swizzled slot in bits [0, 12), h_hi in bits
// [12, 27), the entry's rank among the lanes of its instruction with the same slot in bits
// [27, 31), s(i) < 0 in bit 31. Lanes of rank j add in round j of their instruction, so colliding
// entries are added one after the other in lane (= index) order, as on the CPU: deterministic,
// no atomics, and an instruction without collisions is one load, add and store per lane.
// One instruction of the scatter: lane `valid` adds x to buf[slot]. Without collisions (the usual
// case) every lane adds at once; otherwise lanes of rank j add in round j.
// buf: the shared-space byte address of this warp's buffer (with a generic pointer the compiler
// rebuilds the shared-window address for every entry: 6 instructions of 20).
__device__ __forceinline__ void add_shared(unsigned address, float x) {
  float old;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(old) : "r"(address) : "memory");
  asm volatile("st.shared.f32 [%0], %1;" ::"r"(address), "f"(__fadd_rn(old, x)) : "memory");
}

__device__ __forceinline__ void scatter_one(float value, std::uint32_t c, bool valid, std::uint32_t fold_mask, unsigned buf) {
  // Sign bit: s(i) xor the fold parity popcount(h_hi & f_hi) (the slices above).
  const std::uint32_t sign = (c ^ (static_cast<std::uint32_t>(__popc(c & fold_mask)) << 31)) & 0x80000000u;
  const float x = __uint_as_float(__float_as_uint(value) ^ sign);
  const unsigned rank = (c >> 27) & 15u;
  const unsigned cell = buf + 4 * (c & (kSlice - 1));
  const unsigned rounds = __reduce_max_sync(kFull, valid ? rank : 0u);
  if (rounds == 0) {
    if (valid) add_shared(cell, x);
  } else {
    for (unsigned j = 0; j <= rounds; ++j) {
      if (valid && rank == j) add_shared(cell, x);
      __syncwarp();
    }
  }
  __syncwarp();
}

// All loads of a batch are issued before its adds, so that their latencies overlap.
template <int kUnroll>
__device__ __forceinline__ void scatter_line(const float* __restrict__ line, const std::uint32_t* __restrict__ code, int n,
                                             unsigned f_hi, float* buffer, int lane) {
  const std::uint32_t fold_mask = f_hi << kSliceLog;
  const auto buf = static_cast<unsigned>(__cvta_generic_to_shared(buffer));
  int base = 0;
  for (; base + 32 * kUnroll <= n; base += 32 * kUnroll) {
    float value[kUnroll];
    std::uint32_t c[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) value[u] = __ldg(line + base + 32 * u + lane), c[u] = __ldg(code + base + 32 * u + lane);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) scatter_one(value[u], c[u], true, fold_mask, buf);
  }
  for (; base < n; base += 32) {
    const bool valid = base + lane < n;
    scatter_one(valid ? __ldg(line + base + lane) : 0.0f, valid ? __ldg(code + base + lane) : 0u, valid, fold_mask, buf);
  }
}

// A thread's round-2 elements with 16-byte loads; kZero leaves zeros behind for the next scatter.
template <bool kZero>
__device__ __forceinline__ void load_second(float* buf, const Addresses& at, float (&v)[kRegs]) {
#pragma unroll
  for (int q = 0; q < kRegs / 4; ++q) {
    const float4 x = *reinterpret_cast<const float4*>(buf + at.second(q));
    if constexpr (kZero) *reinterpret_cast<float4*>(buf + at.second(q)) = make_float4(0, 0, 0, 0);
    v[4 * q] = x.x, v[4 * q + 1] = x.y, v[4 * q + 2] = x.z, v[4 * q + 3] = x.w;
  }
}

// Round 1 on both buffers: element tid | (r << 6), stages on bits [6, 12), written back in place,
// one vector at a time (only the accumulator and one vector are live).
__device__ __forceinline__ void round_one(float (&buffers)[2][kSlice], const Addresses& at, float (&v)[kRegs]) {
#pragma unroll
  for (int which = 0; which < 2; ++which) {
    float* buf = buffers[which];
#pragma unroll
    for (int r = 0; r < kRegs; ++r) v[r] = buf[at.first(r)];
    register_stages(v);
#pragma unroll
    for (int r = 0; r < kRegs; ++r) buf[at.first(r)] = v[r];
  }
}

__device__ __forceinline__ void store_second(float* buf, const Addresses& at, const float (&v)[kRegs]) {
#pragma unroll
  for (int q = 0; q < kRegs / 4; ++q)
    *reinterpret_cast<float4*>(buf + at.second(q)) = make_float4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
}

}  // namespace pagh::cuda::fused
