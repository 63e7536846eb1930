// The one error type of matrix_io: every failure to read or write a Matrix Market file throws it.
// It derives from pagh::Error (the project's error type), so callers may catch either.
#pragma once

#include <cstdint>
#include <string>

#include "pagh/error.hpp"

namespace pagh::matrix_io {

class MatrixMarketError : public pagh::Error {
 public:
  // `line` is 1-based; 0 means the error is not tied to a line (an unreadable file, a failed write).
  // what() is "<file>:<line>: <reason>", or "<file>: <reason>" when line is 0.
  MatrixMarketError(std::string file, std::int64_t line, std::string reason);

  const std::string& file() const noexcept { return file_; }
  std::int64_t line() const noexcept { return line_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string file_;
  std::int64_t line_;
  std::string reason_;
};

}  // namespace pagh::matrix_io
