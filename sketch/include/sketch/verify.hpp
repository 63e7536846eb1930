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
  // Tie-aware: a returned entry counts when its exact |value| reaches the k-th largest |C| (so any
  // of several tied k-th entries is a hit), within a relative 1e-9 (ties up to rounding).
  double top_k_recall = 0;              // hits / k
  double top_k_precision = 0;           // hits / returned entries
  // The noise model's intervals (95 %, for entries selected as the top k: NoiseModel::
  // selected_interval with the (k+1)-th |estimate| as cutoff) and significance flags (5 %) on the
  // returned top-k: how often the intervals cover the exact value (NaN when nothing is returned),
  // how many entries are flagged significant, and how many of those have an exact value the
  // interval of an unselected entry cannot tell from 0 (|exact| <= half-width): false discoveries.
  double interval_coverage = 0;
  std::size_t significant = 0, false_significant = 0;
  double exact_ms = 0;                  // time of the exact product (filled by exact_product)
  // True when the error metrics cover all m * p entries; false for verify() against a sparse exact
  // product, where they cover the nonzeros of C and the sketch's top-k (relative_frobenius_error
  // is then NaN: it needs every estimate).
  bool all_entries = true;
};

// The exact product on the CPU (Eigen), timed.
Eigen::MatrixXd exact_product(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, double* ms = nullptr);
Eigen::MatrixXd exact_product(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B, double* ms = nullptr);

// The exact sparse product on the CPU (Eigen), timed; and its cost, sum_k nnz(A[:,k]) nnz(B[k,:]),
// the number of scalar products it forms (an upper bound on its nonzeros).
Eigen::SparseMatrix<double> exact_sparse_product(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B,
                                                 double* ms = nullptr);
double product_work(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B);

// Compares the sketch with the exact product C (m x p, as returned above); k for top-k metrics.
Metrics verify(const CompressedProduct& product, const Eigen::MatrixXd& exact, std::size_t k);

// The same against a sparse exact product, for products whose m x p estimate does not fit: nothing
// of size m * p is formed. Recall and precision are tie-aware (an entry counts when its exact
// |value| reaches the k-th largest); the error metrics cover the nonzeros of C and the reported
// top-k (all_entries = false).
Metrics verify(const CompressedProduct& product, const Eigen::SparseMatrix<double>& exact, std::size_t k);

}  // namespace pagh
