// The exact product on the device (cuBLAS DGEMM) and the verification metrics against it, on raw
// host pointers: the boundary between exact_product_host.cpp (Eigen) and exact_product.cu.
#pragma once

#include <cstddef>
#include <cstdint>

#include "estimate/device_queries.hpp"

namespace pagh::cuda {

// A dense host matrix, column-major with leading dimension rows (Eigen::MatrixXd).
struct DenseOperand {
  const double* data = nullptr;
  std::int64_t rows = 0, cols = 0;
};

// A compressed sparse column host matrix (Eigen::SparseMatrix<double> after makeCompressed()):
// column c holds rows inner[outer[c] .. outer[c+1]) with values at the same positions; no
// duplicate (row, column) pairs.
struct SparseOperand {
  std::int64_t rows = 0, cols = 0, nonzeros = 0;
  const int* outer = nullptr;  // cols + 1
  const int* inner = nullptr;  // nonzeros
  const double* values = nullptr;
};

// C = A B into host_out (rows(A) x cols(B) doubles, column-major). Returns the device time in
// milliseconds (CUDA events): the DGEMM alone for dense inputs; densification plus DGEMM for
// sparse ones; transfers excluded. The first call in a process also pays cuBLAS's lazy loading of
// its kernels (tens of ms), which a small product shows. Throws pagh::Error if the operands and
// product do not fit in device memory.
double device_exact_product(const DenseOperand& a, const DenseOperand& b, double* host_out, int device);
double device_exact_product(const SparseOperand& a, const SparseOperand& b, double* host_out, int device);

// pagh::Metrics without Eigen in sight (the host side converts).
struct DeviceMetrics {
  double relative_frobenius_error = 0, max_abs_error = 0, max_error_in_sigmas = 0, frobenius_exact = 0;
  std::size_t top_k = 0;
  double top_k_recall = 0, top_k_precision = 0, exact_ms = 0;
};

// pagh::verify's metrics (except frobenius_estimate, which the caller has) of the sketch in `view`
// against C = A B computed on the device; exact_ms is the DGEMM's time.
DeviceMetrics device_verify(const ProductView& view, const DenseOperand& a, const DenseOperand& b, std::size_t k, int device);

}  // namespace pagh::cuda
