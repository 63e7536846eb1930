// Building a compressed-column Eigen::SparseMatrix from entries in file order (the chunks of
// chunked_body.hpp, in order): symmetric and skew-symmetric entries are mirrored, duplicates summed
// in file order (so the result does not depend on anything but the file), rows sorted within each
// column. Works in the result's own arrays plus one column of scratch per thread.
//
// In parallel, with the same result bit for bit on any thread count: each thread owns a range of
// columns and walks all entries in file order, counting and then placing only those of its columns
// (so each column receives its entries in file order, as one thread would place them); columns are
// then sorted and their duplicates summed independently. Entries of a general file that are already
// in column order (what most writers produce) skip the placing: the chunks are copied into the
// result's arrays as they are, and columns that are sorted without duplicates are not touched.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chunked_body.hpp"
#include "entry_sinks.hpp"
#include "huge_pages.hpp"
#include "matrix_io/error.hpp"
#include "parallel_gap_closing.hpp"

namespace pagh::matrix_io::detail {

// Calls visit(column, row, value) for every entry of the chunks in file order, and for the mirror
// of every off-diagonal entry of a symmetric or skew-symmetric file right after it, but only for
// columns in [lo, hi).
template <class Scalar, class Index, class Visit>
void for_each_in_columns(const std::vector<EntrySpan<Scalar, Index>>& spans, bool mirror, bool negate_mirror, Index lo,
                         Index hi, Visit&& visit) {
  for (const auto& list : spans) {
    for (std::size_t k = 0; k < list.size; ++k) {
      const Index row = list.rows[k], col = list.cols[k];
      if (col >= lo && col < hi) visit(col, row, list.values[k]);
      if (mirror && row != col && row >= lo && row < hi) visit(row, col, negate_mirror ? -list.values[k] : list.values[k]);
    }
  }
}

// Writes n entries sorted by row (rows, column: a copy, or the column's own arrays from begin on) to
// the column starting at begin, duplicates summed in file order; returns how many remain. In place
// is safe: the write position never passes the read position.
template <class Scalar, class Index>
Index sum_sorted(Index* inner, Scalar* values, Index begin, const Index* rows, const Scalar* column, Index n) {
  Index write = begin;
  for (Index t = 0; t < n; ++t) {
    if (write > begin && inner[write - 1] == rows[t]) {
      values[write - 1] += column[t];
    } else {
      inner[write] = rows[t];
      values[write] = column[t];
      ++write;
    }
  }
  return write - begin;
}

// Sorts a short column [begin, begin + n), n <= Width, into rows and column (stable: equal rows keep
// file order): each entry goes to its rank (entries before it with a lower row, or the same row
// earlier in the file). The keys are padded to Width with the largest index, above every row, so
// that the loops run a fixed number of times: no branch on n, and the compiler unrolls and
// vectorises them.
template <int Width, class Scalar, class Index>
void rank_sort_short(const Index* inner, const Scalar* values, int n, Index* rows, Scalar* column) {
  Index keys[Width];
  for (int j = 0; j < Width; ++j) keys[j] = j < n ? inner[j] : std::numeric_limits<Index>::max();
  int ranks[Width];
  for (int i = 0; i < Width; ++i) {
    int rank = 0;
    for (int j = 0; j < Width; ++j) rank += (keys[j] < keys[i]) | ((keys[j] == keys[i]) & (j < i));
    ranks[i] = rank;
  }
  for (int i = 0; i < n; ++i) {
    rows[ranks[i]] = keys[i];
    column[ranks[i]] = values[i];
  }
}

// Sorts column [begin, end) by row (stable: equal rows keep file order) and sums duplicates into the
// column's first positions; returns how many distinct rows remain. Files are often sorted already,
// so it checks first and copies only unsorted columns.
template <class Scalar, class Index>
Index sort_and_sum_column(Index* inner, Scalar* values, Index begin, Index end, std::vector<std::pair<Index, Scalar>>& scratch) {
  bool sorted = true, strictly = true;
  for (Index t = begin + 1; t < end; ++t) {
    if (inner[t] <= inner[t - 1]) {
      strictly = false;
      if (inner[t] < inner[t - 1]) {
        sorted = false;
        break;
      }
    }
  }
  if (strictly) return end - begin;
  if (!sorted && end - begin <= 16) {
    // Short columns (the common case): ranked into a copy that the summing below reads from.
    const int n = static_cast<int>(end - begin);
    Index rows[16];
    Scalar column[16];
    if (n <= 8) rank_sort_short<8>(inner + begin, values + begin, n, rows, column);
    else rank_sort_short<16>(inner + begin, values + begin, n, rows, column);
    return sum_sorted(inner, values, begin, rows, column, static_cast<Index>(n));
  } else if (!sorted && end - begin <= 32) {
    // Insertion sort in place, stable, no copy.
    for (Index t = begin + 1; t < end; ++t) {
      const Index row = inner[t];
      const Scalar value = values[t];
      Index u = t;
      for (; u > begin && inner[u - 1] > row; --u) {
        inner[u] = inner[u - 1];
        values[u] = values[u - 1];
      }
      inner[u] = row;
      values[u] = value;
    }
  } else if (!sorted) {
    scratch.clear();
    for (Index t = begin; t < end; ++t) scratch.emplace_back(inner[t], values[t]);
    std::stable_sort(scratch.begin(), scratch.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (Index t = begin; t < end; ++t) {
      inner[t] = scratch[static_cast<std::size_t>(t - begin)].first;
      values[t] = scratch[static_cast<std::size_t>(t - begin)].second;
    }
  }
  return sum_sorted(inner, values, begin, inner + begin, values + begin, end - begin);
}

// Moves each column's first length(j) entries down to follow the previous column's, column by
// column; length(j) is called before column j moves (it may sort and sum the column in place).
template <class Scalar, class Index, class Length>
void close_gaps(SparseMatrix<Scalar, Index>& matrix, Length&& length) {
  Index* const outer = matrix.outerIndexPtr();
  Index* const inner = matrix.innerIndexPtr();
  Scalar* const values = matrix.valuePtr();
  const auto cols = static_cast<Index>(matrix.cols());
  Index write = 0;
  for (Index j = 0; j < cols; ++j) {
    const Index begin = outer[j], kept = length(j);
    if (write != begin) {
      std::move(inner + begin, inner + begin + kept, inner + write);
      std::move(values + begin, values + begin + kept, values + write);
    }
    outer[j] = write;
    write += kept;
  }
  outer[cols] = write;
  matrix.resizeNonZeros(write);
}

// Sorts and sums every column where it is, then closes the gaps left by summed duplicates. In
// parallel only when the columns are not far more than the entries (kept costs one index a column).
template <class Scalar, class Index>
void sort_and_sum_columns(SparseMatrix<Scalar, Index>& matrix, std::uint64_t total, int threads) {
  const Index* const outer = matrix.outerIndexPtr();
  Index* const inner = matrix.innerIndexPtr();
  Scalar* const values = matrix.valuePtr();
  const auto cols = static_cast<Index>(matrix.cols());
  if (threads > 1 && static_cast<std::uint64_t>(cols) <= total) {
    std::vector<Index> kept(static_cast<std::size_t>(cols));
    std::uint64_t kept_total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : kept_total)
    {
      std::vector<std::pair<Index, Scalar>> scratch;
#pragma omp for schedule(dynamic, 1024)
      for (Index j = 0; j < cols; ++j) {
        kept[static_cast<std::size_t>(j)] = sort_and_sum_column(inner, values, outer[j], outer[j + 1], scratch);
        kept_total += static_cast<std::uint64_t>(kept[static_cast<std::size_t>(j)]);
      }
    }
    if (kept_total == total) return;
    // Summed duplicates left gaps: closed in place where they are few (parallel_gap_closing.hpp),
    // else the kept entries go to a new matrix, columns in parallel.
    if (close_gaps_in_place(matrix, kept, kept_total, threads)) return;
    SparseMatrix<Scalar, Index> closed(matrix.rows(), matrix.cols());
    Index* const closed_outer = closed.outerIndexPtr();
    for (Index j = 0; j < cols; ++j) closed_outer[j + 1] = closed_outer[j] + kept[static_cast<std::size_t>(j)];
    closed.resizeNonZeros(static_cast<Eigen::Index>(kept_total));
    Index* const closed_inner = closed.innerIndexPtr();
    Scalar* const closed_values = closed.valuePtr();
    advise_huge_pages(closed_inner, kept_total * sizeof(Index));
    advise_huge_pages(closed_values, kept_total * sizeof(Scalar));
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1024)
    for (Index j = 0; j < cols; ++j) {
      std::copy(inner + outer[j], inner + outer[j] + kept[static_cast<std::size_t>(j)], closed_inner + closed_outer[j]);
      std::copy(values + outer[j], values + outer[j] + kept[static_cast<std::size_t>(j)], closed_values + closed_outer[j]);
    }
    matrix.swap(closed);  // Eigen 3.4's SparseMatrix has no move assignment: it would copy
    return;
  }
  std::vector<std::pair<Index, Scalar>> scratch;
  close_gaps(matrix, [&](Index j) { return sort_and_sum_column(inner, values, outer[j], outer[j + 1], scratch); });
}

// How the entries of a general file are ordered: columns never decreasing (as most writers list
// them), and also rows strictly increasing within each column (nothing to sort, no duplicates).
struct EntryOrder {
  bool by_column = true;
  bool strictly = true;
};

template <class Scalar, class Index>
EntryOrder entry_order(const std::vector<EntrySpan<Scalar, Index>>& spans, int threads) {
  std::vector<EntryOrder> orders(spans.size());
  const auto count = static_cast<std::int64_t>(spans.size());
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1 && count > 1)
  for (std::int64_t i = 0; i < count; ++i) {
    const EntrySpan<Scalar, Index>& span = spans[static_cast<std::size_t>(i)];
    const Index* const rows = span.rows;
    const Index* const cols = span.cols;
    bool by_column = true, strictly = true;
    // In blocks without early exits (so that the compiler vectorises), stopping once out of order.
    constexpr std::size_t block = 4096;
    for (std::size_t begin = 1; begin < span.size && by_column; begin += block) {
      const std::size_t stop = std::min(span.size, begin + block);
      for (std::size_t k = begin; k < stop; ++k) {
        by_column &= cols[k] >= cols[k - 1];
        strictly &= cols[k] > cols[k - 1] || rows[k] > rows[k - 1];
      }
    }
    orders[static_cast<std::size_t>(i)] = {by_column, strictly && by_column};
  }
  EntryOrder order;
  const EntrySpan<Scalar, Index>* previous = nullptr;  // the last span with entries
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].size == 0) continue;
    order.by_column &= orders[i].by_column;
    order.strictly &= orders[i].strictly;
    if (previous != nullptr) {
      const Index col = spans[i].cols[0], last_col = previous->cols[previous->size - 1];
      order.by_column &= col >= last_col;
      order.strictly &= col > last_col || (col == last_col && spans[i].rows[0] > previous->rows[previous->size - 1]);
    }
    previous = &spans[i];
  }
  order.strictly &= order.by_column;
  return order;
}

// Assembly of entries in column order into `matrix` (its size set to hold them all): rows and values
// are copied as they are (not at all where a span already lies at its place in the matrix's own
// arrays), and each column starts at its first entry. Linear, and in parallel over the spans.
// `release` is called once the spans are no longer needed, before columns are sorted.
template <class Scalar, class Index, class Release>
void assemble_column_ordered(SparseMatrix<Scalar, Index>& matrix, const std::vector<EntrySpan<Scalar, Index>>& spans,
                             std::uint64_t total, bool strictly, int threads, Release&& release) {
  Index* const outer = matrix.outerIndexPtr();
  Index* const inner = matrix.innerIndexPtr();
  Scalar* const values = matrix.valuePtr();
  // Where each span's entries go, and the column of the entry before its first (-1 for none).
  std::vector<Index> start(spans.size()), column_before(spans.size());
  Index at = 0, last_col = -1;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    start[i] = at;
    column_before[i] = last_col;
    at += static_cast<Index>(spans[i].size);
    if (spans[i].size > 0) last_col = spans[i].cols[spans[i].size - 1];
  }
  const auto count = static_cast<std::int64_t>(spans.size());
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1 && count > 1)
  for (std::int64_t i = 0; i < count; ++i) {
    const EntrySpan<Scalar, Index>& span = spans[static_cast<std::size_t>(i)];
    const Index first = start[static_cast<std::size_t>(i)];
    if (span.rows != inner + first) std::copy(span.rows, span.rows + span.size, inner + first);
    if (span.values != values + first) std::copy(span.values, span.values + span.size, values + first);
    // Columns (column_before, col] start at this entry: spans write disjoint ranges of outer.
    Index before = column_before[static_cast<std::size_t>(i)];
    for (std::size_t k = 0; k < span.size; ++k) {
      const Index col = span.cols[k];
      for (Index j = before + 1; j <= col; ++j) outer[j] = first + static_cast<Index>(k);
      before = col;
    }
  }
  for (Index j = last_col + 1; j <= static_cast<Index>(matrix.cols()); ++j) outer[j] = static_cast<Index>(total);
  release();
  if (!strictly) sort_and_sum_columns(matrix, total, total >= (std::uint64_t{1} << 16) ? threads : 1);
}

// The entries of the spans, in file order, as a compressed-column matrix. `release` is called once
// the spans are no longer needed (before columns are sorted).
template <class Scalar, class StorageIndex, class Release>
SparseMatrix<Scalar, StorageIndex> assemble_sparse(const Header& header, const std::vector<EntrySpan<Scalar, StorageIndex>>& spans,
                                                   const std::string& name, std::size_t max_result_bytes, int threads,
                                                   Release&& release) {
  using Index = StorageIndex;
  const bool mirror = header.symmetry != Symmetry::general;
  const bool negate_mirror = header.symmetry == Symmetry::skew_symmetric;
  std::uint64_t total = 0;
  for (const auto& list : spans) {
    total += list.size;
    if (mirror)
      for (std::size_t k = 0; k < list.size; ++k) total += list.rows[k] != list.cols[k];
  }
  if (std::string refusal = sparse_refusal<Scalar, Index>(header, total, max_result_bytes); !refusal.empty())
    throw MatrixMarketError(name, 0, refusal);

  SparseMatrix<Scalar, Index> matrix(header.rows, header.cols);  // column pointers start at zero
  if (!mirror) {
    if (const EntryOrder order = entry_order(spans, threads); order.by_column) {
      matrix.resizeNonZeros(static_cast<Eigen::Index>(total));
      assemble_column_ordered(matrix, spans, total, order.strictly, threads, release);
      return matrix;
    }
  }
  Index* const outer = matrix.outerIndexPtr();
  const Index cols = static_cast<Index>(header.cols);
  // Each part walks every entry: worth it only with enough entries per part.
  const int parts = static_cast<int>(std::clamp<std::uint64_t>(
      std::min<std::uint64_t>(total / (std::uint64_t{1} << 16), static_cast<std::uint64_t>(cols)), 1,
      static_cast<std::uint64_t>(threads)));
  const auto part_begin = [&](int p) { return static_cast<Index>(static_cast<std::int64_t>(cols) * p / parts); };

  // Count per column into outer[j + 1], turn counts into starts, then place using outer[j] as the
  // insertion cursor of column j (afterwards outer[j] is the end of column j; shift back by one).
#pragma omp parallel for num_threads(parts) schedule(static, 1) if (parts > 1)
  for (int p = 0; p < parts; ++p)
    for_each_in_columns(spans, mirror, negate_mirror, part_begin(p), part_begin(p + 1),
                        [&](Index col, Index, Scalar) { ++outer[col + 1]; });
  for (Index j = 0; j < cols; ++j) outer[j + 1] += outer[j];
  matrix.resizeNonZeros(static_cast<Eigen::Index>(total));
  Index* const inner = matrix.innerIndexPtr();
  Scalar* const values = matrix.valuePtr();
#pragma omp parallel for num_threads(parts) schedule(static, 1) if (parts > 1)
  for (int p = 0; p < parts; ++p)
    for_each_in_columns(spans, mirror, negate_mirror, part_begin(p), part_begin(p + 1), [&](Index col, Index row, Scalar value) {
      const Index at = outer[col]++;
      inner[at] = row;
      values[at] = value;
    });
  for (Index j = cols; j > 0; --j) outer[j] = outer[j - 1];
  outer[0] = 0;
  release();
  sort_and_sum_columns(matrix, total, parts > 1 ? threads : 1);
  return matrix;
}

// Assembly of a general file's entries that were placed (ChunkedBody::place_into) into `matrix`'s
// own row and value arrays, with their columns in `cols`: in place when they are in column order.
template <class Scalar, class Index>
SparseMatrix<Scalar, Index> assemble_placed(const Header& header, SparseMatrix<Scalar, Index>& matrix,
                                            std::unique_ptr<Index[]>& cols,
                                            const std::vector<EntrySpan<Scalar, Index>>& spans, const std::string& name,
                                            std::size_t max_result_bytes, int threads) {
  std::uint64_t total = 0;
  for (const auto& span : spans) total += span.size;
  // Swapped out, and one named result returned on every path: Eigen 3.4's SparseMatrix has no move
  // constructor, so a return that is not elided copies every entry on one thread.
  SparseMatrix<Scalar, Index> result;
  if (const EntryOrder order = entry_order(spans, threads); order.by_column) {
    matrix.resizeNonZeros(static_cast<Eigen::Index>(total));  // keeps the entries: the count only shrinks
    assemble_column_ordered(matrix, spans, total, order.strictly, threads, [&] { cols.reset(); });
    result.swap(matrix);
  } else {
    SparseMatrix<Scalar, Index> assembled = assemble_sparse(header, spans, name, max_result_bytes, threads, [&] {
      SparseMatrix<Scalar, Index>().swap(matrix);
      cols.reset();
    });
    result.swap(assembled);
  }
  return result;
}

}  // namespace pagh::matrix_io::detail
