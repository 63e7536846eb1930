// The Eigen-facing side of the device exact product and verification (exact_product.cu does the
// work on raw pointers, since Eigen stays out of .cu files).
#include <cmath>
#include <vector>

#include "exact/exact_device.hpp"
#include "estimate/product_view_of.hpp"
#include "sketch/cuda.hpp"

namespace pagh::cuda {
namespace {

DenseOperand operand(const Eigen::MatrixXd& x) { return {x.data(), x.rows(), x.cols()}; }

// Eigen's compressed storage is CSC with sorted, distinct row indices per column.
SparseOperand operand(const Eigen::SparseMatrix<double>& x) {
  return {x.rows(), x.cols(), x.nonZeros(), x.outerIndexPtr(), x.innerIndexPtr(), x.valuePtr()};
}

}  // namespace

Eigen::MatrixXd exact_product(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, double* ms, int device) {
  if (A.cols() != B.rows()) throw Error("pagh::cuda::exact_product", "dimension mismatch: cols(A) != rows(B)");
  Eigen::MatrixXd C(A.rows(), B.cols());
  const double t = device_exact_product(operand(A), operand(B), C.data(), device);
  if (ms) *ms = t;
  return C;
}

Eigen::MatrixXd exact_product(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B, double* ms,
                              int device) {
  if (A.cols() != B.rows()) throw Error("pagh::cuda::exact_product", "dimension mismatch: cols(A) != rows(B)");
  // An uncompressed matrix (after insert()) has gaps between columns: compress a copy.
  Eigen::SparseMatrix<double> a_copy, b_copy;
  const Eigen::SparseMatrix<double>* a = &A;
  const Eigen::SparseMatrix<double>* b = &B;
  if (!A.isCompressed()) a_copy = A, a_copy.makeCompressed(), a = &a_copy;
  if (!B.isCompressed()) b_copy = B, b_copy.makeCompressed(), b = &b_copy;
  Eigen::MatrixXd C(A.rows(), B.cols());
  const double t = device_exact_product(operand(*a), operand(*b), C.data(), device);
  if (ms) *ms = t;
  return C;
}

Metrics verify(const DeviceProduct& product, const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, std::size_t k, int device) {
  const DeviceProduct::State& s = product.state();
  if (device != s.device)
    throw Error("pagh::cuda::verify", "the product lives on device " + std::to_string(s.device) + ", not on device " +
                                          std::to_string(device));
  const ProductView view = view_of(s);
  const DeviceMetrics d = device_verify(view, operand(A), operand(B), k, device);
  Metrics m;
  m.relative_frobenius_error = d.relative_frobenius_error;
  m.max_abs_error = d.max_abs_error;
  m.max_error_in_sigmas = d.max_error_in_sigmas;
  m.frobenius_exact = d.frobenius_exact;
  m.frobenius_estimate = product.frobenius_estimate();
  m.top_k = d.top_k;
  m.top_k_recall = d.top_k_recall;
  m.top_k_precision = d.top_k_precision;
  m.exact_ms = d.exact_ms;
  return m;
}

}  // namespace pagh::cuda
