// Destinations for written text: a file (by the output rule of pagh/output_file.hpp), or a
// std::ostream. Both buffer, so the formatter can append small pieces cheaply.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

#include "pagh/output_file.hpp"

namespace pagh::matrix_io::detail {

class TextOutput {
 public:
  explicit TextOutput(std::string name) : name_(std::move(name)) { buffer_.reserve(flush_bytes + 256); }
  virtual ~TextOutput() = default;
  TextOutput(const TextOutput&) = delete;
  TextOutput& operator=(const TextOutput&) = delete;

  void append(std::string_view text) {
    buffer_.append(text);
    if (buffer_.size() >= flush_bytes) flush();
  }
  // Everything appended reaches its destination (file: on disk under the target's name), or throws.
  virtual void commit() = 0;
  const std::string& name() const { return name_; }

 protected:
  static constexpr std::size_t flush_bytes = std::size_t{1} << 20;
  void flush() {
    deliver(buffer_);
    buffer_.clear();
  }
  virtual void deliver(std::string_view text) = 0;

 private:
  std::string name_;
  std::string buffer_;
};

// Writes to a file by the project's output rule (pagh/output_file.hpp): a regular file or a new
// path is replaced atomically in commit() (a temporary beside it, renamed over it); a symbolic
// link's target is replaced, the link stays; a device or FIFO is written directly. The destructor
// removes the temporary when commit() did not complete. Failures throw MatrixMarketError (line 0).
class FileOutput final : public TextOutput {
 public:
  explicit FileOutput(const std::filesystem::path& target);
  ~FileOutput() override;
  void commit() override;

 private:
  void deliver(std::string_view text) override;

  std::unique_ptr<pagh::OutputFile> file_;
};

class StreamOutput final : public TextOutput {
 public:
  explicit StreamOutput(std::ostream& out) : TextOutput("<stream>"), out_(out) {}
  void commit() override;

 private:
  void deliver(std::string_view text) override;
  std::ostream& out_;
};

}  // namespace pagh::matrix_io::detail
