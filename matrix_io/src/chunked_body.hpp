// The body of a Matrix Market file (the lines after the size line), parsed in parallel: each block
// of whole lines is cut into chunks at line ends, the chunks are parsed on all threads, and their
// results are settled in file order. Line numbers, the declared count and the place of every array
// value follow from the counts of the chunks before, so the result and every error (message and
// line) are those of a front-to-back read, for any number of threads and any chunk size.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "entry_parser.hpp"
#include "matrix_io/error.hpp"
#include "matrix_io/read.hpp"
#include "number_tokens.hpp"
#include "preamble_parser.hpp"
#include "reader_threads.hpp"

namespace pagh::matrix_io::detail {

// One chunk's entries in file order (coordinate: row, column, value, 0-based; array: values only),
// its line and entry counts, and the first error in it (line counted from the chunk's start).
template <class Scalar, class Index>
struct Chunk {
  std::vector<Index> rows, cols;
  std::vector<Scalar> values;
  std::int64_t lines = 0;
  std::int64_t entries = 0;      // entry lines parsed (before the error, if any)
  std::int64_t first_entry = 0;  // entry lines before this chunk in the file
  bool failed = false;
  std::int64_t error_line = 0;
  std::string error_reason;
  std::exception_ptr other_error;  // anything but a content error (std::bad_alloc)

  // EntryParser's sink.
  void add(std::int64_t row, std::int64_t col, Scalar value) {
    rows.push_back(static_cast<Index>(row));
    cols.push_back(static_cast<Index>(col));
    values.push_back(value);
  }
  void add_value(Scalar value) { values.push_back(value); }
};

// Cuts text into at most `pieces` parts of about equal size; each ends just after a '\n' (the last
// at the end of the text). No part is empty.
inline std::vector<std::string_view> split_at_lines(std::string_view text, std::size_t pieces) {
  std::vector<std::string_view> parts;
  std::size_t begin = 0;
  for (std::size_t i = 1; i <= pieces && begin < text.size(); ++i) {
    std::size_t end = i == pieces ? text.size() : std::max(begin, text.size() / pieces * i);
    if (end < text.size()) {
      const void* newline = std::memchr(text.data() + end, '\n', text.size() - end);
      end = newline == nullptr ? text.size() : static_cast<std::size_t>(static_cast<const char*>(newline) - text.data()) + 1;
    }
    parts.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return parts;
}

// The line (1-based, within text) of text's n-th entry line (1-based): comment and blank lines are
// not entries, as in EntryParser. 0 when text has fewer.
inline std::int64_t line_of_entry(std::string_view text, std::int64_t n) {
  const char* p = text.data();
  const char* const end = p + text.size();
  std::int64_t line = 0;
  while (p < end) {
    const char* eol = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    if (eol == nullptr) eol = end;
    ++line;
    const char* q = skip_blanks(p, eol);
    if (q != eol && *q != '%' && --n == 0) return line;
    p = eol + 1;
  }
  return 0;
}

// Chunks of about this many bytes at least (unless ReadOptions::chunk_bytes says otherwise): enough
// that the per-chunk work vanishes next to parsing.
inline constexpr std::size_t default_min_chunk_bytes = std::size_t{1} << 20;

template <class Scalar, class Index>
class ChunkedBody {
 public:
  explicit ChunkedBody(const PreambleParser& preamble, const ReadOptions& options)
      : name_(preamble.name()),
        header_(preamble.header()),
        options_(options),
        threads_(reader_threads(options)),
        line_(preamble.line()) {}

  // Parses a block of whole lines (the text that follows the previous block); throws the first
  // error in file order.
  void consume(std::string_view block) {
    if (block.empty()) return;
    const std::size_t target = options_.chunk_bytes > 0
                                   ? options_.chunk_bytes
                                   : std::max(default_min_chunk_bytes, block.size() / (4 * static_cast<std::size_t>(threads_)));
    const std::vector<std::string_view> texts = split_at_lines(block, (block.size() + target - 1) / target);
    const std::size_t first = chunks_.size();
    chunks_.resize(first + texts.size());
    const auto count = static_cast<std::int64_t>(texts.size());
    const int threads = static_cast<int>(std::min<std::int64_t>(threads_, count));
    // Dynamic: chunks of equal bytes need not take equal time on a machine shared with other work.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
    for (std::int64_t i = 0; i < count; ++i) parse_chunk(texts[static_cast<std::size_t>(i)], chunks_[first + static_cast<std::size_t>(i)]);
    for (std::size_t i = 0; i < texts.size(); ++i) settle(texts[i], chunks_[first + i]);
  }

  // At the end of the input: throws when fewer entries than declared were read.
  void finish() const {
    if (entries_ < header_.stored_entries)
      throw MatrixMarketError(name_, line_,
                              "expected " + std::to_string(header_.stored_entries) +
                                  " entries after the size line, found " + std::to_string(entries_) +
                                  " before the end of the input");
  }

  std::vector<Chunk<Scalar, Index>>& chunks() { return chunks_; }
  int threads() const { return threads_; }

 private:
  void parse_chunk(std::string_view text, Chunk<Scalar, Index>& chunk) const {
    try {
      // Reserve for the entries the chunk probably holds (from the line length of its start), never
      // more than the file declares: growth handles the rest.
      const std::size_t sample = std::min<std::size_t>(text.size(), 1 << 16);
      const auto newlines = static_cast<std::size_t>(std::count(text.data(), text.data() + sample, '\n'));
      const std::size_t estimate = std::min<std::size_t>(
          text.size() / (sample / (newlines + 1) + 1) + 16, static_cast<std::size_t>(header_.stored_entries));
      if (header_.format == Format::coordinate) {
        chunk.rows.reserve(estimate);
        chunk.cols.reserve(estimate);
      }
      chunk.values.reserve(estimate);
      EntryParser<Scalar, Chunk<Scalar, Index>> parser(name_, header_, options_, chunk);
      try {
        parser.consume(text);
      } catch (const MatrixMarketError& e) {
        chunk.failed = true;
        chunk.error_line = e.line();
        chunk.error_reason = e.reason();
      }
      chunk.lines = parser.lines();
      chunk.entries = parser.entries();
    } catch (...) {
      chunk.other_error = std::current_exception();
    }
  }

  void settle(std::string_view text, Chunk<Scalar, Index>& chunk) {
    if (chunk.other_error) std::rethrow_exception(chunk.other_error);
    chunk.first_entry = entries_;
    // A front-to-back read refuses the first entry line beyond the declared count before parsing it.
    const std::int64_t room = header_.stored_entries - entries_;
    if (chunk.entries > room || (chunk.failed && chunk.entries == room))
      throw MatrixMarketError(name_, line_ + line_of_entry(text, room + 1),
                              "more entries than the " + std::to_string(header_.stored_entries) +
                                  " declared in the size line");
    if (chunk.failed) throw MatrixMarketError(name_, line_ + chunk.error_line, chunk.error_reason);
    line_ += chunk.lines;
    entries_ += chunk.entries;
  }

  std::string name_;
  Header header_;
  ReadOptions options_;
  int threads_;
  std::int64_t line_;         // lines settled so far, the preamble's included
  std::int64_t entries_ = 0;  // entry lines settled so far
  std::vector<Chunk<Scalar, Index>> chunks_;
};

}  // namespace pagh::matrix_io::detail
