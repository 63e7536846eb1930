#include "matrix_io/error.hpp"

#include <utility>

namespace pagh::matrix_io {
namespace {

std::string located(const std::string& file, std::int64_t line, const std::string& reason) {
  // Appended piece by piece: chained operator+ on strings trips a false -Wrestrict in GCC 12.
  std::string message = file;
  if (line > 0) message.append(":").append(std::to_string(line));
  message.append(": ").append(reason);
  return message;
}

}  // namespace

MatrixMarketError::MatrixMarketError(std::string file, std::int64_t line, std::string reason)
    : pagh::Error(located(file, line, reason)), file_(std::move(file)), line_(line), reason_(std::move(reason)) {}

}  // namespace pagh::matrix_io
