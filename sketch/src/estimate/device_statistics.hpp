// What the noise model and the overflow check read from a product's sketches (sketch_statistics.hpp),
// measured where a DeviceProduct keeps them, and single values read there: so that a product kept on
// the device needs no host copy of its d * b values for them. Raw device pointers (no Eigen).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <span>

#include "sketch/sketch_statistics.hpp"

namespace pagh::cuda {

// The statistics of `count` device values, as measure_sketch_values measures host values: largest,
// counts, below and finite equal; the sums of squares in another order, so equal where they are
// exact (integer values) and within rounding otherwise. Deterministic: the per-bin sums are exact
// (128-bit integers in units of the bin's octave) and the two other sums take a fixed order. Values
// that are not finite, or whose squares overflow double, leave the bins empty (below = count).
SketchStatistics device_sketch_statistics(const double* values, std::int64_t count, cudaStream_t stream);

// out[i] = values[positions[i]] (device values, host positions and out).
void device_values_at(const double* values, std::span<const std::int64_t> positions, std::span<double> out, cudaStream_t stream);

}  // namespace pagh::cuda
