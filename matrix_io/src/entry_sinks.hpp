// Where parsed entries go. DenseSink writes straight into the dense result; EntryListSink keeps the
// entries in file order for sparse assembly. Both check, before allocating, that the result fits
// ReadOptions::max_result_bytes and (sparse) the storage index type.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "matrix_io/read.hpp"

namespace pagh::matrix_io::detail {

// a * b, or nullopt-like max when it overflows 64 bits (then it exceeds any memory limit).
inline std::uint64_t saturating_multiply(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return std::numeric_limits<std::uint64_t>::max();
  return a * b;
}
inline std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return b > std::numeric_limits<std::uint64_t>::max() - a ? std::numeric_limits<std::uint64_t>::max() : a + b;
}

template <class Scalar>
std::uint64_t dense_bytes(const Header& header) {
  return saturating_multiply(saturating_multiply(static_cast<std::uint64_t>(header.rows),
                                                 static_cast<std::uint64_t>(header.cols)),
                             sizeof(Scalar));
}

template <class Scalar>
std::string dense_refusal(const Header& header, std::size_t max_result_bytes) {
  const std::uint64_t bytes = dense_bytes<Scalar>(header);
  if (bytes <= max_result_bytes) return {};
  return "a dense " + std::to_string(header.rows) + " x " + std::to_string(header.cols) + " matrix of " +
         (std::is_same_v<Scalar, float> ? "float" : "double") + " needs " +
         (bytes == std::numeric_limits<std::uint64_t>::max() ? std::string("more than 2^64") : std::to_string(bytes)) +
         " bytes, more than ReadOptions::max_result_bytes = " + std::to_string(max_result_bytes);
}

template <class Scalar, class StorageIndex>
std::uint64_t sparse_bytes(std::int64_t cols, std::uint64_t stored) {
  return saturating_add(saturating_multiply(static_cast<std::uint64_t>(cols) + 1, sizeof(StorageIndex)),
                        saturating_multiply(stored, sizeof(StorageIndex) + sizeof(Scalar)));
}

// Why a sparse result with `stored` entries cannot be built, or empty when it can.
template <class Scalar, class StorageIndex>
std::string sparse_refusal(const Header& header, std::uint64_t stored, std::size_t max_result_bytes) {
  constexpr auto largest = static_cast<std::uint64_t>(std::numeric_limits<StorageIndex>::max());
  const char* index_name = std::is_same_v<StorageIndex, int> ? "int" : "std::int64_t";
  const auto too_big = [&](const std::string& what, std::uint64_t value) {
    return what + " " + std::to_string(value) + " exceeds the sparse storage index type (" + index_name +
           ", at most " + std::to_string(largest) + ")" +
           (std::is_same_v<StorageIndex, int> ? "; read with StorageIndex = std::int64_t" : "");
  };
  if (static_cast<std::uint64_t>(header.rows) > largest) return too_big("row count", header.rows);
  if (static_cast<std::uint64_t>(header.cols) > largest) return too_big("column count", header.cols);
  if (stored > largest) return too_big("stored entry count", stored);
  const std::uint64_t bytes = sparse_bytes<Scalar, StorageIndex>(header.cols, stored);
  if (bytes <= max_result_bytes) return {};
  return "a sparse " + std::to_string(header.rows) + " x " + std::to_string(header.cols) + " matrix with " +
         std::to_string(stored) + " stored entries needs " + std::to_string(bytes) +
         " bytes, more than ReadOptions::max_result_bytes = " + std::to_string(max_result_bytes);
}

template <class Scalar>
class DenseSink {
 public:
  // Allocates the zero matrix; the caller has checked dense_refusal first.
  explicit DenseSink(const Header& header)
      : matrix_(DenseMatrix<Scalar>::Zero(header.rows, header.cols)),
        symmetry_(header.symmetry),
        accumulate_(header.format == Format::coordinate) {}

  void add(std::int64_t row, std::int64_t col, Scalar value) {
    const Scalar mirrored = symmetry_ == Symmetry::skew_symmetric ? -value : value;
    const bool mirror = row != col && symmetry_ != Symmetry::general;
    if (accumulate_) {
      // Coordinate files may repeat an entry: sum, as sparse assembly does (so a lone -0 reads +0).
      matrix_(row, col) += value;
      if (mirror) matrix_(col, row) += mirrored;
    } else {
      // Array files give every stored value exactly once: assign, which keeps the sign of -0.
      matrix_(row, col) = value;
      if (mirror) matrix_(col, row) = mirrored;
    }
  }

  DenseMatrix<Scalar> take() { return std::move(matrix_); }

 private:
  DenseMatrix<Scalar> matrix_;
  Symmetry symmetry_;
  bool accumulate_;
};

// Stored entries in file order, indices already narrowed to the storage index type.
template <class Scalar, class StorageIndex>
struct EntryList {
  std::vector<StorageIndex> rows;
  std::vector<StorageIndex> cols;
  std::vector<Scalar> values;
};

template <class Scalar, class StorageIndex>
class EntryListSink {
 public:
  // keep_zeros: coordinate files list their stored entries, explicit zeros included; array files list
  // every value, and only the nonzero ones become stored entries of a sparse result.
  // The caller has checked sparse_refusal for the declared count; the reservation is bounded by the
  // input length (PreambleParser refuses counts the input cannot hold).
  EntryListSink(const Header& header, bool keep_zeros) : keep_zeros_(keep_zeros) {
    if (keep_zeros) {
      const auto declared = static_cast<std::size_t>(header.stored_entries);
      list_.rows.reserve(declared);
      list_.cols.reserve(declared);
      list_.values.reserve(declared);
    }
  }

  void add(std::int64_t row, std::int64_t col, Scalar value) {
    if (!keep_zeros_ && value == Scalar{0}) return;
    list_.rows.push_back(static_cast<StorageIndex>(row));
    list_.cols.push_back(static_cast<StorageIndex>(col));
    list_.values.push_back(value);
  }

  EntryList<Scalar, StorageIndex> take() { return std::move(list_); }

 private:
  EntryList<Scalar, StorageIndex> list_;
  bool keep_zeros_;
};

}  // namespace pagh::matrix_io::detail
