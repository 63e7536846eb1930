// The per-rank scatter lists of the cluster kernel (cluster_sketch.cu), built on the host once per
// plan from the hash tables: for repetition t and cluster rank r, the entries i (in increasing
// order) whose bucket bits [12, 12 + log_cluster) equal r, padded with index ~0u to a multiple of
// 32 (one warp instruction), each with its code: the swizzled slot (bucket bits [0, 12)), the
// bucket bits above 12, the entry's rank among the earlier lanes of its instruction on the same
// slot (bits 27-30) and the sign (bit 31) -- the layout of prepare_fused_tables.
#pragma once

#include <cstdint>
#include <vector>

namespace pagh::cuda {

struct ClusterLists {
  std::vector<std::uint32_t> index, code;
  std::vector<std::int64_t> start;  // repetitions * C + 1 offsets
};

// buckets/signs: repetitions * n entries (hashing.hpp layout). Returns false when one instruction
// has more than 16 entries on one slot (the code has 4 bits for it): then the caller must not use
// the cluster kernel.
bool build_cluster_lists(const std::uint32_t* buckets, const std::int8_t* signs, std::int64_t n, int repetitions,
                         int log_cluster, ClusterLists& out);

}  // namespace pagh::cuda
