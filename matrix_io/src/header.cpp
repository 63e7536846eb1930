#include "matrix_io/header.hpp"

namespace pagh::matrix_io {

std::string_view to_string(Format format) {
  return format == Format::coordinate ? "coordinate" : "array";
}

std::string_view to_string(Field field) {
  switch (field) {
    case Field::real: return "real";
    case Field::integer: return "integer";
    case Field::pattern: return "pattern";
  }
  return "unknown";
}

std::string_view to_string(Symmetry symmetry) {
  switch (symmetry) {
    case Symmetry::general: return "general";
    case Symmetry::symmetric: return "symmetric";
    case Symmetry::skew_symmetric: return "skew-symmetric";
  }
  return "unknown";
}

}  // namespace pagh::matrix_io
