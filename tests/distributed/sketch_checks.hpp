// What the CPU ranks' and the GPU ranks' tests share: a rank's share of A and B, and comparisons of
// distributed sketches with one process's: the a-priori rounding bound of two summation orders,
// equality on every rank, sketch against sketch.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "mpi_test_support.hpp"
#include "sketch/compressed_product.hpp"

namespace pagh::test {

// A rank's share: columns [r.first, r.second) of A, the same rows of B.
template <class Scalar>
using Dense = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
template <class Scalar>
Dense<Scalar> columns(const Dense<Scalar>& A, std::pair<std::int64_t, std::int64_t> r) { return A.middleCols(r.first, r.second - r.first); }
template <class Scalar>
Dense<Scalar> rows(const Dense<Scalar>& B, std::pair<std::int64_t, std::int64_t> r) { return B.middleRows(r.first, r.second - r.first); }
inline Eigen::SparseMatrix<double> columns(const Eigen::SparseMatrix<double>& A, std::pair<std::int64_t, std::int64_t> r) { return A.middleCols(r.first, r.second - r.first); }
inline Eigen::SparseMatrix<double> rows(const Eigen::SparseMatrix<double>& B, std::pair<std::int64_t, std::int64_t> r) {
  const Eigen::SparseMatrix<double> bt = B.transpose();
  return Eigen::SparseMatrix<double>(bt.middleCols(r.first, r.second - r.first).transpose());
}

// Every sketch value is a sum of terms whose magnitudes add up to at most
// S = sum_k ||A[:,k]||_1 ||B[k,:]||_1; two evaluations in different orders (K products summed, a
// transform of log2 b stages, the partial sketches summed across ranks) differ by at most
// (K + 2 log2 b + ranks) eps S, eps the unit roundoff of the sketch's accumulation.
template <class MA, class MB>
double tolerance_for(const MA& A, const MB& B, std::int64_t b, fwht::DType precision) {
  const Eigen::MatrixXd a = Eigen::MatrixXd(A.template cast<double>()).cwiseAbs(), bm = Eigen::MatrixXd(B.template cast<double>()).cwiseAbs();
  double S = 0;
  for (Eigen::Index k = 0; k < a.cols(); ++k) S += a.col(k).sum() * bm.row(k).sum();
  const double eps = precision == fwht::DType::f64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
  return (static_cast<double>(a.cols()) + 2.0 * std::log2(static_cast<double>(b)) + ranks()) * eps * S;
}

// The result is the same on every rank: the largest and smallest value over ranks coincide.
inline void expect_same_on_every_rank(const pagh::CompressedProduct& c) {
  std::vector<double> hi(c.sketch(0).begin(), c.sketch(0).begin() + c.buckets() * c.repetitions()), lo = hi;
  MPI_Allreduce(MPI_IN_PLACE, hi.data(), static_cast<int>(hi.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, lo.data(), static_cast<int>(lo.size()), MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_EQ(hi, lo) << "the ranks' results differ";
}

// tolerance 0: bit for bit.
inline void expect_sketches(const pagh::CompressedProduct& got, const pagh::CompressedProduct& want, double tolerance) {
  ASSERT_EQ(got.buckets(), want.buckets());
  ASSERT_EQ(got.repetitions(), want.repetitions());
  EXPECT_EQ(got.inner(), want.inner());
  EXPECT_EQ(got.rows(), want.rows());
  EXPECT_EQ(got.cols(), want.cols());
  double worst = 0;
  std::int64_t differing = 0;
  for (int t = 0; t < want.repetitions(); ++t)
    for (std::int64_t h = 0; h < want.buckets(); ++h) {
      const double d = std::fabs(got.sketch(t)[h] - want.sketch(t)[h]);
      worst = std::max(worst, d);
      differing += d != 0;
    }
  if (tolerance == 0) EXPECT_EQ(differing, 0) << "rank " << rank_of() << ": largest difference " << worst;
  else EXPECT_LE(worst, tolerance) << "rank " << rank_of();
}

}  // namespace pagh::test
