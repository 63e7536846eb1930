// The register-tile pass ("fast path") of the CUDA backend: folklore transforms of 4-byte compute
// types (f32, i32, f16/bf16 computed in float or in storage precision) on packed layouts (stride 1,
// transforms back to back): plain; Kahan/Neumaier for single-pass plans (n <= 2^13); wide_onchip
// (schedule.hpp, make_wide_schedule). Declared here for the plan; defined in fast_pass.cuh (kernels)
// and fast_launch.cuh (launchers), instantiated per storage type in passes_*.cu. See fast_pass.cuh
// for the design and schedule.hpp for the pass geometry.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "fwht/options.hpp"

namespace fwht::cuda {

struct FastArgs {
  const void* src = nullptr;  // storage type S on the first pass, work type W after
  void* dst = nullptr;        // storage type S on the last pass, work type W before
  std::int64_t total = 0;     // batch * n elements, packed
  std::int64_t n = 1;
  int log2n = 0;
  int s = 0, g = 0, w = 0;  // first stage, stages of this pass, log2 columns of a strided tile
  double scale = 1.0;       // normalization factor, rounded to the compute type on the device
  bool scaled = false, inverse = false;
  // 16-byte accesses allowed (aligned buffers): vec_src on first passes, vec_dst on first passes
  // and cluster passes (cluster_pass.cuh).
  bool vec_src = false, vec_dst = false;
  bool staged = true;  // first pass with vec_src: coalesced cp.async through shared memory
  // Stabilization::wide_carry: one residual byte per element of the packed buffer, written by every
  // pass but the last and read by every pass but the first (in place, like the work buffer).
  signed char* carry = nullptr;
  // Launch as a programmatic dependent of the previous pass (pass_dependency.cuh): passes after the
  // first whose predecessor in the stream is the plan's previous kernel.
  bool dependent = false;
};

// Two consecutive strided passes A (stages [a.s, a.s + a.g)) and B (the rest, to log2 n) fused in
// one launch so that the data written by A is read back by B from L2: the transform's columns (the
// a.s lowest index bits) are cut into strips of strip_columns; a strip with all its rows (a few
// MiB) is one unit of A tiles and of B tiles. counters: [0] ticket, [1 + j] finished A tiles of
// strip j; zero before the launch.
struct FusedArgs {
  FastArgs a, b;
  unsigned* counters = nullptr;
  std::int64_t strips = 0;                // batch * strips_per_transform
  std::int64_t strips_per_transform = 0;  // 2^a.s / strip_columns
  std::int64_t strip_columns = 0;
  std::int64_t tiles_a = 0, tiles_b = 0;  // per strip
  std::int64_t lag = 1;                   // strip j's B tiles follow strip (j + lag)'s A tiles
  bool hints = true;                      // L2 evict-last / evict-first hints (run_tile)
};

inline constexpr int kFastThreads = 256;

// The shared layout of 4-byte words (fast_pass.cuh, exchange): element e at e ^ bank_xor(e), or
// (padded layout) at e + (e >> pad_shift), pad_shift = 5 for blocks of 2^13 and 6 for 2^14 (one
// word of padding per 32 or 64), so a padded plane is 2^block_log + 2^(block_log - pad_shift)
// words. Padded: blocks of 2^13, and blocks of 2^14 in single-pass plans. Other passes of 2^14
// keep the XOR layout in 64 KiB: with padded 66.5 KiB first passes, the strided pass after them
// measured slower at 2^24 and 2^25 (three such blocks need the largest shared-memory carveout,
// which leaves 28 KB of L1 instead of 60, the likely cause).
__host__ __device__ constexpr bool fast_padded(int block_log, bool single_pass) {
  return block_log == 13 || (block_log == 14 && single_pass);
}
__host__ __device__ constexpr int fast_pad_shift(int block_log) { return block_log == 13 ? 5 : 6; }
__host__ __device__ constexpr std::size_t fast_plane_words(int block_log, bool padded) {
  const std::size_t elements = std::size_t{1} << block_log;
  return padded ? elements + (elements >> fast_pad_shift(block_log)) : elements;
}

// Shared memory of one block of 2^block_log elements: the double values of the wide modes of float
// compute are one plane of 8-byte words, addressed by offset (no alignment); everything else is
// planes of 4-byte words, 2 for Kahan/Neumaier (values and error terms), else 1, plus, in the XOR
// layout of blocks of up to 2^13, one plane so that the kernel can align the tile to a plane's
// size.
inline std::size_t fast_shared_bytes(int block_log, Stabilization st, bool float_compute, bool padded) {
  const std::size_t elements = std::size_t{1} << block_log;
  if (is_wide(st) && float_compute) return elements * 8;
  const std::size_t planes = st == Stabilization::kahan || st == Stabilization::neumaier ? 2 : 1;
  if (padded) return planes * fast_plane_words(block_log, true) * 4;
  return (block_log <= 13 ? planes + 1 : planes) * elements * 4;
}

// Launch one fast pass (or, with configure_only, raise the kernel's dynamic shared-memory limit).
// block_log is 12, 13 or 14 (16, 32 or 64 elements per thread); 12 or 13 for st != none, and
// Kahan/Neumaier only as a single pass (first and last). Throws pagh::Error otherwise.
template <class Tr>
void launch_fast(const FastArgs& args, Stabilization st, int block_log, bool first, bool last, std::int64_t blocks,
                 cudaStream_t stream, bool configure_only);

// The fused launch (block_log 12 or 13; st none or wide_onchip); configure_only also reports the
// resident blocks per SM.
template <class Tr>
void launch_fused(const FusedArgs& args, Stabilization st, int block_log, bool last, std::int64_t blocks,
                  cudaStream_t stream, bool configure_only, int* blocks_per_sm);

// One cluster pass (cluster_pass.cuh): blocks of 2^14 elements in clusters of 2^cluster_log (1..3)
// that finish the tile's last cluster_log stages through distributed shared memory; plain modes of
// 4-byte compute types, at most two passes (first and/or last). configure_only raises the dynamic
// shared-memory limit. Throws pagh::Error outside that.
template <class Tr>
void launch_cluster(const FastArgs& args, int cluster_log, bool first, bool last, std::int64_t blocks,
                    cudaStream_t stream, bool configure_only);

// Stabilization::wide_onchip outside the fast path's layouts: copy between any plan_many layout and
// a packed buffer (one element per thread, grid-stride), and whole transforms of n <= 8 with one
// thread per transform (the register-tile pass needs n >= 16).
struct LayoutCopy {
  const void* src = nullptr;
  void* dst = nullptr;
  std::int64_t n = 1, batch = 1;
  std::int64_t src_stride = 1, src_distance = 0, dst_stride = 1, dst_distance = 0;
};
void launch_layout_copy(const LayoutCopy& c, int element_bytes, cudaStream_t stream);
template <class Tr>
void launch_wide_small(const LayoutCopy& c, const FastArgs& args, cudaStream_t stream);

}  // namespace fwht::cuda
