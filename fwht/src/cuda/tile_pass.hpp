// One pass of the CUDA backend over device memory (see schedule.hpp for the geometry). Declared
// here for the plan; defined in tile_pass.cuh and instantiated per storage type in passes_*.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "fwht/options.hpp"

namespace fwht::cuda {

struct PassArgs {
  const void* src = nullptr;  // storage type S on the first pass, work type W after
  std::int64_t src_distance = 0, src_stride = 1;
  void* dst = nullptr;  // storage type S on the last pass, work type W before
  std::int64_t dst_distance = 0, dst_stride = 1;
  const void* err_in = nullptr;  // error terms (type W), transform t at t*n: read unless first
  void* err_out = nullptr;       // written unless last
  std::int64_t n = 1;
  int s = 0, g = 0, column_log = 0, tiles_per_transform_log = 0, column_blocks_log = 0, tiles_per_block_log = 0;
  std::int64_t total_tiles = 0;
  int alman_rao_r = 0;  // log2(n) % 3
  double scale = 1.0;   // normalization factor, rounded to the compute type on the device
  bool scaled = false, inverse = false;
  bool vec_src = false, vec_dst = false, vec_err = false;  // 16-byte accesses allowed
};

inline constexpr int kPassThreads = 256;

// Shared memory bytes of one block for a pass with 2^block_elements_log elements per block.
inline std::size_t pass_shared_bytes(int block_elements_log, std::size_t compute_bytes, int planes) {
  const std::size_t count = std::size_t{1} << block_elements_log;
  return static_cast<std::size_t>(planes) * (count + count / 32) * compute_bytes;
}

// Launch (or, with configure_only, only raise the kernel's dynamic shared-memory limit to `smem`)
// the pass kernel of traits Tr. Throws pagh::Error for a combination without a kernel.
template <class Tr>
void launch_pass(const PassArgs& args, Stabilization st, Algorithm al, bool first, bool last, std::int64_t blocks,
                 std::size_t smem, cudaStream_t stream, bool configure_only);

// cudaFuncGetAttributes of one pass kernel: fails when this build has no image for the device.
cudaError_t probe_kernel_image();

}  // namespace fwht::cuda
