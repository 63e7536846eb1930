// Closing the gaps that summed duplicates leave in a compressed-column matrix, in place and in
// parallel: column j keeps its first kept[j] entries, and every column moves down to follow the one
// before it. Moving down in place is serial by nature (a column may only move once the columns
// before it have), so the columns are cut into one contiguous range per part, balanced by entries:
// a range moves down by the gaps of the ranges before it, so its writes below its own start land
// only in the tail of the range before it, provided no range is shorter than all gaps together.
// That tail (at most as long as all gaps) is set aside first; then every range moves at once, the
// range before reading its tail from the copy. No new arrays: no page faults, no second copy of
// the entries in memory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "matrix_io/read.hpp"

namespace pagh::matrix_io::detail {

// Moves the kept entries of every column of `matrix` together, in parallel; kept_total is the sum
// of kept. Returns false, with nothing changed, when the ranges would be shorter than the gaps
// (many duplicates): the caller then closes the gaps another way.
template <class Scalar, class Index>
bool close_gaps_in_place(SparseMatrix<Scalar, Index>& matrix, const std::vector<Index>& kept, std::uint64_t kept_total,
                         int threads) {
  Index* const outer = matrix.outerIndexPtr();
  Index* const inner = matrix.innerIndexPtr();
  Scalar* const values = matrix.valuePtr();
  const auto cols = static_cast<Index>(matrix.cols());
  const auto total = static_cast<std::uint64_t>(outer[cols]);
  const std::uint64_t gaps = total - kept_total;
  if (threads < 2 || cols == 0) return false;

  std::vector<Index> start(static_cast<std::size_t>(cols) + 1);  // each column's new start
  start[0] = 0;
  for (Index j = 0; j < cols; ++j) start[static_cast<std::size_t>(j) + 1] = start[static_cast<std::size_t>(j)] + kept[static_cast<std::size_t>(j)];

  // Ranges of columns [first[p], first[p + 1]) holding about total / parts entries each.
  const int parts = threads;
  std::vector<Index> first(static_cast<std::size_t>(parts) + 1);
  for (int p = 0; p < parts; ++p)
    first[static_cast<std::size_t>(p)] = static_cast<Index>(
        std::lower_bound(outer, outer + cols, static_cast<Index>(total * static_cast<std::uint64_t>(p) / static_cast<std::uint64_t>(parts))) - outer);
  first[static_cast<std::size_t>(parts)] = cols;
  for (int p = 0; p < parts; ++p) {
    const Index length = outer[first[static_cast<std::size_t>(p) + 1]] - outer[first[static_cast<std::size_t>(p)]];
    if (static_cast<std::uint64_t>(length) < gaps) return false;
  }

  // Range p's tail [tail_begin, outer[first[p + 1]]) is where range p + 1 writes below its own start.
  std::vector<std::vector<Index>> tail_rows(static_cast<std::size_t>(parts));
  std::vector<std::vector<Scalar>> tail_values(static_cast<std::size_t>(parts));
  const auto tail_begin = [&](int p) {
    return p + 1 < parts ? start[static_cast<std::size_t>(first[static_cast<std::size_t>(p) + 1])]
                         : outer[cols];
  };
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int p = 0; p < parts; ++p) {
    const Index begin = tail_begin(p), end = outer[first[static_cast<std::size_t>(p) + 1]];
    tail_rows[static_cast<std::size_t>(p)].assign(inner + begin, inner + end);
    tail_values[static_cast<std::size_t>(p)].assign(values + begin, values + end);
  }
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int p = 0; p < parts; ++p) {
    const Index tail = tail_begin(p);
    const Index* const saved_rows = tail_rows[static_cast<std::size_t>(p)].data();
    const Scalar* const saved_values = tail_values[static_cast<std::size_t>(p)].data();
    for (Index j = first[static_cast<std::size_t>(p)]; j < first[static_cast<std::size_t>(p) + 1]; ++j) {
      const Index from = outer[j], n = kept[static_cast<std::size_t>(j)], to = start[static_cast<std::size_t>(j)];
      // Forward moves to lower positions: safe where source and destination overlap.
      const Index direct = std::clamp<Index>(tail - from, 0, n);
      if (from != to) {
        std::move(inner + from, inner + from + direct, inner + to);
        std::move(values + from, values + from + direct, values + to);
      }
      for (Index k = direct; k < n; ++k) {
        inner[to + k] = saved_rows[from + k - tail];
        values[to + k] = saved_values[from + k - tail];
      }
    }
  }
  std::copy(start.begin(), start.end(), outer);
  matrix.resizeNonZeros(static_cast<Eigen::Index>(kept_total));  // shrinks in place
  return true;
}

}  // namespace pagh::matrix_io::detail
