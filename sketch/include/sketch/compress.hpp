// Pagh's compressed product of A (m x K) and B (K x p), dense or sparse, on the CPU:
//
//   Eigen::MatrixXd A = ..., B = ...;
//   pagh::CompressedProduct C = pagh::compress(A, B, {.repetitions = 3, .seed = 42});
//   for (const pagh::Entry& e : C.top_k(10)) std::cout << e.row << ' ' << e.col << ' ' << e.value << '\n';
//
// For each repetition t and inner index k, column k of A and row k of B are sign-scattered into
// vectors of length b, transformed, multiplied pointwise and summed (P_t); c_t = H P_t / b. A k
// whose outer product is cheaper than two transforms (nnz(A[:,k]) * nnz(B[k,:]) small) is added to
// c_t directly in the time domain instead (the hybrid path). Results are identical for every thread
// count: k is split into a fixed number of ranges (SketchParams::partitions, 16 by default) whose
// partial sketches are summed in order.
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include "sketch/compressed_product.hpp"
#include "sketch/params.hpp"

namespace pagh {

using RowMajorMatrixXd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMajorMatrixXf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Throws pagh::Error if cols(A) != rows(B) or a parameter is invalid. The sketch reads A by columns
// and B by rows: a column-major B is transposed once (a copy of B); pass B row-major to skip that.
// Both layouts give bit-identical sketches.
CompressedProduct compress(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const SketchParams& params = {});
CompressedProduct compress(const Eigen::MatrixXf& A, const Eigen::MatrixXf& B, const SketchParams& params = {});
CompressedProduct compress(const Eigen::MatrixXd& A, const RowMajorMatrixXd& B, const SketchParams& params = {});
CompressedProduct compress(const Eigen::MatrixXf& A, const RowMajorMatrixXf& B, const SketchParams& params = {});
CompressedProduct compress(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B,
                           const SketchParams& params = {});
CompressedProduct compress(const Eigen::SparseMatrix<float>& A, const Eigen::SparseMatrix<float>& B,
                           const SketchParams& params = {});

}  // namespace pagh
