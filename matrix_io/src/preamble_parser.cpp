#include "preamble_parser.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "matrix_io/error.hpp"
#include "number_tokens.hpp"

namespace pagh::matrix_io::detail {
namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

std::vector<std::string_view> split_blanks(std::string_view line) {
  std::vector<std::string_view> tokens;
  const char* p = line.data();
  const char* end = p + line.size();
  for (p = skip_blanks(p, end); p < end; p = skip_blanks(p, end)) {
    const char* start = p;
    while (p < end && !is_blank(*p)) ++p;
    tokens.emplace_back(start, static_cast<std::size_t>(p - start));
  }
  return tokens;
}

std::string shown(std::string_view token) {
  std::string quoted(1, '\'');
  quoted.append(token.substr(0, 40)).append(token.size() > 40 ? "...'" : "'");
  return quoted;
}

bool is_comment_or_blank(std::string_view line) {
  const char* p = skip_blanks(line.data(), line.data() + line.size());
  return p == line.data() + line.size() || *p == '%';
}

constexpr const char* banner_form =
    "%%MatrixMarket matrix coordinate|array real|integer|pattern general|symmetric|skew-symmetric";

}  // namespace

PreambleParser::PreambleParser(std::string name, std::uint64_t total_bytes)
    : name_(std::move(name)), total_bytes_(total_bytes) {}

void PreambleParser::fail(const std::string& reason) const {
  throw MatrixMarketError(name_, line_, reason);
}

void PreambleParser::fail_at_end_of_input() const {
  if (!banner_seen_) throw MatrixMarketError(name_, 1, "empty input: missing the banner " + std::string(banner_form));
  fail("input ends before the size line");
}

std::string_view PreambleParser::consume(std::string_view block) {
  while (!block.empty() && !done_) {
    const std::size_t newline = block.find('\n');
    const std::size_t length = newline == std::string_view::npos ? block.size() : newline;
    const std::string_view line = block.substr(0, length);
    const std::size_t taken = std::min(block.size(), length + 1);
    block.remove_prefix(taken);
    consumed_bytes_ += taken;
    ++line_;
    if (!banner_seen_) {
      parse_banner(line);
      banner_seen_ = true;
    } else if (!is_comment_or_blank(line)) {
      parse_size_line(line);
      check_declared_entries_fit(total_bytes_ - consumed_bytes_);
      done_ = true;
    }
  }
  return done_ ? block : std::string_view{};
}

void PreambleParser::parse_banner(std::string_view line) {
  // A UTF-8 byte-order mark (some Windows editors write one) carries no meaning: skip it.
  if (line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
  // gzip input is decompressed before it gets here (text_source.cpp); a gzip stream inside one is
  // named rather than called a missing banner.
  if (line.starts_with("\x1F\x8B"))
    fail("gzip-compressed twice: the decompressed text is itself a gzip stream (decompress it once first, e.g. gunzip FILE)");
  const std::vector<std::string_view> tokens = split_blanks(line);
  if (tokens.empty() || !equals_ignoring_case(tokens[0], "%%MatrixMarket") || line.front() != '%')
    fail("missing Matrix Market banner: the first line must read " + std::string(banner_form));
  if (tokens.size() < 5)
    fail("incomplete banner: expected " + std::string(banner_form));
  if (tokens.size() > 5) fail("unexpected " + shown(tokens[5]) + " after the banner's symmetry");
  if (!equals_ignoring_case(tokens[1], "matrix"))
    fail("unsupported object " + shown(tokens[1]) + " in the banner: only 'matrix' is supported");

  if (equals_ignoring_case(tokens[2], "coordinate")) header_.format = Format::coordinate;
  else if (equals_ignoring_case(tokens[2], "array")) header_.format = Format::array;
  else fail("unknown format " + shown(tokens[2]) + " in the banner: expected coordinate or array");

  if (equals_ignoring_case(tokens[3], "real")) header_.field = Field::real;
  else if (equals_ignoring_case(tokens[3], "integer")) header_.field = Field::integer;
  else if (equals_ignoring_case(tokens[3], "pattern")) header_.field = Field::pattern;
  else if (equals_ignoring_case(tokens[3], "complex"))
    fail("complex matrices are not supported (field 'complex' in the banner)");
  else fail("unknown field " + shown(tokens[3]) + " in the banner: expected real, integer or pattern");

  if (equals_ignoring_case(tokens[4], "general")) header_.symmetry = Symmetry::general;
  else if (equals_ignoring_case(tokens[4], "symmetric")) header_.symmetry = Symmetry::symmetric;
  else if (equals_ignoring_case(tokens[4], "skew-symmetric")) header_.symmetry = Symmetry::skew_symmetric;
  else if (equals_ignoring_case(tokens[4], "hermitian"))
    fail("hermitian matrices are not supported (symmetry 'hermitian' in the banner)");
  else
    fail("unknown symmetry " + shown(tokens[4]) +
         " in the banner: expected general, symmetric or skew-symmetric");

  if (header_.format == Format::array && header_.field == Field::pattern)
    fail("invalid banner: the pattern field is only allowed with the coordinate format");
  if (header_.field == Field::pattern && header_.symmetry == Symmetry::skew_symmetric)
    fail("invalid banner: a pattern matrix cannot be skew-symmetric");
}

void PreambleParser::parse_size_line(std::string_view line) {
  const bool coordinate = header_.format == Format::coordinate;
  const char* expected = coordinate ? "'rows columns entries'" : "'rows columns'";
  const std::vector<std::string_view> tokens = split_blanks(line);
  const std::size_t wanted = coordinate ? 3 : 2;
  if (tokens.size() != wanted)
    fail("bad size line: expected " + std::string(expected) + ", found " +
         std::to_string(tokens.size()) + " token" + (tokens.size() == 1 ? "" : "s"));
  std::int64_t numbers[3] = {0, 0, 0};
  const char* names[3] = {"row count", "column count", "entry count"};
  for (std::size_t i = 0; i < wanted; ++i) {
    const char* p = tokens[i].data();
    const TokenStatus status = parse_int64(p, tokens[i].data() + tokens[i].size(), numbers[i]);
    if (status == TokenStatus::malformed)
      fail("bad size line: " + std::string(names[i]) + " " + shown(tokens[i]) + " is not an integer");
    if (status == TokenStatus::out_of_range || numbers[i] < 0)
      fail("bad size line: " + std::string(names[i]) + " " + shown(tokens[i]) +
           " is out of range 0..2^63-1");
  }
  header_.rows = numbers[0];
  header_.cols = numbers[1];
  if (header_.symmetry != Symmetry::general && header_.rows != header_.cols)
    fail("bad size line: a " + std::string(to_string(header_.symmetry)) + " matrix must be square, found " +
         std::to_string(header_.rows) + " x " + std::to_string(header_.cols));
  if (coordinate) {
    header_.stored_entries = numbers[2];
    return;
  }
  // Array files list the stored part: everything, the lower triangle, or the strict lower triangle.
  const std::int64_t n = header_.rows;
  constexpr std::int64_t most = std::numeric_limits<std::int64_t>::max();
  const auto too_many = [&] {
    fail("bad size line: " + std::to_string(header_.rows) + " x " + std::to_string(header_.cols) +
         " declares more entries than any file can hold");
  };
  switch (header_.symmetry) {
    case Symmetry::general:
      if (header_.rows != 0 && header_.cols > most / header_.rows) too_many();
      header_.stored_entries = header_.rows * header_.cols;
      break;
    case Symmetry::symmetric:  // n(n+1)/2, halving the even factor first so nothing overflows early
      if (n > 0 && (n % 2 == 0 ? (n + 1) > most / (n / 2) : n > most / ((n + 1) / 2))) too_many();
      header_.stored_entries = n % 2 == 0 ? (n / 2) * (n + 1) : n * ((n + 1) / 2);
      break;
    case Symmetry::skew_symmetric:  // n(n-1)/2
      if (n > 1 && (n % 2 == 0 ? (n - 1) > most / (n / 2) : n > most / ((n - 1) / 2))) too_many();
      header_.stored_entries = n <= 1 ? 0 : (n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2));
      break;
  }
}

void PreambleParser::check_declared_entries_fit(std::uint64_t bytes_after_size_line) {
  // The shortest entry line is one-digit tokens separated by single blanks: "1 1 1\n" (coordinate
  // with values), "1 1\n" (pattern), "1\n" (array). The last line may lack its '\n'.
  std::uint64_t tokens = 1;
  if (header_.format == Format::coordinate) tokens = header_.field == Field::pattern ? 2 : 3;
  const std::uint64_t shortest_line = 2 * tokens;
  const std::uint64_t fit = (bytes_after_size_line + 1) / shortest_line;
  if (static_cast<std::uint64_t>(header_.stored_entries) > fit)
    fail("size line declares " + std::to_string(header_.stored_entries) + " entries, but the " +
         std::to_string(bytes_after_size_line) + " bytes after it can hold at most " +
         std::to_string(fit));
}

}  // namespace pagh::matrix_io::detail
