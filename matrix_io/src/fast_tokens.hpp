// The common case of a Matrix Market entry line, recognised quickly: unsigned indices in range and
// finite values, each followed by a blank, a line end or the end of the text. Each function takes
// [p, end) where end is the end of the parsed text (not of the line: '\n' ends a token as a blank
// does), and answers false for anything else, without an error: the caller then parses the line
// with number_tokens.hpp, which accepts every valid form and words every error. So these functions
// may decline valid input, but never accept input that number_tokens.hpp would read differently.
#pragma once

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <system_error>

#include "number_tokens.hpp"

namespace pagh::matrix_io::detail {

// Whether the token that ended just before p is complete: p is at a blank, a line end or the end.
inline bool token_ends_at(const char* p, const char* end) { return p == end || is_blank(*p) || *p == '\n'; }

// How many of the 8 bytes (in memory order) lead with ASCII digits, and their value as a decimal
// number. Works within each byte (no carries cross bytes), so that no branch depends on the length.
[[gnu::always_inline]] inline unsigned leading_digits_of_eight(std::uint64_t bytes, std::uint64_t& value) {
  constexpr std::uint64_t ones = 0x0101010101010101;
  // Zero in a byte exactly when its high nibble is 3 and its low nibble is at most 9.
  const std::uint64_t not_digit = ((bytes & (0xF0 * ones)) ^ (0x30 * ones)) | (((bytes & (0x0F * ones)) + 0x06 * ones) & (0xF0 * ones));
  const std::uint64_t flags = (((not_digit & (0x7F * ones)) + 0x7F * ones) | not_digit) & (0x80 * ones);
  const unsigned count = flags == 0 ? 8 : static_cast<unsigned>(std::countr_zero(flags)) / 8;
  if (count == 0) return 0;
  // The digits' values, moved to the high bytes so that the bytes before them read as leading zeros,
  // then combined pairwise: 8 digits of 1 byte, 4 of 2, 2 of 4, 1 of 8.
  std::uint64_t digits = (bytes & (0x0F * ones)) << (8 * (8 - count));
  digits = (digits * 10 + (digits >> 8)) & 0x00FF00FF00FF00FF;
  digits = (digits * 100 + (digits >> 16)) & 0x0000FFFF0000FFFF;
  value = (digits * 10000 + (digits >> 32)) & 0xFFFFFFFF;
  return count;
}

// An index in 1..extent written as up to 18 digits (no sign), returned 0-based; p moves past it.
[[gnu::always_inline]] inline bool fast_index(const char*& p, const char* end, std::int64_t extent, std::int64_t& out) {
  const char* q = p;
  std::uint64_t value = 0;
  bool complete = false;  // all digits read
  if constexpr (std::endian::native == std::endian::little) {
    if (end - q >= 8) {
      std::uint64_t bytes;
      std::memcpy(&bytes, q, 8);
      const unsigned count = leading_digits_of_eight(bytes, value);
      if (count == 0) return false;
      q += count;
      complete = count < 8;
    }
  }
  // Short texts, and digits beyond the first eight.
  for (; !complete && q < end && is_digit(*q); ++q) {
    if (q - p >= 18) return false;
    value = value * 10 + static_cast<unsigned>(*q - '0');
  }
  if (q == p || !token_ends_at(q, end) || value < 1 || value > static_cast<std::uint64_t>(extent)) return false;
  out = static_cast<std::int64_t>(value) - 1;
  p = q;
  return true;
}

// A finite decimal value, correctly rounded (std::from_chars, as parse_real); p moves past it.
template <class Scalar>
[[gnu::always_inline]] inline bool fast_real(const char*& p, const char* end, Scalar& out) {
  Scalar value{};
  const auto [stop, error] = std::from_chars(p, end, value, std::chars_format::general);
  if (error != std::errc() || !token_ends_at(stop, end) || !std::isfinite(value)) return false;
  out = value;
  p = stop;
  return true;
}

}  // namespace pagh::matrix_io::detail
