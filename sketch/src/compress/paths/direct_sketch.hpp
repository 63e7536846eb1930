// The time-domain (direct) path of sparse products on the GPU (direct_sketch.cu): thin outer
// products added bucket by bucket, deterministically (stable sort by bucket, runs summed in order).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "compress/paths/kernels.hpp"

namespace pagh::cuda {

// One batch of lines (chunk-relative sparse Lines with double values) for repetition t.
struct DirectArgs {
  Lines a, b;
  const std::int64_t* pair_start = nullptr;  // device: lines + 1 prefix sums of nnz_a(j) * nnz_b(j)
  std::int64_t lines = 0, pairs = 0;
  const std::uint32_t* bucket_a = nullptr;  // tables of repetition t
  const std::int8_t* sign_a = nullptr;
  const std::uint32_t* bucket_b = nullptr;
  const std::int8_t* sign_b = nullptr;
  int log2b = 0;
  double* time_domain = nullptr;  // b doubles of repetition t, accumulated
};

// Device workspace for batches of at most max_pairs pairs.
std::size_t direct_workspace_bytes(std::int64_t max_pairs, int log2b);
// time_domain[h_a(i) ^ h_b(j)] += products of the batch's pairs. Enqueued on `stream`.
void launch_direct(const DirectArgs& args, void* workspace, std::size_t workspace_bytes, std::int64_t max_pairs,
                   cudaStream_t stream);
// to[e] += from[e], e < count.
void launch_add(const double* from, std::int64_t count, double* to, cudaStream_t stream);

}  // namespace pagh::cuda
