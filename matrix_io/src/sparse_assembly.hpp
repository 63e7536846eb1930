// Building a compressed-column Eigen::SparseMatrix from entries in file order (the chunks of
// chunked_body.hpp, in order): symmetric and
// skew-symmetric entries are mirrored, duplicates summed in file order (so the result does not depend
// on anything but the file), rows sorted within each column. Works in the result's own arrays plus
// one column of scratch; memory never depends on the number of rows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "chunked_body.hpp"
#include "entry_sinks.hpp"
#include "matrix_io/error.hpp"

namespace pagh::matrix_io::detail {

template <class Scalar, class StorageIndex>
SparseMatrix<Scalar, StorageIndex> assemble_sparse(const Header& header,
                                                   std::vector<Chunk<Scalar, StorageIndex>>& chunks,
                                                   const std::string& name, std::size_t max_result_bytes) {
  using Index = StorageIndex;
  const bool mirror = header.symmetry != Symmetry::general;
  const bool negate_mirror = header.symmetry == Symmetry::skew_symmetric;
  std::uint64_t total = 0;
  for (const auto& list : chunks) {
    total += list.values.size();
    if (mirror)
      for (std::size_t k = 0; k < list.values.size(); ++k) total += list.rows[k] != list.cols[k];
  }
  if (std::string refusal = sparse_refusal<Scalar, Index>(header, total, max_result_bytes); !refusal.empty())
    throw MatrixMarketError(name, 0, refusal);

  SparseMatrix<Scalar, Index> matrix(header.rows, header.cols);  // column pointers start at zero
  Index* const outer = matrix.outerIndexPtr();
  const Index cols = static_cast<Index>(header.cols);

  // Count per column into outer[j + 1], turn counts into starts, then scatter using outer[j] as the
  // insertion cursor of column j (afterwards outer[j] is the end of column j; shift back by one).
  for (const auto& list : chunks) {
    for (std::size_t k = 0; k < list.values.size(); ++k) {
      ++outer[list.cols[k] + 1];
      if (mirror && list.rows[k] != list.cols[k]) ++outer[list.rows[k] + 1];
    }
  }
  for (Index j = 0; j < cols; ++j) outer[j + 1] += outer[j];
  matrix.resizeNonZeros(static_cast<Eigen::Index>(total));
  Index* const inner = matrix.innerIndexPtr();
  Scalar* const values = matrix.valuePtr();
  for (auto& list : chunks) {
    for (std::size_t k = 0; k < list.values.size(); ++k) {
      const Index row = list.rows[k], col = list.cols[k];
      const Scalar value = list.values[k];
      Index at = outer[col]++;
      inner[at] = row;
      values[at] = value;
      if (mirror && row != col) {
        at = outer[row]++;
        inner[at] = col;
        values[at] = negate_mirror ? -value : value;
      }
    }
    list = {};  // release each chunk's entries before sorting
  }
  for (Index j = cols; j > 0; --j) outer[j] = outer[j - 1];
  outer[0] = 0;

  // Sort each column by row (stable: equal rows keep file order) and sum duplicates, compacting in
  // place. Files are often sorted already, so check first and copy only unsorted columns.
  std::vector<std::pair<Index, Scalar>> scratch;
  Index write = 0;
  Index begin = 0;
  for (Index j = 0; j < cols; ++j) {
    const Index end = outer[j + 1];
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
    if (!sorted) {
      scratch.clear();
      for (Index t = begin; t < end; ++t) scratch.emplace_back(inner[t], values[t]);
      std::stable_sort(scratch.begin(), scratch.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (Index t = begin; t < end; ++t) {
        inner[t] = scratch[static_cast<std::size_t>(t - begin)].first;
        values[t] = scratch[static_cast<std::size_t>(t - begin)].second;
      }
    }
    const Index column_start = write;
    outer[j] = column_start;
    if (strictly && write == begin) {
      write = end;  // nothing to merge or move
    } else {
      for (Index t = begin; t < end; ++t) {
        if (write > column_start && inner[write - 1] == inner[t]) {
          values[write - 1] += values[t];
        } else {
          inner[write] = inner[t];
          values[write] = values[t];
          ++write;
        }
      }
    }
    begin = end;
  }
  outer[cols] = write;
  matrix.resizeNonZeros(write);
  return matrix;
}

}  // namespace pagh::matrix_io::detail
