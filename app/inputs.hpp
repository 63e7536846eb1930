// Reading the operands A and B, with every matrix_io failure turned into the right exit status.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "backend.hpp"
#include "exit_codes.hpp"
#include "matrix_io/error.hpp"

namespace pagh_mm {

class SharedOperands;

struct InputMatrix {
  InputMatrix() = default;
  InputMatrix(std::string path_, MatrixData data_) : path(std::move(path_)), data(std::move(data_)) {}

  std::string path;
  MatrixData data;  // dense or sparse, as matrix_io's density rule chose
  // Set under mpirun when no rank holds the whole matrix (shared_operands.hpp): data is then an
  // empty sparse matrix of the whole shape, and stored_entries() the whole matrix's.
  std::shared_ptr<const SharedOperands> shared;
  std::int64_t shared_entries = 0;

  std::int64_t rows() const;
  std::int64_t cols() const;
  std::int64_t stored_entries() const;  // rows*cols for dense matrices
  bool is_dense() const { return data.index() == 0; }
  const char* representation() const { return is_dense() ? "dense" : "sparse"; }
};

// 66 when the file cannot be opened (missing, unreadable, a directory), 74 when reading fails after
// it was opened, 65 for anything wrong with its content (such errors carry a line number).
ExitCode classify_read_failure(const pagh::matrix_io::MatrixMarketError& error);
// The CliError read_input throws for the reader's error (the code above, the message as pagh-mm says it).
[[noreturn]] void throw_read_failure(const pagh::matrix_io::MatrixMarketError& error);

// Reads a Matrix Market file (plain or gzip-compressed) or a NumPy .npy array (recognised by their
// first bytes, not their names); transpose reads the matrix's transpose (for a C-order .npy file at
// no cost: its data is the transpose's column-major layout). threads: the reader's (0 = all).
// Throws CliError with the code above and the reader's message ("<file>:<line>: <reason>").
InputMatrix read_input(const std::string& path, bool transpose = false, int threads = 0);

// The rows and columns (of the transpose when transpose) that a file declares in its header when
// read_input always reads it as a dense matrix: a Matrix Market array file or a .npy array. nullopt
// for coordinate files (their representation depends on their density), for anything but a regular
// file (a pipe would lose what is looked at) and for any header that cannot be read: read_input then
// says why. Reads the header only.
std::optional<std::pair<std::int64_t, std::int64_t>> declared_dense_size(const std::string& path, bool transpose = false);

// Throws CliError (65) naming both files unless cols(A) == rows(B).
void check_multipliable(const InputMatrix& a, const InputMatrix& b);

}  // namespace pagh_mm
