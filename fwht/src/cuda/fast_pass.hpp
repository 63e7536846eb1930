// The register-tile pass ("fast path") of the CUDA backend: plain folklore transforms of 4-byte
// compute types (f32, i32, f16/bf16 computed in float or in storage precision) on packed layouts
// (stride 1, transforms back to back). Declared here for the plan; defined in fast_pass.cuh and
// instantiated per storage type in passes_*.cu. See fast_pass.cuh for the design and
// schedule.hpp (make_fast_schedule) for the pass geometry.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

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
  bool vec_src = false, vec_dst = false;  // 16-byte accesses allowed (first pass, aligned buffers)
  bool staged = true;  // first pass with vec_src: coalesced cp.async through shared memory
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

// Shared memory of one block of 2^block_log elements of a 4-byte compute type; blocks of up to 2^13
// allocate twice that so that the kernel can align the tile to its own size (fast_pass.cuh).
inline std::size_t fast_shared_bytes(int block_log) {
  const std::size_t tile = (std::size_t{1} << block_log) * 4;
  return block_log <= 13 ? 2 * tile : tile;
}

// Launch one fast pass (or, with configure_only, raise the kernel's dynamic shared-memory limit).
// block_log is 12, 13 or 14 (16, 32 or 64 elements per thread). Throws pagh::Error otherwise.
template <class Tr>
void launch_fast(const FastArgs& args, int block_log, bool first, bool last, std::int64_t blocks, cudaStream_t stream,
                 bool configure_only);

// The fused launch (block_log 12 or 13); configure_only also reports the resident blocks per SM.
template <class Tr>
void launch_fused(const FusedArgs& args, int block_log, bool last, std::int64_t blocks, cudaStream_t stream,
                  bool configure_only, int* blocks_per_sm);

}  // namespace fwht::cuda
