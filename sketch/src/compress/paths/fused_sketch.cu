// The fused sketch kernel: for each k, column k of A and row k of B are read once from device
// memory, sign-scattered into shared memory, transformed, multiplied and accumulated in registers.
// Nothing but the inputs and one partial spectrum per block ever touches device memory.
//
// Slices. b = 2^L is too long for one SM to hold a vector and its accumulator (2^15 floats is
// 128 KiB each), so a block owns one slice of 2^12 *output* buckets f = (f_hi, f_lo). Writing
// h = (h_hi, h_lo) for input buckets, (H x)[f_hi, f_lo] = H_12 y[f_lo] with the folded vector
// y[h_lo] = sum_{h_hi} (-1)^popcount(f_hi & h_hi) x[h_hi, h_lo]: the top L - 12 stages become a
// sign in the scatter. So a block scatters every entry of the line with sign
// s(i) (-1)^popcount(f_hi & h_hi(i)) into bucket h_lo(i) of a 2^12 buffer and runs 12 stages. The
// price is that each of the 2^(L-12) slices reads and scatters the whole line; cluster_sketch.cu
// shares the top stages across a cluster instead, which pays from b = 2^16 (bench/NOTES.md).
//
// Block: 64 threads (2 warps), 64 elements per thread. Warp 0 scatters a_k, warp 1 scatters b_k
// (fused_common.cuh): entries of one warp instruction that share a bucket carry precomputed ranks
// (prepare_scatter) and add in rounds in lane (= index) order, so every bucket's sum has a fixed
// order: deterministic, no atomics. The transform: round 1 holds element bits [6, 12) in registers
// (thread bits [0, 6), scalar shared loads, conflict-free), one exchange through shared memory,
// round 2 holds bits [0, 6) (LDS.128); H a_k goes back to shared memory so that only the
// accumulator and one vector are live (6 blocks per SM). The accumulator P (64 floats per thread)
// stays in registers for all k of the block; each block handles the k with k mod groups == group,
// in increasing order, so the partial sums do not depend on how K is chunked for streaming. Shared index e lives at swizzle(e): bits
// [6, 9) XORed into bits [2, 5), which makes both rounds and the 16-byte accesses conflict-free.
#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "device_memory.hpp"
#include "compress/paths/fused_common.cuh"
#include "compress/paths/kernels.hpp"

namespace pagh::cuda {
namespace {

using namespace fused;

// Loads in flight per lane in the scatter: 16 measured fastest of 8, 16 and 32 (bench/NOTES.md).
constexpr int kUnroll = 16;

__global__ void __launch_bounds__(kThreads, kBlocksPerSm) fused_sketch(FusedArgs args) {
  __shared__ __align__(16) float buffers[2][kSlice];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int group = blockIdx.x, rep = blockIdx.z;
  const unsigned f_hi = blockIdx.y;
  const std::int64_t b = std::int64_t{1} << args.log2b;
  float* partial = args.partials + (static_cast<std::int64_t>(group) * args.repetitions + rep) * b +
                   static_cast<std::int64_t>(f_hi) * kSlice + tid * kRegs;

  // Accumulator in round-2 layout: element tid * 64 + r. A later chunk continues the same sums.
  float acc[kRegs];
#pragma unroll
  for (int q = 0; q < kRegs / 4; ++q) {
    const float4 old = args.accumulate ? reinterpret_cast<const float4*>(partial)[q] : make_float4(0, 0, 0, 0);
    acc[4 * q] = old.x, acc[4 * q + 1] = old.y, acc[4 * q + 2] = old.z, acc[4 * q + 3] = old.w;
  }
  for (int e = tid; e < 2 * kSlice; e += kThreads) (&buffers[0][0])[e] = 0.0f;

  // The first k of this chunk that belongs to this group.
  const std::int64_t first = args.k_first + ((group - args.k_first % args.groups) % args.groups + args.groups) % args.groups;
  const std::int64_t end = args.k_first + args.k_count;
  const std::uint32_t* code = warp == 0 ? args.code_a + rep * args.m : args.code_b + rep * args.p;
  const std::int64_t length = warp == 0 ? args.m : args.p;
  const Addresses at(tid);
  __syncthreads();
  for (std::int64_t k = first; k < end; k += args.groups) {
    const std::int64_t local = k - args.k_first;
    const float* line = warp == 0 ? args.a + local * args.lda : args.bt + local * args.ldbt;
    scatter_line<kUnroll>(line, code, static_cast<int>(length), f_hi, buffers[warp], lane);
    __syncthreads();

    float va[kRegs];
    round_one(buffers, at, va);
    __syncthreads();

    // Round 2: element (tid << 6) | r, 16-byte accesses. H a_k goes back to shared memory so that
    // only the accumulator and one vector are live; the product pass zeroes both buffers.
    const float4 zero = make_float4(0, 0, 0, 0);
    float vb[kRegs];
    load_second<false>(buffers[0], at, va);
    register_stages(va);
    store_second(buffers[0], at, va);
    load_second<true>(buffers[1], at, vb);
    register_stages(vb);
    // P += Ha . Hb, multiply then add (rounded separately, as the CPU engine does).
#pragma unroll
    for (int q = 0; q < kRegs / 4; ++q) {
      const float4 x = *reinterpret_cast<const float4*>(&buffers[0][at.second(q)]);
      *reinterpret_cast<float4*>(&buffers[0][at.second(q)]) = zero;
      acc[4 * q] = __fadd_rn(acc[4 * q], __fmul_rn(x.x, vb[4 * q]));
      acc[4 * q + 1] = __fadd_rn(acc[4 * q + 1], __fmul_rn(x.y, vb[4 * q + 1]));
      acc[4 * q + 2] = __fadd_rn(acc[4 * q + 2], __fmul_rn(x.z, vb[4 * q + 2]));
      acc[4 * q + 3] = __fadd_rn(acc[4 * q + 3], __fmul_rn(x.w, vb[4 * q + 3]));
    }
    __syncthreads();
  }

#pragma unroll
  for (int q = 0; q < kRegs / 4; ++q)
    reinterpret_cast<float4*>(partial)[q] = make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
}

// One thread per entry i of a repetition's line; the lanes of a warp are the entries of one scatter
// instruction (32 | i - lane), so __match_any_sync finds the entries that share a slot there. An
// entry with rank > 15 cannot be encoded: *overflow is set and the engine takes the general path.
__global__ void prepare_scatter(const std::uint32_t* __restrict__ buckets, const std::int8_t* __restrict__ signs, std::int64_t n,
                                std::uint32_t* __restrict__ code, int* __restrict__ overflow) {
  const std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  const std::int64_t at = blockIdx.y * n + i;
  const bool valid = i < n;
  const std::uint32_t h = valid ? buckets[at] : 0u;
  const int slot = static_cast<int>(h & (kSlice - 1));
  const unsigned active = __ballot_sync(kFull, valid);
  if (!valid) return;
  const unsigned peers = __match_any_sync(active, slot);
  const unsigned rank = static_cast<unsigned>(__popc(peers & ((1u << (threadIdx.x & 31)) - 1)));
  if (rank > 15) *overflow = 1;
  code[at] = static_cast<std::uint32_t>(swizzle(slot)) | (h & ~static_cast<std::uint32_t>(kSlice - 1)) | (std::min(rank, 15u) << 27) |
             (signs[at] < 0 ? 0x80000000u : 0u);
}

}  // namespace

using namespace fused;

void launch_fused(const FusedArgs& args, cudaStream_t stream) {
  if (args.log2b < kSliceLog || args.log2b > 27 || args.groups < 1 || args.repetitions < 1 || args.m > INT32_MAX ||
      args.p > INT32_MAX)
    throw Error("pagh::cuda::launch_fused", "unsupported geometry (needs 2^12 <= b <= 2^27 and lines below 2^31)");
  const dim3 grid(static_cast<unsigned>(args.groups), 1u << (args.log2b - kSliceLog), static_cast<unsigned>(args.repetitions));
  if (grid.y > 65535u || grid.z > 65535u) throw Error("pagh::cuda::launch_fused", "too many slices or repetitions for one launch");
  fused_sketch<<<grid, kThreads, 0, stream>>>(args);
  check_launch("fused_sketch", "pagh::cuda::launch_fused");
}

void prepare_fused_tables(const std::uint32_t* buckets, const std::int8_t* signs, std::int64_t n, int repetitions,
                          std::uint32_t* code, int* overflow, cudaStream_t stream) {
  if (n == 0) return;
  const dim3 grid(static_cast<unsigned>((n + 255) / 256), static_cast<unsigned>(repetitions));
  prepare_scatter<<<grid, 256, 0, stream>>>(buckets, signs, n, code, overflow);
  check_launch("prepare_scatter", "pagh::cuda::prepare_fused_tables");
}

int fused_blocks_per_sm() {
  int blocks = 0;
  PAGH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fused_sketch, kThreads, 0), "pagh::cuda::fused_blocks_per_sm");
  return blocks;
}

}  // namespace pagh::cuda
