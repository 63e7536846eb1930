// sketch_bench --backend cuda (sketch_bench_cuda.cpp): the GPU sketch against cuBLAS GEMMs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fwht/options.hpp"

struct CudaBenchConfig {
  std::vector<std::int64_t> sizes;
  std::vector<int> repetitions{1, 3};
  double pad = 8;
  fwht::DType precision = fwht::DType::f32;  // the sketch's storage (SketchParams::precision)
  fwht::Compute compute = fwht::Compute::f32;
  int reps = 20;
  bool exact = true;        // false: no GEMMs; only A and B by rows are held (C, B, the bf16 copies are not)
  bool general = true;      // also time the general path (n <= 4096)
  bool check_host = false;  // compare the device top-k with the host's (n <= 4096)
};

// Prints one table row per n and d; throws std::runtime_error on a CUDA failure.
int run_cuda_bench(const CudaBenchConfig& config);

// Device helpers of the bench (bench_kernels.cu): out[i] = bf16(in[i]) (`out` points to
// __nv_bfloat16), and out = in^T for n x n column-major matrices.
void round_to_bf16(const float* in, void* out, std::size_t n);
void transpose_square(const float* in, float* out, std::int64_t n);
