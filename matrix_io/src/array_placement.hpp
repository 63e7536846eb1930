// Where the values of an array file go: column by column, every row (general), the lower triangle
// (symmetric) or the strict lower triangle (skew-symmetric), mirrored into the upper one. Each
// chunk's values are placed from its first entry's position, so chunks are placed in parallel.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "chunked_body.hpp"
#include "matrix_io/read.hpp"

namespace pagh::matrix_io::detail {

class ArrayCursor {
 public:
  // The position of the stored value with 0-based number `entry`.
  ArrayCursor(const Header& header, std::int64_t entry) : header_(header) {
    if (header.symmetry == Symmetry::general) {
      if (header.rows > 0) {
        col_ = entry / header.rows;
        row_ = entry % header.rows;
      }
      return;
    }
    // Column c of a triangle holds rows - first_row(c) values.
    row_ = first_row(0);
    while (col_ < header.cols && entry >= header.rows - row_) {
      entry -= header.rows - row_;
      ++col_;
      row_ = first_row(col_);
    }
    row_ += entry;
  }

  std::int64_t row() const { return row_; }
  std::int64_t col() const { return col_; }
  void advance() {
    if (++row_ == header_.rows) {
      ++col_;
      row_ = first_row(col_);
    }
  }

 private:
  std::int64_t first_row(std::int64_t col) const {
    return header_.symmetry == Symmetry::general ? 0 : header_.symmetry == Symmetry::symmetric ? col : col + 1;
  }
  const Header& header_;
  std::int64_t row_ = 0;
  std::int64_t col_ = 0;
};

// Fills `matrix` (allocated by the caller: zero for a skew-symmetric file, whose diagonal is not
// stored) with the values of an array file whose chunks were all settled (every stored value read);
// spans[i] holds chunks[i]'s values. Values already in place (placed into the matrix) stay.
template <class Scalar, class Index>
void fill_from_array(const Header& header, std::vector<Chunk<Scalar, Index>>& chunks,
                     const std::vector<EntrySpan<Scalar, Index>>& spans, DenseMatrix<Scalar>& matrix, int threads) {
  const auto count = static_cast<std::int64_t>(chunks.size());
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1 && count > 1)
  for (std::int64_t i = 0; i < count; ++i) {
    Chunk<Scalar, Index>& chunk = chunks[static_cast<std::size_t>(i)];
    const EntrySpan<Scalar, Index>& span = spans[static_cast<std::size_t>(i)];
    if (header.symmetry == Symmetry::general) {  // values are in column-major order already
      Scalar* const to = matrix.data() + chunk.first_entry;
      if (span.values != to) std::copy(span.values, span.values + span.size, to);
    } else {
      const bool negate = header.symmetry == Symmetry::skew_symmetric;
      ArrayCursor at(header, chunk.first_entry);
      for (std::size_t k = 0; k < span.size; ++k) {
        const Scalar value = span.values[k];
        matrix(at.row(), at.col()) = value;
        if (at.row() != at.col()) matrix(at.col(), at.row()) = negate ? -value : value;
        at.advance();
      }
    }
    chunk.values = {};  // release as we go
  }
}

// The nonzero values of an array file as one coordinate chunk (for a sparse result): only nonzero
// values become stored entries; mirroring is left to sparse assembly, as for coordinate files.
template <class Scalar, class Index>
std::vector<Chunk<Scalar, Index>> array_as_entries(const Header& header, std::vector<Chunk<Scalar, Index>>& chunks) {
  std::vector<Chunk<Scalar, Index>> entries(1);
  ArrayCursor at(header, 0);
  for (Chunk<Scalar, Index>& chunk : chunks) {
    for (const Scalar value : chunk.values) {
      if (value != Scalar{0}) entries[0].add(at.row(), at.col(), value);
      at.advance();
    }
    chunk.values = {};
  }
  return entries;
}

}  // namespace pagh::matrix_io::detail
