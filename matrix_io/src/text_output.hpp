// Destinations for written text: a file replaced atomically, or a std::ostream. Both buffer, so the
// formatter can append small pieces cheaply.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>

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

// Writes to "<dir>/.<name>.tmp-<pid>-<n>" and renames it over the target in commit(); the destructor
// removes the temporary file when commit() did not complete.
class AtomicFileOutput final : public TextOutput {
 public:
  explicit AtomicFileOutput(const std::filesystem::path& target);
  ~AtomicFileOutput() override;
  void commit() override;

 private:
  void deliver(std::string_view text) override;
  [[noreturn]] void fail_system(const std::string& what) const;

  std::filesystem::path target_;
  std::filesystem::path temporary_;
  int descriptor_ = -1;
  bool committed_ = false;
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
