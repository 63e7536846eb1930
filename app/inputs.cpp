#include "inputs.hpp"

#include <exception>
#include <filesystem>
#include <system_error>
#include <string>
#include <string_view>

#include "cli_error.hpp"
#include "read_limits.hpp"
#include "matrix_io/npy.hpp"
#include "matrix_io/read.hpp"

namespace pagh_mm {

std::int64_t InputMatrix::rows() const {
  return std::visit([](const auto& m) { return static_cast<std::int64_t>(m.rows()); }, data);
}

std::int64_t InputMatrix::cols() const {
  return std::visit([](const auto& m) { return static_cast<std::int64_t>(m.cols()); }, data);
}

std::int64_t InputMatrix::stored_entries() const {
  if (shared) return shared_entries;
  if (is_dense()) return rows() * cols();
  return static_cast<std::int64_t>(std::get<1>(data).nonZeros());
}

ExitCode classify_read_failure(const pagh::matrix_io::MatrixMarketError& error) {
  // Content errors always carry the line they were found on; line 0 means the file itself failed.
  if (error.line() > 0) return ExitCode::data;
  const std::string_view reason = error.reason();
  if (reason.starts_with("cannot open") || reason.starts_with("cannot read file: it is a directory"))
    return ExitCode::no_input;
  if (reason.starts_with("cannot read") || reason.starts_with("cannot inspect")) return ExitCode::io_error;
  return ExitCode::data;  // e.g. a declared size too large to hold
}

namespace {

// The reader's hint for a NaN names its API (ReadOptions::allow_non_finite), which a pagh-mm user
// cannot set; and pagh-mm offers no switch for it, since one NaN or infinity in A or B would make
// the whole sketch, and so every estimate, NaN. Say that instead.
std::string without_api_hint(std::string message) {
  constexpr std::string_view hint = " (ReadOptions::allow_non_finite accepts NaN and infinity)";
  if (const auto at = message.find(hint); at != std::string::npos)
    message.replace(at, hint.size(), " (pagh-mm needs finite values: one NaN or infinity would make every estimate NaN)");
  return message;
}

// Eigen 3.4's SparseMatrix has no move constructor (std::move copies every entry, a serial pass
// over the whole matrix): the reader's sparse result is swapped into place instead.
InputMatrix sparse_input(const std::string& path, Eigen::SparseMatrix<double>& matrix) {
  InputMatrix input{path, Eigen::SparseMatrix<double>()};
  std::get<1>(input.data).swap(matrix);
  return input;
}

}  // namespace

InputMatrix read_input(const std::string& path, bool transpose, int threads) {
  namespace mio = pagh::matrix_io;
  mio::ReadOptions options = input_read_options();
  options.threads = threads;
  try {
    if (mio::is_npy_file(path)) return InputMatrix{path, mio::read_npy<double>(path, options, transpose)};
    auto any = mio::read_matrix<double>(path, options);
    if (any.is_dense() && !transpose) return InputMatrix{path, std::move(std::get<0>(any.matrix))};
    if (any.is_dense()) return InputMatrix{path, Eigen::MatrixXd(any.dense().transpose())};
    if (!transpose) return sparse_input(path, std::get<1>(any.matrix));
    Eigen::SparseMatrix<double> transposed = any.sparse().transpose();
    return sparse_input(path, transposed);
  } catch (const pagh::matrix_io::MatrixMarketError& e) {
    throw_read_failure(e);
  }
}

void throw_read_failure(const pagh::matrix_io::MatrixMarketError& error) {
  // Keep the reader's message as is: it already names the file and, for content, the line.
  throw CliError(classify_read_failure(error), "", without_reader_api_names(without_api_hint(error.what())));
}

std::optional<std::pair<std::int64_t, std::int64_t>> declared_dense_size(const std::string& path, bool transpose) {
  namespace mio = pagh::matrix_io;
  std::pair<std::int64_t, std::int64_t> size;
  try {
    // A pipe or device would lose the bytes looked at to the real read.
    std::error_code ignored;
    if (!std::filesystem::is_regular_file(path, ignored)) return std::nullopt;
    if (mio::is_npy_file(path)) {
      const mio::NpyHeader header = mio::read_npy_header(path);
      size = {header.rows, header.cols};
    } else {
      const mio::Header header = mio::read_header(path);
      if (header.format != mio::Format::array) return std::nullopt;
      size = {header.rows, header.cols};
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (transpose) std::swap(size.first, size.second);
  return size;
}

void check_multipliable(const InputMatrix& a, const InputMatrix& b) {
  if (a.cols() == b.rows()) return;
  throw CliError(ExitCode::data, a.path + ", " + b.path,
                 "cannot multiply: A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) + " but B is " +
                     std::to_string(b.rows()) + " x " + std::to_string(b.cols()) + " (cols(A) must equal rows(B))");
}

}  // namespace pagh_mm
