// Exact verification of a compressed product against the exact product.
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include <cstddef>

#include "sketch/compressed_product.hpp"

namespace pagh {

struct Metrics {
  double relative_frobenius_error = 0;  // ||C^ - C||_F / ||C||_F (0 when C = 0 and C^ = 0)
  double max_abs_error = 0;             // max |C^ - C|
  double max_error_in_sigmas = 0;       // max |C^ - C| / (||C||_F / sqrt(b))
  double frobenius_exact = 0;           // ||C||_F
  double frobenius_estimate = 0;        // the sketch's own estimate of ||C||_F
  std::size_t top_k = 0;                // k used for recall/precision
  double top_k_recall = 0;              // |top-k(C^) ∩ top-k(C)| / k (by magnitude)
  double top_k_precision = 0;           // same over the returned entries
  double exact_ms = 0;                  // time of the exact product (filled by exact_product)
};

// The exact product on the CPU (Eigen), timed.
Eigen::MatrixXd exact_product(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, double* ms = nullptr);
Eigen::MatrixXd exact_product(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B, double* ms = nullptr);

// Compares the sketch with the exact product C (m x p, as returned above); k for top-k metrics.
Metrics verify(const CompressedProduct& product, const Eigen::MatrixXd& exact, std::size_t k);

}  // namespace pagh
