#include "text_source.hpp"

#include <algorithm>
#include <cctype>

#include "gzip_blocks.hpp"
#include "input_bytes.hpp"

namespace pagh::matrix_io::detail {
namespace {

// Whether text could still be the start of "%%MatrixMarket" (any case, as the parser accepts it)
// or of a gzip stream.
bool could_be_input(std::string_view text) {
  constexpr std::string_view gzip_magic = "\x1f\x8b";
  if (text.substr(0, 2) == gzip_magic.substr(0, std::min<std::size_t>(2, text.size()))) return true;
  constexpr std::string_view banner = "%%matrixmarket";
  for (std::size_t i = 0; i < std::min(text.size(), banner.size()); ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) != banner[i]) return false;
  return true;
}

}  // namespace

TextSource::TextSource(std::string_view text, std::string_view name) : name_(name) { start(text); }

TextSource::TextSource(const std::filesystem::path& path)
    : file_(std::make_unique<InputBytes>(path, could_be_input)), name_(file_->name()) {
  start(file_->bytes());
}

void TextSource::start(std::string_view bytes) {
  if (is_gzip(bytes)) {
    gzip_ = std::make_unique<GzipBlocks>(bytes, name_);
    total_bytes_ = unknown_size;
    return;
  }
  memory_ = bytes;
  total_bytes_ = bytes.size();
}

TextSource::~TextSource() = default;

std::string_view TextSource::next_block() {
  if (gzip_) return gzip_->next_block();
  const std::string_view block = memory_;
  memory_ = {};
  return block;
}

}  // namespace pagh::matrix_io::detail
