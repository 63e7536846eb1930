// The entries of a Matrix Market file: one line each after the size line. Parses and checks every
// line of one chunk of the body (tokens, index ranges, finiteness, the skew-symmetric diagonal) and
// hands each entry to a sink. Everything checked here depends on the line alone, so chunks can be
// parsed independently; what depends on the chunk's place in the file (line numbers, the declared
// count, where an array value goes) is settled by chunked_reader.hpp. One pass; no line is looked at
// twice.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "matrix_io/error.hpp"
#include "matrix_io/read.hpp"
#include "fast_tokens.hpp"
#include "number_tokens.hpp"

namespace pagh::matrix_io::detail {

// Sink requirements: void add(std::int64_t row, std::int64_t col, Scalar value), called once per
// coordinate entry in file order with 0-based indices already checked against the header; and
// void add_value(Scalar value), called once per value of an array file.
// Errors are thrown as MatrixMarketError with the line number counted from the chunk's start
// (the first line of the chunk is line 1); entries() tells how many entry lines came before it.
template <class Scalar, class Sink>
class EntryParser {
 public:
  EntryParser(const std::string& name, const Header& header, const ReadOptions& options, Sink& sink)
      : name_(name), header_(header), allow_non_finite_(options.allow_non_finite), sink_(sink) {}

  void consume(std::string_view block) {
    if (header_.format == Format::array) {
      consume_lines<Format::array, Field::real>(block);  // array files are real or integer;
      return;                                             // the value parser checks which
    }
    switch (header_.field) {
      case Field::real: consume_lines<Format::coordinate, Field::real>(block); break;
      case Field::integer: consume_lines<Format::coordinate, Field::integer>(block); break;
      case Field::pattern: consume_lines<Format::coordinate, Field::pattern>(block); break;
    }
  }

  // Lines consumed so far (a last line without '\n' counts), and entry lines among them.
  std::int64_t lines() const { return line_; }
  std::int64_t entries() const { return read_; }

 private:
  [[noreturn]] void fail(const std::string& reason) const { throw MatrixMarketError(name_, line_, reason); }

  template <Format format, Field field>
  void consume_lines(std::string_view block) {
    const char* p = block.data();
    const char* const end = p + block.size();
    while (p < end) {
      ++line_;
      if (const char* next = parse_common_line<format, field>(p, end)) {
        p = next;
        continue;
      }
      const char* eol = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
      if (eol == nullptr) eol = end;
      parse_line<format, field>(p, eol);
      p = eol + 1;
    }
  }

  // The common line (fast_tokens.hpp: blank, or an entry of plain indices and a finite value), read
  // in one pass without first finding its end. Returns where the next line starts, or nullptr with
  // nothing done when the line needs parse_line (comments, signs, errors, integer values, ...).
  template <Format format, Field field>
  const char* parse_common_line(const char* p, const char* end) {
    if constexpr (field == Field::integer) {
      return nullptr;
    } else {
      p = skip_blanks(p, end);
      Scalar value{1};
      std::int64_t row = 0, col = 0;
      if (p == end || *p == '\n') return p == end ? end : p + 1;  // a blank line
      if constexpr (format == Format::array) {
        if (header_.field == Field::integer || !fast_real(p, end, value)) return nullptr;
      } else {
        if (!fast_index(p, end, header_.rows, row)) return nullptr;
        p = skip_blanks(p, end);
        if (!fast_index(p, end, header_.cols, col)) return nullptr;
        if constexpr (field == Field::real) {
          p = skip_blanks(p, end);
          if (!fast_real(p, end, value)) return nullptr;
        }
      }
      p = skip_blanks(p, end);
      if (p != end && *p != '\n') return nullptr;
      if constexpr (format == Format::array) {
        sink_.add_value(value);
      } else {
        if (header_.symmetry == Symmetry::skew_symmetric && row == col) return nullptr;
        sink_.add(row, col, value);
      }
      ++read_;
      return p == end ? end : p + 1;
    }
  }

  std::string count_message(int found) const {
    if (header_.format == Format::array) return "expected 1 value per line, found " + std::to_string(found);
    const bool pattern = header_.field == Field::pattern;
    return std::string("expected ") + (pattern ? "2 tokens (row column)" : "3 tokens (row column value)") +
           ", found " + std::to_string(found);
  }

  std::int64_t parse_index(const char*& p, const char* eol, const char* what, std::int64_t extent) const {
    std::int64_t index = 0;
    const char* start = p;
    const TokenStatus status = parse_int64(p, eol, index);
    if (status == TokenStatus::ok && index >= 1 && index <= extent) [[likely]]
      return index - 1;
    const std::string range = " is out of range 1.." + std::to_string(extent);
    if (status == TokenStatus::malformed)
      fail(std::string(what) + " '" + std::string(token_at(start, eol)) + "' is not an integer");
    if (status == TokenStatus::out_of_range)
      fail(std::string(what) + " '" + std::string(token_at(start, eol)) + "'" + range);
    fail(std::string(what) + " " + std::to_string(index) + range);
  }

  Scalar parse_value(const char*& p, const char* eol) const {
    const char* start = p;
    if (header_.field == Field::integer) {
      std::int64_t value = 0;
      const TokenStatus status = parse_int64(p, eol, value);
      if (status == TokenStatus::malformed)
        fail("value '" + std::string(token_at(start, eol)) + "' is not an integer (the field is integer)");
      if (status == TokenStatus::out_of_range)
        fail("integer value '" + std::string(token_at(start, eol)) + "' is out of the 64-bit range");
      return static_cast<Scalar>(value);
    }
    Scalar value{};
    const TokenStatus status = parse_real(p, eol, value);
    if (status == TokenStatus::malformed)
      fail("value '" + std::string(token_at(start, eol)) + "' is not a number");
    if (status == TokenStatus::out_of_range)
      fail("value '" + std::string(token_at(start, eol)) + "' is out of range for " +
           (std::is_same_v<Scalar, float> ? "float" : "double"));
    if (!allow_non_finite_ && !std::isfinite(value))
      fail("value '" + std::string(token_at(start, eol)) +
           "' is not finite (ReadOptions::allow_non_finite accepts NaN and infinity)");
    return value;
  }

  template <Format format, Field field>
  void parse_line(const char* p, const char* eol) {
    p = skip_blanks(p, eol);
    if (p == eol || *p == '%') return;  // blank lines and comments may appear anywhere
    std::int64_t row = 0, col = 0;
    Scalar value{1};
    if constexpr (format == Format::array) {
      value = parse_value(p, eol);
    } else {
      row = parse_index(p, eol, "row index", header_.rows);
      p = skip_blanks(p, eol);
      if (p == eol) fail(count_message(1));
      col = parse_index(p, eol, "column index", header_.cols);
      if constexpr (field != Field::pattern) {
        p = skip_blanks(p, eol);
        if (p == eol) fail(count_message(2));
        value = parse_value(p, eol);
      }
    }
    p = skip_blanks(p, eol);
    if (p != eol) fail("unexpected token '" + std::string(token_at(p, eol)) + "' at the end of the entry; " +
                       count_message(format == Format::array ? 2 : (field == Field::pattern ? 3 : 4)) +
                       " or more");
    if constexpr (format == Format::array) {
      sink_.add_value(value);  // skew-symmetric array files store no diagonal: nothing to check
    } else {
      if (header_.symmetry == Symmetry::skew_symmetric && row == col && value != Scalar{0})
        fail("nonzero diagonal entry (" + std::to_string(row + 1) + ", " + std::to_string(col + 1) +
             ") in a skew-symmetric matrix");
      sink_.add(row, col, value);
    }
    ++read_;
  }

  const std::string& name_;
  const Header& header_;
  bool allow_non_finite_;
  Sink& sink_;
  std::int64_t line_ = 0;
  std::int64_t read_ = 0;
};

}  // namespace pagh::matrix_io::detail
