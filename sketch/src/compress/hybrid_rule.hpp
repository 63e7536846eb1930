// The hybrid rule of sparse products, shared by the CPU engine (compress.cpp) and the CUDA backend
// (compress_sparse_cuda.cpp): an inner index k with nnz_a entries in column k of A and nnz_b in
// row k of B either goes through two transforms of length b (scatter, FWHT, multiply-accumulate) or
// adds its thin outer product straight into the time-domain sketch (the "direct" path).
#pragma once

#include <bit>
#include <cstdint>

#include "sketch/params.hpp"

namespace pagh {

// Two transforms of length b, plus the scatter and the multiply-accumulate, against the outer
// product added bucket by bucket in the time domain (random access: weigh it 4x a vector op).
inline bool take_direct_path(std::int64_t nnz_a, std::int64_t nnz_b, std::int64_t b, HybridMode mode) {
  if (mode == HybridMode::always_direct) return true;
  if (mode == HybridMode::always_transform) return false;
  const double transform_cost = static_cast<double>(b) * (std::bit_width(static_cast<std::uint64_t>(b)) + 4);
  return 4.0 * static_cast<double>(nnz_a) * static_cast<double>(nnz_b) < transform_cost;
}

}  // namespace pagh
