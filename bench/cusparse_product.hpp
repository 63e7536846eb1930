// sketch_bench --backend cuda --workload sparse: the exact sparse product on the GPU (cuSPARSE
// SpGEMM), the baseline a GPU user would otherwise run (cusparse_product.cpp).
#pragma once

#include <Eigen/SparseCore>
#include <cstdint>

struct GpuSparseProduct {
  double ms = -1;                   // median over the reps of the whole SpGEMM on device-resident inputs
  std::int64_t nnz = 0;             // nonzeros of C = A B
  double max_relative_error = -1;   // max |C_gpu - C_eigen| / max |C_eigen| (FP32 against Eigen's FP64)
};

// C = A B in FP32 CSR with cuSPARSE SpGEMM (default algorithm). A and B are copied to the device
// once; each timed run is the whole call sequence a caller makes (descriptors, work estimation,
// compute, C's allocation, copy, release), synchronized, so its output is complete. Throws
// std::runtime_error on a CUDA or cuSPARSE failure.
GpuSparseProduct cusparse_product(const Eigen::SparseMatrix<double>& a, const Eigen::SparseMatrix<double>& b, int reps);
