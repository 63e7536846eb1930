// What the first lines of a Matrix Market file declare: the banner (format, field, symmetry) and the
// size line (rows, columns and, for coordinate files, the number of stored entries).
#pragma once

#include <cstdint>
#include <string_view>

namespace pagh::matrix_io {

// coordinate: one "row col [value]" line per stored entry (sparse).
// array: every value of the stored part, column by column (dense).
enum class Format { coordinate, array };

// real and integer carry a value per entry; pattern carries none (every listed entry reads as 1).
// complex is recognised in banners but not supported: reading it throws.
enum class Field { real, integer, pattern };

// symmetric: A(j,i) = A(i,j); skew_symmetric: A(j,i) = -A(i,j) and a zero diagonal. Files of either
// kind store one triangle; readers mirror it (see README.md, "Symmetry").
enum class Symmetry { general, symmetric, skew_symmetric };

struct Header {
  Format format = Format::coordinate;
  Field field = Field::real;
  Symmetry symmetry = Symmetry::general;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  // Lines of data the file must hold after the size line: the declared nonzero count for coordinate
  // files; for array files the size of the stored part (rows*cols, n(n+1)/2 or n(n-1)/2).
  std::int64_t stored_entries = 0;
};

// The spelling used in banners: "coordinate", "real", "skew-symmetric", ...
std::string_view to_string(Format format);
std::string_view to_string(Field field);
std::string_view to_string(Symmetry symmetry);

}  // namespace pagh::matrix_io
