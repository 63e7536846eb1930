// The part of a Matrix Market file before the entries: banner line, comment and blank lines, size
// line. Validates everything the header alone can tell, including that the rest of the input is long
// enough for the entries it declares (so nothing is ever allocated from a lying header).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "matrix_io/header.hpp"

namespace pagh::matrix_io::detail {

class PreambleParser {
 public:
  // total_bytes: size of the whole input, used to bound the declared number of entries.
  PreambleParser(std::string name, std::uint64_t total_bytes);

  // Consumes whole lines of `block` until the size line has been read; returns what follows it
  // (empty while the preamble is not complete). Throws MatrixMarketError on the first bad line.
  std::string_view consume(std::string_view block);
  // Call at the end of the input when done() is still false: throws the right error.
  [[noreturn]] void fail_at_end_of_input() const;

  bool done() const { return done_; }
  const Header& header() const { return header_; }
  // Lines read so far (the size line's number once done()).
  std::int64_t line() const { return line_; }
  const std::string& name() const { return name_; }

 private:
  void parse_banner(std::string_view line);
  void parse_size_line(std::string_view line);
  void check_declared_entries_fit(std::uint64_t bytes_after_size_line);
  [[noreturn]] void fail(const std::string& reason) const;

  std::string name_;
  std::uint64_t total_bytes_;
  std::uint64_t consumed_bytes_ = 0;
  std::int64_t line_ = 0;
  bool banner_seen_ = false;
  bool done_ = false;
  Header header_;
};

}  // namespace pagh::matrix_io::detail
