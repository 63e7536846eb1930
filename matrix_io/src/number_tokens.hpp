// Tokenizing one line of a Matrix Market file: blanks, integers and floating-point values.
// Every function works on [p, end) where end is the end of the line (excluding '\n'), never reads
// past end, and reports what it found instead of throwing, so the caller can name file and line.
#pragma once

#include <charconv>
#include <cstdint>
#include <limits>
#include <string_view>
#include <system_error>

namespace pagh::matrix_io::detail {

// Blanks separate tokens. '\r' counts as one so that files with CRLF line ends read correctly.
inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

inline const char* skip_blanks(const char* p, const char* end) {
  while (p < end && is_blank(*p)) ++p;
  return p;
}

// The token starting at p (up to the next blank or the end of the line), for error messages.
inline std::string_view token_at(const char* p, const char* end) {
  const char* q = p;
  while (q < end && !is_blank(*q)) ++q;
  constexpr std::size_t longest_shown = 40;  // a garbled binary file must not make a huge message
  return {p, std::min(static_cast<std::size_t>(q - p), longest_shown)};
}

enum class TokenStatus { ok, malformed, out_of_range };

// An optionally signed decimal integer that fills the whole token. On success p moves past it.
inline TokenStatus parse_int64(const char*& p, const char* end, std::int64_t& out) {
  const char* q = p;
  bool negative = false;
  if (q < end && (*q == '-' || *q == '+')) {
    negative = *q == '-';
    ++q;
  }
  const char* digits = q;
  std::uint64_t magnitude = 0;
  // Up to 18 digits cannot overflow 64 bits; longer runs take the checked path below.
  while (q < end && is_digit(*q) && q - digits < 18) {
    magnitude = magnitude * 10 + static_cast<unsigned>(*q - '0');
    ++q;
  }
  bool overflow = false;
  while (q < end && is_digit(*q)) {
    const unsigned digit = static_cast<unsigned>(*q - '0');
    if (magnitude > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) overflow = true;
    else magnitude = magnitude * 10 + digit;
    ++q;
  }
  if (q == digits || (q < end && !is_blank(*q))) return TokenStatus::malformed;
  const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
  if (overflow || magnitude > limit) return TokenStatus::out_of_range;
  out = negative ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude);
  p = q;
  return TokenStatus::ok;
}

// Whether a decimal token that std::from_chars called out of range is too small (rounds to zero)
// rather than too large. Estimates the position of its leading digit: negative means below 1.
inline bool decimal_is_tiny(std::string_view token) {
  std::size_t i = 0;
  if (i < token.size() && (token[i] == '-' || token[i] == '+')) ++i;
  std::int64_t position = 0;  // decimal exponent of the first nonzero digit, plus one
  bool seen_nonzero = false, after_point = false;
  for (; i < token.size(); ++i) {
    const char c = token[i];
    if (c == '.') {
      after_point = true;
    } else if (is_digit(c)) {
      if (!seen_nonzero && c != '0') seen_nonzero = true;
      if (!after_point && seen_nonzero) ++position;
      if (after_point && !seen_nonzero) --position;
    } else {
      break;  // 'e' or 'E'
    }
  }
  std::int64_t exponent = 0;
  if (i < token.size()) {
    const char* p = token.data() + i + 1;
    if (p < token.data() + token.size() && *p == '+') ++p;
    // An exponent too long for 64 bits is astronomically large or small; its sign decides.
    if (parse_int64(p, token.data() + token.size(), exponent) != TokenStatus::ok)
      return token.find('-', i) != std::string_view::npos;
  }
  // Saturate rather than overflow: |position| is bounded by the token length.
  if (exponent < 0) return exponent < -(std::int64_t{1} << 62) || position + exponent < 0;
  return exponent < (std::int64_t{1} << 62) && position + exponent < 0;
}

// A decimal floating-point value (fixed or scientific, optional sign, "inf"/"nan" as std::from_chars
// accepts them) that fills the whole token, correctly rounded to Scalar. Values too small for Scalar
// round to a signed zero, as strtod does; values too large are out_of_range.
template <class Scalar>
TokenStatus parse_real(const char*& p, const char* end, Scalar& out) {
  const char* q = p;
  // std::from_chars rejects a leading '+', which Fortran-written files use.
  if (q < end && *q == '+' && q + 1 < end && *(q + 1) != '-' && *(q + 1) != '+') ++q;
  Scalar value{};
  const auto [stop, error] = std::from_chars(q, end, value, std::chars_format::general);
  if (error == std::errc::invalid_argument || (stop < end && !is_blank(*stop)))
    return TokenStatus::malformed;
  if (error == std::errc::result_out_of_range) {
    if (!decimal_is_tiny({q, static_cast<std::size_t>(stop - q)})) return TokenStatus::out_of_range;
    value = *q == '-' ? -Scalar{0} : Scalar{0};
  }
  out = value;
  p = stop;
  return TokenStatus::ok;
}

}  // namespace pagh::matrix_io::detail
