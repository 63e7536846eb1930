// The rank-order add of the device sum (rank_order_add.hpp).
#include <cuda_runtime.h>

#include <algorithm>

#include "rank_order_add.hpp"

namespace pagh::mpi {
namespace {

// __dadd_rn: each step rounds once, as the host's a += b does (nothing to contract into an FMA
// here, but the intrinsic says so whatever the compiler flags).
__global__ void add_segments(double* segments, std::int64_t own, int ranks) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < own; i += stride) {
    double sum = 0.0;
    for (int r = 0; r < ranks; ++r) sum = __dadd_rn(sum, segments[r * own + i]);
    segments[i] = sum;
  }
}

}  // namespace

void add_in_rank_order(double* segments, std::int64_t own, int ranks, CUstream_st* stream) {
  if (own <= 0) return;
  constexpr int kThreads = 256;
  // Enough blocks to fill an H100 several times over; the grid-stride loop takes any length.
  const std::int64_t blocks = std::min<std::int64_t>((own + kThreads - 1) / kThreads, 4096);
  add_segments<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(segments, own, ranks);
}

}  // namespace pagh::mpi
