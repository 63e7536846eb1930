// sketch_bench --backend cuda --workload sparse: the exact sparse product on the GPU (cuSPARSE
// SpGEMM), the baseline a GPU user would otherwise run (cusparse_product.cpp).
#pragma once

#include <Eigen/SparseCore>
#include <cstdint>
#include <vector>

#include "sketch/entry.hpp"

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

// What a GPU user would write instead of a sketch to find the k largest entries of a sparse product:
// cuSPARSE SpGEMM, then a device sort of |C|'s nonzero values (largest first) and the first k
// copied back. ms: median over the reps of the whole sequence (SpGEMM, sort, copy), synchronized.
struct GpuSparseTopK {
  double ms = -1;
  std::int64_t nnz = 0;
  std::vector<pagh::Entry> top;  // value = C_ij in FP32 (converted), largest |value| first
};
GpuSparseTopK cusparse_top_k(const Eigen::SparseMatrix<double>& a, const Eigen::SparseMatrix<double>& b, std::size_t k, int reps);

// The same for a product whose output does not fit on the device: A's rows in blocks of at most
// `max_block_products` scalar products (an upper bound on a block's nonzeros), one SpGEMM and one
// top-k per block, the blocks' best merged on the host. One timed run (blocks upload included).
GpuSparseTopK cusparse_top_k_blocked(const Eigen::SparseMatrix<double>& a, const Eigen::SparseMatrix<double>& b, std::size_t k,
                                     double max_block_products);
