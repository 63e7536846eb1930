// The CPU engine's inputs as lines: line k is column k of A or row k of B (cpu_engine.hpp).
//
// Two sources: sparse (index, value) lists (CSC of A, CSR of B), whose nonzeros per line are known
// up front, and dense contiguous vectors (A's columns in place; the rows of a row-major B in place,
// those of a column-major B transposed once), whose nonzeros the engine counts while it scatters
// them (no pass of its own). Zeros are never scattered into a sketch vector's sum on either path in
// a way that changes its bits (adding +-0 to a bucket leaves it as it is).
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace pagh::cpu_sketch {

using index = std::int64_t;

struct SparseLines {
  static constexpr bool kCountsKnown = true;
  index length = 0;  // positions a line's entries index (A's rows, B's columns): the engine's memory plan
  std::vector<index> start{0};
  std::vector<index> position;
  std::vector<double> value;
  index nnz(index k) const { return start[static_cast<std::size_t>(k + 1)] - start[static_cast<std::size_t>(k)]; }
  template <class F>
  void for_each(index k, F&& f) const {
    for (index e = start[static_cast<std::size_t>(k)]; e < start[static_cast<std::size_t>(k + 1)]; ++e)
      f(position[static_cast<std::size_t>(e)], value[static_cast<std::size_t>(e)]);
  }
};

template <class Scalar>
struct DenseLines {
  static constexpr bool kCountsKnown = false;
  using value_type = Scalar;
  const Scalar* data = nullptr;  // line k at data[k * length, (k+1) * length)
  index length = 0;
  Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> owned;  // B^T when the source is B column-major

  const Scalar* line(index k) const { return data + k * length; }
  template <class F>
  void for_each(index k, F&& f) const {
    const Scalar* values = line(k);
    for (index i = 0; i < length; ++i)
      if (values[i] != 0) f(i, static_cast<double>(values[i]));
  }
};

template <class Scalar>
DenseLines<Scalar> columns_of(const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& M) {
  DenseLines<Scalar> lines;
  lines.data = M.data(), lines.length = M.rows();
  return lines;
}

// Rows of a column-major B: B^T, built in square tiles (the columns read and the rows written stay
// in L1); threads take disjoint blocks of rows.
template <class Scalar>
DenseLines<Scalar> rows_of(const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& M, int threads) {
  DenseLines<Scalar> lines;
  const index K = M.rows(), p = M.cols();
  lines.owned.resize(p, K);
  constexpr index kTile = 32;
  const Scalar* src = M.data();
  Scalar* dst = lines.owned.data();
  const index blocks = (K + kTile - 1) / kTile;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && M.size() > (1 << 20))
  for (index q = 0; q < blocks; ++q) {
    const index k0 = q * kTile, k1 = std::min(K, k0 + kTile);
    for (index j0 = 0; j0 < p; j0 += kTile) {
      const index j1 = std::min(p, j0 + kTile);
      for (index k = k0; k < k1; ++k)
        for (index j = j0; j < j1; ++j) dst[k * p + j] = src[j * K + k];
    }
  }
  lines.data = dst, lines.length = p;
  return lines;
}

// Rows of a row-major B are contiguous already: used in place, nothing copied.
template <class Scalar>
DenseLines<Scalar> rows_of(const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>& M, int) {
  DenseLines<Scalar> lines;
  lines.data = M.data(), lines.length = M.cols();
  return lines;
}

template <class Scalar, int Order>
SparseLines lines_of_sparse(const Eigen::SparseMatrix<Scalar, Order>& M) {  // outer index = line
  SparseLines lines;
  lines.length = M.innerSize();
  lines.position.reserve(static_cast<std::size_t>(M.nonZeros()));
  lines.value.reserve(static_cast<std::size_t>(M.nonZeros()));
  for (index k = 0; k < M.outerSize(); ++k) {
    for (typename Eigen::SparseMatrix<Scalar, Order>::InnerIterator it(M, k); it; ++it)
      if (it.value() != Scalar(0)) lines.position.push_back(it.index()), lines.value.push_back(static_cast<double>(it.value()));
    lines.start.push_back(static_cast<index>(lines.position.size()));
  }
  return lines;
}

template <class Scalar>
SparseLines columns_of_sparse(const Eigen::SparseMatrix<Scalar>& M) {
  return lines_of_sparse(M);
}

template <class Scalar>
SparseLines rows_of_sparse(const Eigen::SparseMatrix<Scalar>& M) {
  return lines_of_sparse(Eigen::SparseMatrix<Scalar, Eigen::RowMajor>(M));
}

}  // namespace pagh::cpu_sketch
