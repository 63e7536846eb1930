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
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "compress/huge_pages.hpp"

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

// Lines of a sparse matrix without an intermediate copy, explicit zeros dropped, entries of a line
// in ascending position; the same lines whatever the thread count.

// Threads share parts of [0, n) for a pass over `entries` stored entries (one part below 2^16 entries).
inline int line_parts(int threads, index entries, index n) {
  return static_cast<int>(std::clamp<index>(entries >= (index{1} << 16) ? threads : 1, 1, std::max<index>(n, 1)));
}

// The columns of a column-major M: threads split the columns (count, then fill at the counted offsets).
template <class Scalar>
SparseLines columns_of_sparse(const Eigen::SparseMatrix<Scalar>& M, int threads) {
  using It = typename Eigen::SparseMatrix<Scalar>::InnerIterator;
  const index K = M.outerSize();
  const int parts = line_parts(threads, M.nonZeros(), K);
  SparseLines lines;
  lines.length = M.innerSize();
  lines.start.assign(static_cast<std::size_t>(K + 1), 0);
#pragma omp parallel for num_threads(parts) schedule(static) if (parts > 1)
  for (index k = 0; k < K; ++k) {
    index count = 0;
    for (It it(M, k); it; ++it) count += it.value() != Scalar(0);
    lines.start[static_cast<std::size_t>(k + 1)] = count;
  }
  std::partial_sum(lines.start.begin(), lines.start.end(), lines.start.begin());
  assign_zeroed(lines.position, static_cast<std::size_t>(lines.start.back()));
  assign_zeroed(lines.value, lines.position.size());
#pragma omp parallel for num_threads(parts) schedule(static) if (parts > 1)
  for (index k = 0; k < K; ++k) {
    auto e = static_cast<std::size_t>(lines.start[static_cast<std::size_t>(k)]);
    for (It it(M, k); it; ++it)
      if (it.value() != Scalar(0)) lines.position[e] = it.index(), lines.value[e] = static_cast<double>(it.value()), ++e;
  }
  return lines;
}

// The rows of a column-major M (its transpose's columns) in cache-sized steps: a transposition that
// counted every row and placed every entry at once would touch random lines of the whole output
// (one cache miss per entry). Rows are cut into blocks of kBlockRows; the entries are first moved,
// column by column, into one run per block (a few hundred streams written in order), then each
// block's run is spread over its rows, whose output is one contiguous span that stays in L2. Threads
// split the columns in the first step (each thread's entries of a block after those of the threads
// with lower columns) and the blocks in the second, so each row holds its entries in ascending
// column whatever the thread count, as a serial transposition leaves them.
template <class Scalar>
SparseLines rows_of_sparse(const Eigen::SparseMatrix<Scalar>& M, int threads) {
  using It = typename Eigen::SparseMatrix<Scalar>::InnerIterator;
  constexpr int kBlockLog = 12;
  constexpr index kBlockRows = index{1} << kBlockLog;
  struct Entry {
    std::int32_t column;
    std::uint32_t row_in_block;
    double value;
  };
  const index K = M.rows(), p = M.cols(), blocks = (K + kBlockRows - 1) / kBlockRows;
  const int parts = line_parts(threads, M.nonZeros(), p);
  const auto first_column = [&](int q) { return p * q / parts; };
  // counts[q * blocks + b]: part q's entries in block b, then (prefix over b, then q) where they start.
  std::vector<index> counts(static_cast<std::size_t>(parts * blocks + 1), 0);
  SparseLines lines;
  lines.length = p;
  lines.start.assign(static_cast<std::size_t>(K + 1), 0);
  std::vector<Entry> runs;
#pragma omp parallel num_threads(parts) if (parts > 1)
  {
    const int q = parts > 1 ? omp_get_thread_num() : 0;
    index* mine = counts.data() + q * blocks;
    for (index j = first_column(q); j < first_column(q + 1); ++j)
      for (It it(M, j); it; ++it)
        if (it.value() != Scalar(0)) ++mine[it.index() >> kBlockLog];
#pragma omp barrier
#pragma omp single
    {
      index at = 0;  // block-major: block b's runs of parts 0, 1, ... one after another
      for (index b = 0; b < blocks; ++b)
        for (int r = 0; r < parts; ++r) {
          const index c = counts[static_cast<std::size_t>(r * blocks + b)];
          counts[static_cast<std::size_t>(r * blocks + b)] = at;
          at += c;
        }
      counts.back() = at;
      assign_zeroed(runs, static_cast<std::size_t>(at));  // hundreds of MB at n = 10^6: on huge pages where granted
      assign_zeroed(lines.position, runs.size());
      assign_zeroed(lines.value, runs.size());
    }
    for (index j = first_column(q); j < first_column(q + 1); ++j)
      for (It it(M, j); it; ++it)
        if (it.value() != Scalar(0)) {
          const index row = it.index();
          runs[static_cast<std::size_t>(mine[row >> kBlockLog]++)] = {static_cast<std::int32_t>(j),
                                                                      static_cast<std::uint32_t>(row & (kBlockRows - 1)),
                                                                      static_cast<double>(Scalar(it.value()))};
        }
#pragma omp barrier
    // Block b's entries now lie in [its first part's start, the next block's); parts 0.. end where
    // block b + 1 starts, so after the pass counts[q * blocks + b] is block b's end for the last part.
    std::vector<index> next(static_cast<std::size_t>(kBlockRows));
#pragma omp for schedule(dynamic, 4)
    for (index b = 0; b < blocks; ++b) {
      const index begin = b == 0 ? 0 : counts[static_cast<std::size_t>((parts - 1) * blocks + b - 1)];
      const index end = counts[static_cast<std::size_t>((parts - 1) * blocks + b)];
      const index row0 = b * kBlockRows, rows = std::min(kBlockRows, K - row0);
      std::fill(next.begin(), next.begin() + rows, 0);
      for (index e = begin; e < end; ++e) ++next[runs[static_cast<std::size_t>(e)].row_in_block];
      index at = begin;
      for (index r = 0; r < rows; ++r) {
        const index c = next[static_cast<std::size_t>(r)];
        next[static_cast<std::size_t>(r)] = at;
        at += c;
        lines.start[static_cast<std::size_t>(row0 + r + 1)] = at;
      }
      for (index e = begin; e < end; ++e) {
        const Entry& entry = runs[static_cast<std::size_t>(e)];
        const auto to = static_cast<std::size_t>(next[entry.row_in_block]++);
        lines.position[to] = entry.column, lines.value[to] = entry.value;
      }
    }
  }
  return lines;
}

}  // namespace pagh::cpu_sketch
