// NumPy .npy input and output: round trips in both dtypes, C and Fortran order read straight and
// transposed (files built byte by byte from the format's specification, as NumPy writes them), and
// every bad file refused with its reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>

#include "matrix_io/npy.hpp"

namespace mio = pagh::matrix_io;

namespace {

std::filesystem::path scratch(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("matrix_io_npy_" + std::to_string(::getpid()) + "_" + name);
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A version 1.0 file as numpy.save writes it: the dictionary padded with spaces to a 64-byte
// boundary, then the raw little-endian values.
std::string npy_file(const std::string& dictionary, const std::string& data, int version = 1) {
  std::string header = dictionary;
  const std::size_t prefix = version == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  const std::size_t length = header.size();
  for (std::size_t i = 0; i < (version == 1 ? 2u : 4u); ++i) out += static_cast<char>((length >> (8 * i)) & 0xff);
  return out + header + data;
}

template <class T>
std::string raw(const std::vector<T>& values) {
  return {reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)};
}

void write_file(const std::filesystem::path& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// The 2 x 3 array [[1, 2, 3], [4, 5, 6]] in C order (rows one after another) and in Fortran order.
const std::vector<double> kC = {1, 2, 3, 4, 5, 6};
const std::vector<double> kF = {1, 4, 2, 5, 3, 6};
Eigen::MatrixXd expected() {
  Eigen::MatrixXd m(2, 3);
  m << 1, 2, 3, 4, 5, 6;
  return m;
}

std::string error_of(const std::filesystem::path& path, const mio::ReadOptions& options = {}) {
  try {
    mio::read_npy<double>(path, options);
    return "";
  } catch (const mio::MatrixMarketError& e) {
    EXPECT_EQ(e.line(), 0);
    EXPECT_EQ(e.file(), path.string());
    return e.reason();
  }
}

}  // namespace

TEST(MatrixIoNpy, RoundTripsAreExactInBothDtypes) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  for (const auto [rows, cols] : {std::pair{1, 1}, {3, 7}, {130, 67}, {0, 4}}) {
    Eigen::MatrixXd d(rows, cols);
    for (Eigen::Index k = 0; k < d.size(); ++k) d.data()[k] = normal(rng) * 1e10;
    const auto path = scratch("round.npy");
    mio::write_npy(path, d);
    EXPECT_EQ(slurp(path).size() % 64, (d.size() * 8) % 64) << "the data starts at a multiple of 64 bytes";
    EXPECT_EQ(mio::read_npy<double>(path), d);
    EXPECT_EQ(mio::read_npy<double>(path, {}, true), Eigen::MatrixXd(d.transpose()));
    const mio::NpyHeader h = mio::read_npy_header(path);
    EXPECT_TRUE(h.fortran_order);
    EXPECT_EQ(h.item_bytes, 8);
    EXPECT_EQ(h.rows, rows);
    const Eigen::MatrixXf f = d.cast<float>();
    mio::write_npy(path, f);
    EXPECT_EQ(mio::read_npy_header(path).item_bytes, 4);
    EXPECT_EQ(mio::read_npy<float>(path), f);
    EXPECT_EQ(mio::read_npy<double>(path), Eigen::MatrixXd(f.cast<double>())) << "float32 widens exactly";
    std::filesystem::remove(path);
  }
}

TEST(MatrixIoNpy, CAndFortranOrderReadStraightAndTransposed) {
  const auto path = scratch("order.npy");
  const std::string c_header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
  const std::string f_header = "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }";
  for (const int version : {1, 2, 3}) {
    write_file(path, npy_file(c_header, raw(kC), version));
    EXPECT_EQ(mio::read_npy<double>(path), expected()) << "C order, version " << version;
    EXPECT_EQ(mio::read_npy<double>(path, {}, true), Eigen::MatrixXd(expected().transpose()));
    write_file(path, npy_file(f_header, raw(kF), version));
    EXPECT_EQ(mio::read_npy<double>(path), expected()) << "Fortran order, version " << version;
    EXPECT_EQ(mio::read_npy<double>(path, {}, true), Eigen::MatrixXd(expected().transpose()));
  }
  // float32, keys in another order, double quotes, no trailing comma: all valid Python literals.
  const std::vector<float> c_float(kC.begin(), kC.end());
  write_file(path, npy_file("{\"shape\": (2, 3), \"fortran_order\": False, \"descr\": \"<f4\"}", raw(c_float)));
  EXPECT_EQ(mio::read_npy<double>(path), expected());
  std::filesystem::remove(path);
}

// Larger than one 64 x 64 tile in both directions, odd sizes, several threads: the blocked
// transpose puts every value where the straight reading of the other order does.
TEST(MatrixIoNpy, LargeArraysTransposeExactlyOnAnyThreads) {
  const std::int64_t rows = 203, cols = 131;
  std::vector<double> c(static_cast<std::size_t>(rows * cols)), f(c.size());
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const double v = static_cast<double>(i * 1000 + j);
      c[static_cast<std::size_t>(i * cols + j)] = v;
      f[static_cast<std::size_t>(i + j * rows)] = v;
    }
  const std::string shape = "'shape': (" + std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  const auto c_path = scratch("c.npy"), f_path = scratch("f.npy");
  write_file(c_path, npy_file("{'descr': '<f8', 'fortran_order': False, " + shape, raw(c)));
  write_file(f_path, npy_file("{'descr': '<f8', 'fortran_order': True, " + shape, raw(f)));
  const Eigen::MatrixXd reference = Eigen::Map<const Eigen::MatrixXd>(f.data(), rows, cols);
  for (const int threads : {1, 3}) {
    mio::ReadOptions options;
    options.threads = threads;
    EXPECT_EQ(mio::read_npy<double>(c_path, options), reference);
    EXPECT_EQ(mio::read_npy<double>(f_path, options), reference);
    EXPECT_EQ(mio::read_npy<double>(c_path, options, true), Eigen::MatrixXd(reference.transpose()));
    EXPECT_EQ(mio::read_npy<double>(f_path, options, true), Eigen::MatrixXd(reference.transpose()));
  }
  std::filesystem::remove(c_path);
  std::filesystem::remove(f_path);
}

TEST(MatrixIoNpy, BadFilesAreRefusedWithTheirReason) {
  const auto path = scratch("bad.npy");
  const auto refused = [&](const std::string& bytes) {
    write_file(path, bytes);
    return error_of(path);
  };
  const std::string f8 = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(refused("%%MatrixMarket matrix array real general\n"), "not a .npy file (it does not start with \\x93NUMPY)");
  EXPECT_TRUE(refused(npy_file("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }", raw(kC)))
                  .starts_with("dtype '<i8' is not supported"));
  EXPECT_TRUE(refused(npy_file("{'descr': '>f8', 'fortran_order': False, 'shape': (2, 3), }", raw(kC)))
                  .starts_with("dtype '>f8' is not supported"));
  EXPECT_TRUE(refused(npy_file("{'descr': '<c16', 'fortran_order': False, 'shape': (2, 3), }", raw(kC)))
                  .starts_with("dtype '<c16' is not supported"));
  EXPECT_EQ(refused(npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }", raw(kC))),
            "a 1-D array (shape (6,)): pagh reads 2-D arrays (reshape it, e.g. a.reshape(-1, 1))");
  EXPECT_TRUE(refused(npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 3), }", raw(kC)))
                  .starts_with("a 3-D array (shape (1, 2, 3))"));
  EXPECT_TRUE(refused(npy_file("{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2, 3), }", raw(kC)))
                  .starts_with("bad header"));
  EXPECT_TRUE(refused(npy_file("{'descr': '<f8', 'shape': (2, 3), }", raw(kC))).starts_with("bad header"));
  EXPECT_TRUE(refused(npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (2, -3), }", raw(kC)))
                  .starts_with("bad header"));
  const std::string whole = npy_file(f8, raw(kC));
  EXPECT_EQ(refused(whole.substr(0, whole.size() - 1)),
            "truncated .npy file: the header declares 2 x 3 values (48 bytes), but only 47 bytes follow it");
  EXPECT_EQ(refused(whole.substr(0, 20)), "truncated .npy file: it ends inside its header");
  EXPECT_EQ(refused(whole.substr(0, 7)), "truncated .npy file: it ends inside its header");
  EXPECT_EQ(refused(whole + "x"), "1 bytes follow the 2 x 3 array's data (not a .npy file NumPy wrote)");
  std::vector<double> with_nan = kC;
  with_nan[4] = std::numeric_limits<double>::quiet_NaN();  // C order: row 1, column 1
  EXPECT_EQ(refused(npy_file(f8, raw(with_nan))),
            "value at [1, 1] is not finite (ReadOptions::allow_non_finite accepts NaN and infinity)");
  mio::ReadOptions allow;
  allow.allow_non_finite = true;
  EXPECT_EQ(error_of(path, allow), "");
  EXPECT_TRUE(std::isnan(mio::read_npy<double>(path, allow)(1, 1)));
  std::vector<double> huge = kC;
  huge[2] = 1e300;
  write_file(path, npy_file(f8, raw(huge)));
  try {
    mio::read_npy<float>(path);
    ADD_FAILURE() << "1e300 was read as float";
  } catch (const mio::MatrixMarketError& e) {
    EXPECT_EQ(e.reason(), "value at [0, 2] (1e+300) is out of range for float");
  }
  mio::ReadOptions small;
  small.max_result_bytes = 40;
  write_file(path, whole);
  EXPECT_TRUE(error_of(path, small).starts_with("a dense 2 x 3 matrix of double needs 48 bytes")) << error_of(path, small);
  std::filesystem::remove(path);
  EXPECT_TRUE(error_of(path).starts_with("cannot open file"));
}

TEST(MatrixIoNpy, MagicIsRecognisedOnRegularFilesOnly) {
  const auto path = scratch("magic.npy");
  mio::write_npy(path, Eigen::MatrixXd::Ones(2, 2));
  EXPECT_TRUE(mio::is_npy_file(path));
  write_file(path, "%%MatrixMarket matrix array real general\n1 1\n1\n");
  EXPECT_FALSE(mio::is_npy_file(path));
  EXPECT_FALSE(mio::is_npy_file(std::filesystem::temp_directory_path()));
  EXPECT_FALSE(mio::is_npy_file(scratch("missing.npy")));
  std::filesystem::remove(path);
}
