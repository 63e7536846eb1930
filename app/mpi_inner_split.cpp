#include "mpi_inner_split.hpp"

#include <algorithm>
#include <cmath>

namespace pagh_mm {
namespace {

// Nonzeros of each column of A (dense: every entry counts).
std::vector<std::int64_t> column_counts(const MatrixData& a) {
  if (a.index() == 0) return std::vector<std::int64_t>(static_cast<std::size_t>(std::get<0>(a).cols()), std::get<0>(a).rows());
  const auto& s = std::get<1>(a);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(s.cols()));
  for (Eigen::Index k = 0; k < s.outerSize(); ++k)
    for (Eigen::SparseMatrix<double>::InnerIterator it(s, k); it; ++it) ++counts[static_cast<std::size_t>(k)];
  return counts;
}

// Nonzeros of each row of B.
std::vector<std::int64_t> row_counts(const MatrixData& b) {
  if (b.index() == 0) return std::vector<std::int64_t>(static_cast<std::size_t>(std::get<0>(b).rows()), std::get<0>(b).cols());
  const auto& s = std::get<1>(b);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(s.rows()));
  for (Eigen::Index j = 0; j < s.outerSize(); ++j)
    for (Eigen::SparseMatrix<double>::InnerIterator it(s, j); it; ++it) ++counts[static_cast<std::size_t>(it.row())];
  return counts;
}

}  // namespace

double inner_index_cost(std::int64_t na, std::int64_t nb, std::int64_t buckets) {
  if (na == 0 || nb == 0) return 0;
  const double b = static_cast<double>(buckets);
  const double transformed = 2 * b * std::log2(std::max(b, 2.0)) + b;
  return static_cast<double>(na + nb) + std::min(static_cast<double>(na) * static_cast<double>(nb), transformed);
}

std::vector<std::int64_t> split_inner(const MatrixData& a, const MatrixData& b, std::int64_t buckets, int ranks) {
  const std::vector<std::int64_t> na = column_counts(a), nb = row_counts(b);
  const std::size_t K = na.size();
  std::vector<double> cumulative(K + 1, 0.0);
  for (std::size_t k = 0; k < K; ++k) cumulative[k + 1] = cumulative[k] + inner_index_cost(na[k], nb[k], buckets);
  std::vector<std::int64_t> bounds(static_cast<std::size_t>(ranks) + 1, static_cast<std::int64_t>(K));
  bounds[0] = 0;
  // Boundary r: the first k whose cumulative cost reaches r/ranks of the total.
  for (int r = 1; r < ranks; ++r) {
    const double target = cumulative[K] * r / ranks;
    const auto at = std::lower_bound(cumulative.begin(), cumulative.end(), target);
    bounds[static_cast<std::size_t>(r)] = std::max(bounds[static_cast<std::size_t>(r) - 1], static_cast<std::int64_t>(at - cumulative.begin()));
  }
  return bounds;
}

MatrixData columns_of(const MatrixData& a, std::int64_t k0, std::int64_t k1) {
  if (a.index() == 0) return Eigen::MatrixXd(std::get<0>(a).middleCols(k0, k1 - k0));
  return Eigen::SparseMatrix<double>(std::get<1>(a).middleCols(k0, k1 - k0));
}

MatrixData rows_of(const MatrixData& b, std::int64_t k0, std::int64_t k1) {
  if (b.index() == 0) return Eigen::MatrixXd(std::get<0>(b).middleRows(k0, k1 - k0));
  // Column-major B: keep each column's entries whose row falls in [k0, k1), shifted by k0. Counted,
  // then placed in each column's order: no sort where every column's rows increase (as the readers
  // leave them); otherwise through Eigen's triplets, which sort them.
  const auto& s = std::get<1>(b);
  {
    Eigen::SparseMatrix<double> slice(k1 - k0, s.cols());  // column pointers start at zero
    int* const outer = slice.outerIndexPtr();
    bool increasing = true;
    for (Eigen::Index j = 0; j < s.outerSize() && increasing; ++j) {
      Eigen::Index previous = -1;
      for (Eigen::SparseMatrix<double>::InnerIterator it(s, j); it; ++it) {
        increasing = increasing && it.row() > previous, previous = it.row();
        if (it.row() >= k0 && it.row() < k1) ++outer[j + 1];
      }
    }
    if (increasing) {
      for (Eigen::Index j = 0; j < s.outerSize(); ++j) outer[j + 1] += outer[j];
      slice.resizeNonZeros(outer[s.outerSize()]);
      int* const inner = slice.innerIndexPtr();
      double* const values = slice.valuePtr();
      for (Eigen::Index j = 0; j < s.outerSize(); ++j) {
        int at = outer[j];
        for (Eigen::SparseMatrix<double>::InnerIterator it(s, j); it; ++it)
          if (it.row() >= k0 && it.row() < k1) inner[at] = static_cast<int>(it.row() - k0), values[at++] = it.value();
      }
      return slice;
    }
  }
  std::vector<Eigen::Triplet<double>> kept;
  for (Eigen::Index j = 0; j < s.outerSize(); ++j)
    for (Eigen::SparseMatrix<double>::InnerIterator it(s, j); it; ++it)
      if (it.row() >= k0 && it.row() < k1) kept.emplace_back(static_cast<int>(it.row() - k0), static_cast<int>(j), it.value());
  Eigen::SparseMatrix<double> slice(k1 - k0, s.cols());
  slice.setFromTriplets(kept.begin(), kept.end());
  return slice;
}

}  // namespace pagh_mm
