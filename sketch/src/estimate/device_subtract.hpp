// CompressedProduct::subtract for sketches kept on the device: known entries of C removed from the
// d sketches there, bit for bit as the host subtracts them (raw device pointers, no Eigen).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <span>

#include "hashing/device_tables.hpp"
#include "sketch/entry.hpp"

namespace pagh::cuda {

// c_t[h1(i) XOR h2(j)] -= s1(i) s2(j) v for every known (i, j, v) (in range: the caller checks) and
// every t. Where several entries share a bucket they are subtracted one by one in their order in
// `known`, as on the host, so the result equals the host's bit for bit.
void device_subtract(double* sketches, const DeviceTables& tables, std::span<const Entry> known, cudaStream_t stream);

}  // namespace pagh::cuda
