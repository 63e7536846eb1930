// Device helpers of dense_recovery_bench (bench_kernels.cu); no Eigen here.
#pragma once

#include <cstdint>

// Row `row` of a column-major matrix (leading dimension ld, `cols` columns) set to zero.
void zero_row(float* b, std::int64_t ld, std::int64_t cols, std::int64_t row);
// maxima[q] = max |c[i]| over the chunk [q * chunk, (q + 1) * chunk) of n values.
void block_chunk_maxima(const float* c, std::int64_t n, std::int64_t chunk, float* maxima);
// Appends (i, c[i]) for every |c[i]| >= tau (up to capacity; *count counts them all).
void block_select_at_least(const float* c, std::int64_t n, float tau, unsigned long long* count, std::int64_t* idx, float* val,
                           std::int64_t capacity);
