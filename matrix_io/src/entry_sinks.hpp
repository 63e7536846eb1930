// What a result may cost (the checks against ReadOptions::max_result_bytes and the storage index
// type, made before anything is allocated), and DenseSink, which sums coordinate entries into a
// dense result.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

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

// The entries of a coordinate file summed into a dense result, in file order (so a lone -0 reads
// +0, and duplicates sum as in sparse assembly); symmetric entries are mirrored.
template <class Scalar>
class DenseSink {
 public:
  // Allocates the zero matrix; the caller has checked dense_refusal first.
  explicit DenseSink(const Header& header)
      : matrix_(DenseMatrix<Scalar>::Zero(header.rows, header.cols)), symmetry_(header.symmetry) {}

  void add(std::int64_t row, std::int64_t col, Scalar value) {
    matrix_(row, col) += value;
    if (row != col && symmetry_ != Symmetry::general)
      matrix_(col, row) += symmetry_ == Symmetry::skew_symmetric ? -value : value;
  }

  DenseMatrix<Scalar> take() { return std::move(matrix_); }

 private:
  DenseMatrix<Scalar> matrix_;
  Symmetry symmetry_;
};

}  // namespace pagh::matrix_io::detail
