#include "matrix_io/npy.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "entry_sinks.hpp"
#include "input_bytes.hpp"
#include "reader_threads.hpp"
#include "matrix_io/error.hpp"
#include "text_output.hpp"

namespace pagh::matrix_io {
namespace {

constexpr std::string_view npy_magic = "\x93NUMPY";

// The header dictionary, e.g. {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }: a
// Python literal, parsed strictly for the three keys NumPy writes.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  NpyHeader parse() {
    NpyHeader header;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    for (;;) {
      skip();
      if (peek() == '}') break;
      const std::string key = string_literal();
      expect(':');
      skip();
      if (key == "descr") {
        const std::string descr = string_literal();
        if (descr == "<f8") header.item_bytes = 8;
        else if (descr == "<f4") header.item_bytes = 4;
        else fail("dtype '" + descr + "' is not supported: pagh reads little-endian float32 or float64 ('<f4', '<f8'); "
                  "convert with a.astype('<f8')");
        have_descr = true;
      } else if (key == "fortran_order") {
        if (text_.substr(at_).starts_with("True")) header.fortran_order = true, at_ += 4;
        else if (text_.substr(at_).starts_with("False")) header.fortran_order = false, at_ += 5;
        else fail("bad header: fortran_order is neither True nor False");
        have_order = true;
      } else if (key == "shape") {
        shape(header);
        have_shape = true;
      } else {
        fail("bad header: unexpected key '" + key + "'");
      }
      skip();
      if (peek() == ',') ++at_;
    }
    if (!have_descr || !have_order || !have_shape) fail("bad header: it lacks one of 'descr', 'fortran_order', 'shape'");
    return header;
  }

 private:
  [[noreturn]] void fail(const std::string& reason) const { throw MatrixMarketError(name_, 0, reason); }
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  void skip() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n')) ++at_;
  }
  void expect(char c) {
    skip();
    if (peek() != c) fail(std::string("bad header: expected '") + c + "' in the header dictionary");
    ++at_;
  }
  std::string string_literal() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("bad header: expected a quoted key or string in the header dictionary");
    const std::size_t end = text_.find(quote, at_ + 1);
    if (end == std::string_view::npos) fail("bad header: unterminated string in the header dictionary");
    std::string value(text_.substr(at_ + 1, end - at_ - 1));
    at_ = end + 1;
    return value;
  }
  void shape(NpyHeader& header) {
    expect('(');
    std::vector<std::int64_t> dims;
    for (;;) {
      skip();
      if (peek() == ')') break;
      std::int64_t value = 0;
      bool digits = false;
      while (peek() >= '0' && peek() <= '9') {
        if (value > (std::numeric_limits<std::int64_t>::max() - 9) / 10) fail("bad header: a dimension beyond 64 bits");
        value = value * 10 + (peek() - '0');
        ++at_;
        digits = true;
      }
      if (!digits) fail("bad header: the shape is not a tuple of non-negative integers");
      if (peek() == 'L') ++at_;  // Python 2 longs
      dims.push_back(value);
      skip();
      if (peek() == ',') ++at_;
      else if (peek() != ')') fail("bad header: the shape is not a tuple of non-negative integers");
    }
    ++at_;
    if (dims.size() != 2) {
      std::string shown = "(";
      for (std::size_t i = 0; i < dims.size(); ++i) shown += (i ? ", " : "") + std::to_string(dims[i]);
      shown += dims.size() == 1 ? ",)" : ")";
      fail("a " + std::to_string(dims.size()) + "-D array (shape " + shown +
           "): pagh reads 2-D arrays (reshape it, e.g. a.reshape(-1, 1))");
    }
    header.rows = dims[0];
    header.cols = dims[1];
  }

  std::string_view text_;
  const std::string& name_;
  std::size_t at_ = 0;
};

std::uint32_t little_endian(std::string_view bytes) {
  std::uint32_t value = 0;
  for (std::size_t i = bytes.size(); i > 0; --i) value = value << 8 | static_cast<unsigned char>(bytes[i - 1]);
  return value;
}

// The header, and where the data starts. Throws for anything but a complete, supported header.
NpyHeader parse_npy(std::string_view bytes, const std::string& name, std::size_t& data_offset) {
  if (!is_npy(bytes)) throw MatrixMarketError(name, 0, "not a .npy file (it does not start with \\x93NUMPY)");
  if (bytes.size() < 10) throw MatrixMarketError(name, 0, "truncated .npy file: it ends inside its header");
  const int major = static_cast<unsigned char>(bytes[6]);
  if (major < 1 || major > 3)
    throw MatrixMarketError(name, 0, ".npy format version " + std::to_string(major) + " is not supported (1, 2, 3 are)");
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + length_bytes) throw MatrixMarketError(name, 0, "truncated .npy file: it ends inside its header");
  const std::size_t header_length = little_endian(bytes.substr(8, length_bytes));
  data_offset = 8 + length_bytes + header_length;
  if (bytes.size() < data_offset) throw MatrixMarketError(name, 0, "truncated .npy file: it ends inside its header");
  return HeaderParser(bytes.substr(8 + length_bytes, header_length), name).parse();
}

template <class From, class To>
To load(const char* p) {
  From value;
  std::memcpy(&value, p, sizeof value);
  return static_cast<To>(value);
}

// Converts the file's values into the column-major destination (dest_rows x dest_cols). Source
// element (a, b) of the column-major view S (dest_cols x dest_rows when transposing, else
// dest_rows x dest_cols) is at data + (a + b * s_rows) * sizeof(From). Returns the smallest source
// offset holding a value that is not finite after conversion, or -1.
template <class From, class To>
std::int64_t convert(const char* data, To* dest, std::int64_t dest_rows, std::int64_t dest_cols, bool transpose, int threads) {
  std::int64_t first_bad = std::numeric_limits<std::int64_t>::max();
  const auto note = [&](std::int64_t offset, std::int64_t& local) { local = std::min(local, offset); };
  if (!transpose) {
    const std::int64_t total = dest_rows * dest_cols;
#pragma omp parallel num_threads(threads)
    {
      std::int64_t local = std::numeric_limits<std::int64_t>::max();
#pragma omp for schedule(static)
      for (std::int64_t k = 0; k < total; ++k) {
        const To value = load<From, To>(data + k * static_cast<std::int64_t>(sizeof(From)));
        dest[k] = value;
        if (!std::isfinite(value)) [[unlikely]] note(k, local);
      }
#pragma omp critical
      first_bad = std::min(first_bad, local);
    }
  } else {
    // S is dest_cols x dest_rows; D(b, a) = S(a, b), in 64 x 64 tiles.
    const std::int64_t s_rows = dest_cols, s_cols = dest_rows;
    constexpr std::int64_t tile = 64;
    const std::int64_t tiles_b = (s_cols + tile - 1) / tile;
#pragma omp parallel num_threads(threads)
    {
      std::int64_t local = std::numeric_limits<std::int64_t>::max();
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t tb = 0; tb < tiles_b; ++tb) {
        const std::int64_t b_end = std::min(s_cols, (tb + 1) * tile);
        for (std::int64_t a0 = 0; a0 < s_rows; a0 += tile) {
          const std::int64_t a_end = std::min(s_rows, a0 + tile);
          for (std::int64_t a = a0; a < a_end; ++a) {
            for (std::int64_t b = tb * tile; b < b_end; ++b) {
              const std::int64_t offset = a + b * s_rows;
              const To value = load<From, To>(data + offset * static_cast<std::int64_t>(sizeof(From)));
              dest[b + a * dest_rows] = value;
              if (!std::isfinite(value)) [[unlikely]] note(offset, local);
            }
          }
        }
      }
#pragma omp critical
      first_bad = std::min(first_bad, local);
    }
  }
  return first_bad == std::numeric_limits<std::int64_t>::max() ? -1 : first_bad;
}

template <class Scalar>
void write_npy_of(const std::filesystem::path& path, const Eigen::Ref<const DenseMatrix<Scalar>>& m) {
  std::string header = std::string("{'descr': '") + (sizeof(Scalar) == 8 ? "<f8" : "<f4") +
                       "', 'fortran_order': True, 'shape': (" + std::to_string(m.rows()) + ", " +
                       std::to_string(m.cols()) + "), }";
  // Version 1.0: magic, version, 2-byte length, then the dictionary padded with spaces and ended by
  // '\n' so that the data starts at a multiple of 64 bytes.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string prefix(npy_magic);
  prefix += '\x01';
  prefix += '\x00';
  prefix += static_cast<char>(header.size() & 0xff);
  prefix += static_cast<char>(header.size() >> 8);
  detail::FileOutput out(path);
  out.append(prefix);
  out.append(header);
  for (Eigen::Index j = 0; j < m.cols(); ++j)
    out.append({reinterpret_cast<const char*>(m.col(j).data()), static_cast<std::size_t>(m.rows()) * sizeof(Scalar)});
  out.commit();
}

std::string shortest(double value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return {text, end};
}

bool could_be_npy(std::string_view bytes) {
  return bytes.substr(0, npy_magic.size()) == npy_magic.substr(0, std::min(bytes.size(), npy_magic.size()));
}

}  // namespace

bool is_npy(std::string_view bytes) { return bytes.starts_with(npy_magic); }

bool is_npy_file(const std::filesystem::path& path) {
  // Only regular files: looking at a pipe's first bytes would take them from the real reader.
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return false;
  try {
    const detail::InputBytes file(path, could_be_npy);
    return is_npy(file.bytes());
  } catch (const MatrixMarketError&) {
    return false;
  }
}

NpyHeader read_npy_header(const std::filesystem::path& path) {
  const detail::InputBytes file(path, could_be_npy);
  std::size_t offset = 0;
  return parse_npy(file.bytes(), file.name(), offset);
}

template <SupportedScalar Scalar>
DenseMatrix<Scalar> read_npy(const std::filesystem::path& path, const ReadOptions& options, bool transpose) {
  const detail::InputBytes file(path, could_be_npy);
  const std::string& name = file.name();
  std::size_t offset = 0;
  const NpyHeader h = parse_npy(file.bytes(), name, offset);
  Header as_header;
  as_header.format = Format::array;
  as_header.rows = h.rows;
  as_header.cols = h.cols;
  if (std::string reason = detail::dense_refusal<Scalar>(as_header, options.max_result_bytes); !reason.empty())
    throw MatrixMarketError(name, 0, reason);
  // rows * cols fits: dense_refusal bounded it by max_result_bytes.
  const auto values = static_cast<std::uint64_t>(h.rows) * static_cast<std::uint64_t>(h.cols);
  const std::uint64_t data_bytes = values * static_cast<std::uint64_t>(h.item_bytes);
  const std::uint64_t present = file.bytes().size() - offset;
  if (present < data_bytes)
    throw MatrixMarketError(name, 0, "truncated .npy file: the header declares " + std::to_string(h.rows) + " x " +
                                         std::to_string(h.cols) + " values (" + std::to_string(data_bytes) +
                                         " bytes), but only " + std::to_string(present) + " bytes follow it");
  if (present > data_bytes)
    throw MatrixMarketError(name, 0, std::to_string(present - data_bytes) + " bytes follow the " + std::to_string(h.rows) +
                                         " x " + std::to_string(h.cols) + " array's data (not a .npy file NumPy wrote)");
  // Column-major S of the file: the array itself in Fortran order, its transpose in C order.
  // Reading it straight gives S; reading it transposed gives S^T.
  const bool straight = h.fortran_order != transpose;
  const std::int64_t out_rows = transpose ? h.cols : h.rows, out_cols = transpose ? h.rows : h.cols;
  DenseMatrix<Scalar> matrix(out_rows, out_cols);
  const int threads = detail::reader_threads(options);
  const char* data = file.bytes().data() + offset;
  const std::int64_t bad = h.item_bytes == 8
                               ? convert<double, Scalar>(data, matrix.data(), out_rows, out_cols, !straight, threads)
                               : convert<float, Scalar>(data, matrix.data(), out_rows, out_cols, !straight, threads);
  if (bad >= 0) {
    // The position in the file's own (row, column) terms, 0-based as NumPy indexes.
    const std::int64_t row = h.fortran_order ? bad % h.rows : bad / h.cols;
    const std::int64_t col = h.fortran_order ? bad / h.rows : bad % h.cols;
    const double original = h.item_bytes == 8 ? load<double, double>(data + bad * 8) : load<float, double>(data + bad * 4);
    const std::string where = "value at [" + std::to_string(row) + ", " + std::to_string(col) + "]";
    if (std::isfinite(original))
      throw MatrixMarketError(name, 0, where + " (" + shortest(original) + ") is out of range for float");
    if (!options.allow_non_finite)
      throw MatrixMarketError(name, 0, where + " is not finite (ReadOptions::allow_non_finite accepts NaN and infinity)");
  }
  return matrix;
}

template DenseMatrix<double> read_npy<double>(const std::filesystem::path&, const ReadOptions&, bool);
template DenseMatrix<float> read_npy<float>(const std::filesystem::path&, const ReadOptions&, bool);

void write_npy(const std::filesystem::path& path, Eigen::Ref<const Eigen::MatrixXd> matrix) {
  write_npy_of<double>(path, matrix);
}
void write_npy(const std::filesystem::path& path, Eigen::Ref<const Eigen::MatrixXf> matrix) {
  write_npy_of<float>(path, matrix);
}

}  // namespace pagh::matrix_io
