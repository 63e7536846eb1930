// The add step of the device sum (nccl_sum.cpp): a kernel in rank_order_add.cu, kept apart so that
// this header needs no CUDA headers beyond the stream handle.
#pragma once

#include <cstdint>

struct CUstream_st;

namespace pagh::mpi {

// segments holds `ranks` segments of `own` values each, rank r's at [r * own, (r + 1) * own).
// Writes their sum to the first, value by value from +0.0 in rank order: ((0 + s_0) + s_1) + ...,
// as the host sum adds (mpi_compress.cpp; +0.0 first turns a -0.0 into +0.0 there too). Enqueued on
// stream; no synchronization.
void add_in_rank_order(double* segments, std::int64_t own, int ranks, CUstream_st* stream);

}  // namespace pagh::mpi
