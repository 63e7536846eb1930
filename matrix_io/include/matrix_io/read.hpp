// Reading Matrix Market files into Eigen matrices.
//
//   auto A = pagh::matrix_io::read_sparse<double>("A.mtx");          // Eigen::SparseMatrix<double>
//   auto B = pagh::matrix_io::read_dense<float>("B.mtx");            // Eigen::MatrixXf
//   auto C = pagh::matrix_io::read_matrix<double>("C.mtx");          // dense or sparse, reader's choice
//
// read_* take a path; parse_* take the file's text already in memory plus a name for messages.
// Every failure throws MatrixMarketError ("<file>:<line>: <reason>"); nothing is printed.
// Rules (README.md has the details): duplicates are summed; symmetric and skew-symmetric files are
// expanded to the full matrix; explicit zeros in coordinate files stay stored entries; NaN and
// infinity are rejected unless ReadOptions::allow_non_finite; no allocation exceeds
// ReadOptions::max_result_bytes, and none is sized from a count the file is too short to hold.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <type_traits>
#include <variant>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include "matrix_io/error.hpp"
#include "matrix_io/header.hpp"

namespace pagh::matrix_io {

template <class T>
concept SupportedScalar = std::same_as<T, double> || std::same_as<T, float>;
template <class T>
concept SupportedIndex = std::same_as<T, int> || std::same_as<T, std::int64_t>;

template <SupportedScalar Scalar>
using DenseMatrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
// Column-major like Eigen's default. StorageIndex int (Eigen's default) limits rows, columns and
// stored entries to 2^31-1; use std::int64_t for larger matrices (the reader says so when needed).
template <SupportedScalar Scalar, SupportedIndex StorageIndex = int>
using SparseMatrix = Eigen::SparseMatrix<Scalar, Eigen::ColMajor, StorageIndex>;

struct ReadOptions {
  // NaN, inf and -inf tokens (as std::from_chars spells them) are errors unless this is true.
  // A finite decimal too large for the scalar type is always an error; one too small rounds to zero.
  bool allow_non_finite = false;
  // The most bytes the result may occupy (dense: rows*cols*sizeof(Scalar); sparse: the column
  // pointers plus index and value per stored entry). Checked from the size line before anything is
  // allocated; a larger result throws instead of trying.
  std::size_t max_result_bytes = std::size_t{4} << 30;
  // read_matrix only: a coordinate file becomes dense when its stored entries (after symmetric
  // expansion and duplicate summing) number at least dense_threshold * rows * cols and the dense
  // result fits max_result_bytes. Array files are always dense.
  double dense_threshold = 0.25;
  // Threads that parse the entries (0: all, OpenMP's default count). The body is cut into chunks at
  // line ends and parsed on all of them; results and errors do not depend on the count.
  int threads = 0;
  // Bytes per chunk (0: automatic, at least 1 MiB). Small values put chunk boundaries anywhere in
  // a small input, which is how the tests check that chunking never changes a result.
  std::size_t chunk_bytes = 0;
};

// read_matrix's answer: the header as declared, and the matrix in the representation chosen.
template <SupportedScalar Scalar, SupportedIndex StorageIndex = int>
struct AnyMatrix {
  Header header;
  std::variant<DenseMatrix<Scalar>, SparseMatrix<Scalar, StorageIndex>> matrix;

  bool is_dense() const { return matrix.index() == 0; }
  const DenseMatrix<Scalar>& dense() const { return std::get<0>(matrix); }
  const SparseMatrix<Scalar, StorageIndex>& sparse() const { return std::get<1>(matrix); }
};

// Banner and size line only, validated as a full read would (including the check that the file is
// long enough for the declared entries); the entries are not read.
Header read_header(const std::filesystem::path& path);
Header parse_header(std::string_view text, std::string_view name);

template <SupportedScalar Scalar, SupportedIndex StorageIndex = int>
SparseMatrix<Scalar, StorageIndex> read_sparse(const std::filesystem::path& path,
                                               const ReadOptions& options = {});
template <SupportedScalar Scalar, SupportedIndex StorageIndex = int>
SparseMatrix<Scalar, StorageIndex> parse_sparse(std::string_view text, std::string_view name,
                                                const ReadOptions& options = {});

template <SupportedScalar Scalar>
DenseMatrix<Scalar> read_dense(const std::filesystem::path& path, const ReadOptions& options = {});
template <SupportedScalar Scalar>
DenseMatrix<Scalar> parse_dense(std::string_view text, std::string_view name,
                                const ReadOptions& options = {});

template <SupportedScalar Scalar, SupportedIndex StorageIndex = int>
AnyMatrix<Scalar, StorageIndex> read_matrix(const std::filesystem::path& path,
                                            const ReadOptions& options = {});
template <SupportedScalar Scalar, SupportedIndex StorageIndex = int>
AnyMatrix<Scalar, StorageIndex> parse_matrix(std::string_view text, std::string_view name,
                                             const ReadOptions& options = {});

// Defined in the library and compiled there for double and float, int and std::int64_t only (the
// concepts above reject other types at compile time).

}  // namespace pagh::matrix_io
