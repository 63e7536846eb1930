// The positions of the k largest |values| of a device array of n floats, largest first, sorted on
// the device (bench_kernels.cu) and copied to `positions`: the selection step of the exact
// baselines. No Eigen here (included by .cu files).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

void device_top_k_positions(const float* values, std::int64_t n, std::size_t k, std::vector<std::int64_t>& positions);
