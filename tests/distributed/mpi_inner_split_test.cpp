// The slices each rank of `mpirun pagh-mm` sketches when every rank holds the whole operands
// (app/mpi_inner_split.hpp): rows [k0, k1) of a sparse B, against the dense rows of the same matrix,
// with explicit zeros kept, the column order kept where rows increase, and columns out of row order
// or with repeated rows sorted and summed as Eigen's triplets do.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <random>
#include <vector>

#include "mpi_inner_split.hpp"

namespace {

// Whether every column's rows increase (the order rows_of keeps or makes).
bool rows_increase(const Eigen::SparseMatrix<double>& s) {
  for (Eigen::Index j = 0; j < s.outerSize(); ++j) {
    Eigen::Index previous = -1;
    for (Eigen::SparseMatrix<double>::InnerIterator it(s, j); it; ++it) {
      if (it.row() <= previous) return false;
      previous = it.row();
    }
  }
  return true;
}

TEST(MpiInnerSplit, RowsOfASparseBAreItsRowsWithTheirStoredEntries) {
  std::mt19937_64 rng(71);
  std::vector<Eigen::Triplet<double>> entries;
  for (int e = 0; e < 600; ++e)
    entries.emplace_back(static_cast<int>(rng() % 50), static_cast<int>(rng() % 40), e % 17 == 0 ? 0.0 : static_cast<double>(rng() % 1000) - 500);
  Eigen::SparseMatrix<double> B(50, 40);
  B.setFromTriplets(entries.begin(), entries.end());  // sorted rows, duplicates summed, explicit zeros stored
  const Eigen::MatrixXd dense(B);
  for (const auto& [k0, k1] : std::vector<std::pair<int, int>>{{0, 50}, {10, 30}, {25, 25}, {49, 50}}) {
    const auto slice = std::get<1>(pagh_mm::rows_of(pagh_mm::MatrixData(B), k0, k1));
    EXPECT_TRUE(slice.isCompressed());
    EXPECT_TRUE(rows_increase(slice));
    EXPECT_EQ(Eigen::MatrixXd(slice), dense.middleRows(k0, k1 - k0)) << k0 << ".." << k1;
    Eigen::Index stored = 0;
    for (Eigen::Index j = 0; j < B.outerSize(); ++j)
      for (Eigen::SparseMatrix<double>::InnerIterator it(B, j); it; ++it) stored += it.row() >= k0 && it.row() < k1;
    EXPECT_EQ(slice.nonZeros(), stored) << "explicit zeros kept, " << k0 << ".." << k1;
  }
}

TEST(MpiInnerSplit, RowsOfColumnsOutOfRowOrderAreSortedAndSummed) {
  // Column 0 lists rows 3, 1, 3 (a repeat), column 1 rows 0, 2: stored as given.
  std::vector<int> outer = {0, 3, 5}, inner = {3, 1, 3, 0, 2};
  std::vector<double> values = {1.5, 2.0, 0.25, 4.0, 8.0};
  const Eigen::SparseMatrix<double> B = Eigen::Map<const Eigen::SparseMatrix<double>>(4, 2, 5, outer.data(), inner.data(), values.data());
  const auto slice = std::get<1>(pagh_mm::rows_of(pagh_mm::MatrixData(B), 1, 4));
  EXPECT_TRUE(rows_increase(slice));
  Eigen::MatrixXd want = Eigen::MatrixXd::Zero(3, 2);
  want(0, 0) = 2.0, want(2, 0) = 1.75, want(1, 1) = 8.0;
  EXPECT_EQ(Eigen::MatrixXd(slice), want);
}

}  // namespace
