// The hash tables of one product on the device (no Eigen: included by .cu files).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "device_memory.hpp"

namespace pagh::cuda {

// bucket_a[t*m + i] = h1_t(i), sign_a[t*m + i] = s1_t(i) in {+1, -1}; the same for B with p
// (the layout of hashing.hpp's HashTables).
struct DeviceTables {
  std::int64_t m = 0, p = 0, buckets = 0;
  int repetitions = 0;
  DeviceArray<std::uint32_t> bucket_a, bucket_b;
  DeviceArray<std::int8_t> sign_a, sign_b;
};

// Draws the tables of hashing.hpp with the cuRAND device generator (bit-identical to the host
// generator's) on `stream`; throws pagh::Error on cuRAND failure or invalid sizes.
DeviceTables draw_device_tables(std::uint64_t seed, int repetitions, std::int64_t m, std::int64_t p, std::int64_t buckets,
                                cudaStream_t stream);

}  // namespace pagh::cuda
