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

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

  std::int64_t placed_at = -1;    // where its entries start in ChunkedBody's destination, if placed

  // EntryParser's sink.
  void add(std::int64_t row, std::int64_t col, Scalar value) {
    rows.push_back(static_cast<Index>(row));
    cols.push_back(static_cast<Index>(col));
    values.push_back(value);
  }
  void add_value(Scalar value) { values.push_back(value); }
};

// Arrays that receive the entries in file order, without gaps: rows and cols may be null (values
// of array files, or a destination for values only).
template <class Scalar, class Index>
struct Destination {
  Index* rows = nullptr;
  Index* cols = nullptr;
  Scalar* values = nullptr;
  std::int64_t capacity = 0;
};

// EntryParser's sink writing into a destination from a given entry on.
template <class Scalar, class Index>
struct PlacedSink {
  Index* rows;
  Index* cols;
  Scalar* values;
  void add(std::int64_t row, std::int64_t col, Scalar value) {
    *rows++ = static_cast<Index>(row);
    *cols++ = static_cast<Index>(col);
    *values++ = value;
  }
  void add_value(Scalar value) { *values++ = value; }
};

// One chunk's entries: a view of the destination or of the chunk's own arrays.
template <class Scalar, class Index>
struct EntrySpan {
  const Index* rows;
  const Index* cols;
  const Scalar* values;
  std::size_t size;
};

// How many '\n' text holds: 16 bytes at a time where SSE2 is there (every x86-64), counted in byte
// lanes (each comparison's all-ones byte subtracts one) and summed every 255 steps, before a lane
// can overflow.
inline std::int64_t count_newlines(std::string_view text) {
  const char* p = text.data();
  const char* const end = p + text.size();
  std::int64_t count = 0;
#if defined(__SSE2__)
  const __m128i newline = _mm_set1_epi8('\n');
  while (end - p >= 16) {
    __m128i lanes = _mm_setzero_si128();
    for (int step = 0; step < 255 && end - p >= 16; ++step, p += 16)
      lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), newline));
    const __m128i sums = _mm_sad_epu8(lanes, _mm_setzero_si128());  // two 64-bit sums of 8 lanes each
    count += _mm_cvtsi128_si64(sums) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums));
  }
#endif
  for (; p < end; ++p) count += *p == '\n';
  return count;
}

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

  // Asks that the entries go straight into `destination` (room for at least the declared count)
  // instead of each chunk's own arrays. Each chunk writes from the entry its lines would start at if
  // none were blank or comments (its lines are counted first), when those lines fit in the room;
  // once a block is settled, the gaps that blank and comment lines left are closed and the entries
  // of chunks that did not fit are copied in, so that every entry ends up at its number.
  void place_into(const Destination<Scalar, Index>& destination) {
    destination_ = destination;
    placing_ = true;
  }
  // Whether the entries are in the destination, in file order, without gaps.
  bool placed() const { return placing_; }

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
    if (placing_) place_chunks(texts, first, threads);
    // Dynamic: chunks of equal bytes need not take equal time on a machine shared with other work.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
    for (std::int64_t i = 0; i < count; ++i) parse_chunk(texts[static_cast<std::size_t>(i)], chunks_[first + static_cast<std::size_t>(i)]);
    for (std::size_t i = 0; i < texts.size(); ++i) settle(texts[i], chunks_[first + i]);
    if (placing_) close_placement_gaps(first);
  }

  // Every chunk's entries, in file order.
  std::vector<EntrySpan<Scalar, Index>> spans() const {
    std::vector<EntrySpan<Scalar, Index>> spans;
    spans.reserve(chunks_.size());
    for (const auto& chunk : chunks_) {
      if (chunk.placed_at >= 0) {
        const auto at = static_cast<std::size_t>(chunk.placed_at);
        spans.push_back({destination_.rows == nullptr ? nullptr : destination_.rows + at,
                         destination_.cols == nullptr ? nullptr : destination_.cols + at, destination_.values + at,
                         static_cast<std::size_t>(chunk.entries)});
      } else {
        spans.push_back({chunk.rows.data(), chunk.cols.data(), chunk.values.data(), chunk.values.size()});
      }
    }
    return spans;
  }
  // Frees the chunks' own arrays (spans() of chunks not placed become invalid).
  void release_chunks() {
    for (auto& chunk : chunks_) {
      chunk.rows = {};
      chunk.cols = {};
      chunk.values = {};
    }
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
  // Counts the lines of every chunk (an upper bound on its entries) and gives each chunk whose lines
  // fit in the room left its place in the destination.
  void place_chunks(const std::vector<std::string_view>& texts, std::size_t first, int threads) {
    std::vector<std::int64_t> lines(texts.size());
    const auto count = static_cast<std::int64_t>(texts.size());
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (std::int64_t i = 0; i < count; ++i) {
      const std::string_view text = texts[static_cast<std::size_t>(i)];
      lines[static_cast<std::size_t>(i)] = count_newlines(text) + (text.back() != '\n');
    }
    std::int64_t at = placed_end_;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      chunks_[first + i].placed_at = at + lines[i] <= destination_.capacity ? at : -1;
      at += lines[i];
    }
  }

  // Moves each placed chunk's entries down to follow the previous chunk's (blank and comment lines
  // had places too) and copies in those of chunks not placed, in file order. Never overwrites what
  // is still to be moved: every chunk's entries end before the next chunk's place starts. The room
  // suffices: settle() has checked the entries against the declared count.
  void close_placement_gaps(std::size_t first) {
    std::int64_t& at = placed_end_;
    for (std::size_t i = first; i < chunks_.size(); ++i) {
      Chunk<Scalar, Index>& chunk = chunks_[i];
      const auto n = static_cast<std::size_t>(chunk.entries);
      const auto move = [&](auto* array, const auto& own) {
        if (array == nullptr) return;
        if (chunk.placed_at < 0) std::copy(own.begin(), own.begin() + static_cast<std::ptrdiff_t>(n), array + at);
        else if (chunk.placed_at != at) std::copy(array + chunk.placed_at, array + chunk.placed_at + n, array + at);
      };
      move(destination_.rows, chunk.rows);
      move(destination_.cols, chunk.cols);
      move(destination_.values, chunk.values);
      chunk.rows = {};
      chunk.cols = {};
      chunk.values = {};
      chunk.placed_at = at;
      at += chunk.entries;
    }
  }

  template <class Sink>
  void parse_into(std::string_view text, Chunk<Scalar, Index>& chunk, Sink& sink) const {
    EntryParser<Scalar, Sink> parser(name_, header_, options_, sink);
    try {
      parser.consume(text);
    } catch (const MatrixMarketError& e) {
      chunk.failed = true;
      chunk.error_line = e.line();
      chunk.error_reason = e.reason();
    }
    chunk.lines = parser.lines();
    chunk.entries = parser.entries();
  }

  void parse_chunk(std::string_view text, Chunk<Scalar, Index>& chunk) const {
    try {
      if (chunk.placed_at >= 0) {
        const auto at = static_cast<std::size_t>(chunk.placed_at);
        PlacedSink<Scalar, Index> sink{destination_.rows == nullptr ? nullptr : destination_.rows + at,
                                       destination_.cols == nullptr ? nullptr : destination_.cols + at,
                                       destination_.values + at};
        parse_into(text, chunk, sink);
        return;
      }
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
      parse_into(text, chunk, chunk);
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
  Destination<Scalar, Index> destination_;
  bool placing_ = false;
  std::int64_t placed_end_ = 0;  // entries in the destination so far
};

}  // namespace pagh::matrix_io::detail
