// The questions a compressed product answers (top-k, threshold), answered exactly instead: for
// products whose exact computation is cheaper than a sketch (sketch/method.hpp decides). Nothing of
// size m * p is kept: dense products are formed a panel of rows at a time and streamed into the
// selection; sparse ones are formed sparsely. Answers rank like CompressedProduct's (|value|
// descending, then row, then column) and carry spread 0.
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include <cstddef>
#include <vector>

#include "sketch/entry.hpp"

namespace pagh {

// threads: 0 = all hardware threads; the answer does not depend on it.
std::vector<Entry> exact_top_k(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, std::size_t k, int threads = 0);
std::vector<Entry> exact_top_k(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B, std::size_t k);

// Entries with |value| >= threshold, largest first; throws TooManyEntries past max_entries and
// pagh::Error for a negative or NaN threshold.
std::vector<Entry> exact_above(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, double threshold, std::size_t max_entries,
                               int threads = 0);
std::vector<Entry> exact_above(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B, double threshold,
                               std::size_t max_entries);

// The diagonal of a square product, d_i = sum_k A(i, k) B(k, i), in O(nnz) (its entries with
// d_i != 0); throws pagh::Error unless cols(A) == rows(B) and rows(A) == cols(B).
std::vector<Entry> product_diagonal(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);
std::vector<Entry> product_diagonal(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B);

// The same questions of a product already formed (for instance by cuBLAS).
std::vector<Entry> top_k_of(const Eigen::MatrixXd& C, std::size_t k);
std::vector<Entry> above_of(const Eigen::MatrixXd& C, double threshold, std::size_t max_entries);

}  // namespace pagh
