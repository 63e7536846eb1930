// Which inner indices k each rank of a distributed run sketches: contiguous ranges of k balanced by
// the sketch's cost per k, and the slices A[:, k0:k1] and B[k0:k1, :] of an operand.
#pragma once

#include <cstdint>
#include <vector>

#include "backend.hpp"

namespace pagh_mm {

// The cost model of one k with na nonzeros in column k of A and nb in row k of B, for sketch length
// b: nothing when either is empty; else the scatter (na + nb) plus the cheaper of the direct outer
// product (na * nb) and two transforms and a pointwise product (~2 b log2 b + b).
double inner_index_cost(std::int64_t na, std::int64_t nb, std::int64_t buckets);

// ranks + 1 boundaries 0 = k_0 <= k_1 <= ... <= k_ranks = K: rank r sketches [k_r, k_{r+1}), each
// range holding about 1/ranks of the total cost. A rank may get no k (fewer costly k than ranks).
// The same inputs give the same boundaries on every rank.
std::vector<std::int64_t> split_inner(const MatrixData& a, const MatrixData& b, std::int64_t buckets, int ranks);

// Columns [k0, k1) of A, rows [k0, k1) of B, in the representation given (dense or sparse).
MatrixData columns_of(const MatrixData& a, std::int64_t k0, std::int64_t k1);
MatrixData rows_of(const MatrixData& b, std::int64_t k0, std::int64_t k1);

}  // namespace pagh_mm
