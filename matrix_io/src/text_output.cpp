#include "text_output.hpp"

#include <ostream>

#include "matrix_io/error.hpp"

namespace pagh::matrix_io::detail {

FileOutput::FileOutput(const std::filesystem::path& target) : TextOutput(target.string()) {
  try {
    file_ = std::make_unique<pagh::OutputFile>(target, "pagh::matrix_io::write_matrix_market");
  } catch (const pagh::OutputError& e) {
    throw MatrixMarketError(name(), 0, e.reason());
  }
}

// The unique_ptr's destructor removes an uncommitted temporary.
FileOutput::~FileOutput() = default;

void FileOutput::deliver(std::string_view text) {
  try {
    file_->write(text);
  } catch (const pagh::OutputError& e) {
    throw MatrixMarketError(name(), 0, e.reason());
  }
}

void FileOutput::commit() {
  flush();
  try {
    file_->commit();
  } catch (const pagh::OutputError& e) {
    throw MatrixMarketError(name(), 0, e.reason());
  }
}

void StreamOutput::deliver(std::string_view text) {
  out_.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out_) throw MatrixMarketError(name(), 0, "cannot write to the output stream");
}

void StreamOutput::commit() {
  flush();
  out_.flush();
  if (!out_) throw MatrixMarketError(name(), 0, "cannot write to the output stream");
}

}  // namespace pagh::matrix_io::detail
