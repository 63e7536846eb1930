// What a DeviceProduct owns: the d sketches and the hash tables on the device (layouts as in
// hashing.hpp and compressed_product.hpp: repetition-major). Includes Eigen through
// sketch/cuda.hpp, so it is for .cpp files; kernels see device_tables.hpp and raw pointers.
#pragma once

#include <cstdint>

#include "device_memory.hpp"
#include "hashing/device_tables.hpp"
#include "sketch/cuda.hpp"

namespace pagh::cuda {

struct DeviceProduct::State {
  int device = 0;
  std::int64_t rows = 0, cols = 0, inner = 0;
  SketchParams params;
  CompressTimings timings;
  DeviceTables tables;
  DeviceArray<double> sketches;  // repetitions * buckets
  double frobenius = 0;          // sqrt(mean_t sum_h c_t[h]^2), as CompressedProduct computes it
};

}  // namespace pagh::cuda
