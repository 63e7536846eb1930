// The time-domain (direct) part of sparse products (direct_sketch.hpp): d time-domain sketches
// that pairs of short lines add into, alongside whichever path transforms the others; the engine
// adds them to the finished sketches.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "device_memory.hpp"
#include "hashing/device_tables.hpp"
#include "compress/paths/kernels.hpp"

namespace pagh::cuda {

class DirectAddOn {
 public:
  // Allocates the d time-domain sketches (first call) and the workspace for batches of at most
  // max_pairs pairs.
  void reserve(std::int64_t max_pairs, const DeviceTables& tables, int log2b, cudaStream_t stream);
  // Adds the thin outer products of `count` lines (double values; pair_start: device prefix sums
  // of nnz_a * nnz_b, count + 1 entries, `pairs` in all) to every repetition.
  void add(const Lines& a, const Lines& b, const std::int64_t* pair_start, std::int64_t count, std::int64_t pairs,
           const DeviceTables& tables, int log2b, cudaStream_t stream);
  // Zeroes what the last product added.
  void reset(cudaStream_t stream);
  // sketches += the time-domain sketches, if anything was added.
  void add_to(double* sketches, cudaStream_t stream) const;

 private:
  DeviceArray<double> sketches_;
  DeviceArray<char> workspace_;
  std::int64_t max_pairs_ = 0;
  bool used_ = false;
};

}  // namespace pagh::cuda
