// What the reader returns for valid input: values, every banner combination, symmetry expansion,
// duplicates, explicit zeros, number edge cases, the density rule, large inputs read in blocks.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "matrix_io/read.hpp"

namespace mio = pagh::matrix_io;

namespace {

Eigen::MatrixXd dense_of(const std::string& text, const mio::ReadOptions& options = {}) {
  return mio::parse_dense<double>(text, "test.mtx", options);
}
Eigen::MatrixXd sparse_as_dense(const std::string& text, const mio::ReadOptions& options = {}) {
  return Eigen::MatrixXd(mio::parse_sparse<double>(text, "test.mtx", options));
}

std::filesystem::path scratch_dir() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("matrix_io_read_" + std::to_string(::getpid()) + "_" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir);
  return dir;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST(MatrixIoRead, CoordinateRealGeneral) {
  const std::string text =
      "%%MatrixMarket matrix coordinate real general\n"
      "% a comment\n"
      "\n"
      "3 4 4\n"
      "1 1 1.5\n"
      "3 2 -2e3\n"
      "2 4 .25\n"
      "3 4 +7\n";
  Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(3, 4);
  expected(0, 0) = 1.5;
  expected(2, 1) = -2000;
  expected(1, 3) = 0.25;
  expected(2, 3) = 7;
  EXPECT_EQ(dense_of(text), expected);
  const auto sparse = mio::parse_sparse<double>(text, "test.mtx");
  EXPECT_EQ(sparse.nonZeros(), 4);
  EXPECT_TRUE(sparse.isCompressed());
  EXPECT_EQ(Eigen::MatrixXd(sparse), expected);
}

// Every valid (format, field, symmetry) combination, built by hand from a known full matrix, read
// through every entry point and scalar/index type.
struct Combination {
  mio::Format format;
  mio::Field field;
  mio::Symmetry symmetry;
};

// Readable test names in ctest (gtest_discover_tests prints the parameter).
void PrintTo(const Combination& c, std::ostream* out) {
  *out << mio::to_string(c.format) << ' ' << mio::to_string(c.field) << ' ' << mio::to_string(c.symmetry);
}

class EveryBannerCombination : public ::testing::TestWithParam<Combination> {};

TEST_P(EveryBannerCombination, ReadsTheFullMatrix) {
  const auto [format, field, symmetry] = GetParam();
  const bool general = symmetry == mio::Symmetry::general;
  const int rows = general ? 3 : 4, cols = 4;
  // Stored part: general everything; symmetric lower triangle; skew strict lower triangle. Values
  // are whole numbers for the integer field, ones for pattern, fractions otherwise.
  Eigen::MatrixXd full = Eigen::MatrixXd::Zero(rows, cols);
  std::ostringstream body;
  int stored = 0;
  std::ostringstream lines;
  for (int j = 0; j < cols; ++j) {
    for (int i = 0; i < rows; ++i) {
      const bool in_part = general || (symmetry == mio::Symmetry::symmetric ? i >= j : i > j);
      if (!in_part) continue;
      double value = field == mio::Field::integer ? (i * 7 + j * 3) % 11 - 5 : (i + 1) * 0.5 - (j + 1) * 1.25;
      if (field == mio::Field::pattern) value = 1;
      if (format == mio::Format::coordinate && (i + j) % 2 == 1) continue;  // leave some out
      full(i, j) += value;
      if (i != j && symmetry == mio::Symmetry::symmetric) full(j, i) += value;
      if (i != j && symmetry == mio::Symmetry::skew_symmetric) full(j, i) -= value;
      if (format == mio::Format::coordinate) lines << i + 1 << ' ' << j + 1;
      if (field != mio::Field::pattern) lines << (format == mio::Format::coordinate ? " " : "") << value;
      lines << '\n';
      ++stored;
    }
  }
  std::ostringstream text;
  text << "%%MatrixMarket matrix " << mio::to_string(format) << ' ' << mio::to_string(field) << ' '
       << mio::to_string(symmetry) << "\n% combination test\n"
       << rows << ' ' << cols;
  if (format == mio::Format::coordinate) text << ' ' << stored;
  text << '\n' << lines.str();
  SCOPED_TRACE(text.str());

  const mio::Header header = mio::parse_header(text.str(), "combo.mtx");
  EXPECT_EQ(header.format, format);
  EXPECT_EQ(header.field, field);
  EXPECT_EQ(header.symmetry, symmetry);
  EXPECT_EQ(header.rows, rows);
  EXPECT_EQ(header.cols, cols);
  EXPECT_EQ(header.stored_entries, stored);

  EXPECT_EQ(dense_of(text.str()), full);
  EXPECT_EQ(sparse_as_dense(text.str()), full);
  EXPECT_EQ(Eigen::MatrixXf(mio::parse_sparse<float, std::int64_t>(text.str(), "combo.mtx")), full.cast<float>());
  EXPECT_EQ(mio::parse_dense<float>(text.str(), "combo.mtx"), full.cast<float>());
  const auto any = mio::parse_matrix<double>(text.str(), "combo.mtx");
  EXPECT_EQ(any.header.symmetry, symmetry);
  EXPECT_EQ(any.is_dense() ? any.dense() : Eigen::MatrixXd(any.sparse()), full);
}

std::vector<Combination> valid_combinations() {
  std::vector<Combination> all;
  for (auto format : {mio::Format::coordinate, mio::Format::array})
    for (auto field : {mio::Field::real, mio::Field::integer, mio::Field::pattern})
      for (auto symmetry : {mio::Symmetry::general, mio::Symmetry::symmetric, mio::Symmetry::skew_symmetric}) {
        if (field == mio::Field::pattern && (format == mio::Format::array || symmetry == mio::Symmetry::skew_symmetric))
          continue;  // invalid banners, tested in test_read_errors.cpp
        all.push_back({format, field, symmetry});
      }
  return all;
}

INSTANTIATE_TEST_SUITE_P(MatrixIoRead, EveryBannerCombination, ::testing::ValuesIn(valid_combinations()),
                         [](const auto& info) {
                           std::string name = std::string(mio::to_string(info.param.format)) + "_" +
                                              std::string(mio::to_string(info.param.field)) + "_" +
                                              std::string(mio::to_string(info.param.symmetry));
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(MatrixIoRead, BannerIsCaseInsensitive) {
  const std::string text = "%%matrixmarket MATRIX Coordinate REAL Symmetric\n2 2 1\n2 1 3\n";
  Eigen::MatrixXd expected(2, 2);
  expected << 0, 3, 3, 0;
  EXPECT_EQ(dense_of(text), expected);
}

TEST(MatrixIoRead, DuplicatesAreSummedInFileOrder) {
  // 1e16 + 1 + 1 - 1e16: summed left to right in double this is 0 (each +1 is lost to rounding);
  // any other order gives 2. The dense and sparse paths must agree on file order.
  const std::string text =
      "%%MatrixMarket matrix coordinate real general\n2 2 5\n1 1 1e16\n2 2 4\n1 1 1\n1 1 1\n1 1 -1e16\n";
  EXPECT_EQ(dense_of(text)(0, 0), 0.0);
  const auto sparse = mio::parse_sparse<double>(text, "test.mtx");
  EXPECT_EQ(sparse.nonZeros(), 2);
  EXPECT_EQ(sparse.coeff(0, 0), 0.0);
  EXPECT_EQ(sparse.coeff(1, 1), 4.0);
}

TEST(MatrixIoRead, SymmetricFilesMirrorEitherTriangleAndSumBoth) {
  // An upper-triangle entry is mirrored like a lower one; a pair listed in both triangles is summed
  // into both positions (as scipy.io.mmread does).
  const std::string text = "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n2 1 1\n1 2 2\n3 3 5\n";
  Eigen::MatrixXd expected(3, 3);
  expected << 0, 3, 0, 3, 0, 0, 0, 0, 5;
  EXPECT_EQ(dense_of(text), expected);
  EXPECT_EQ(sparse_as_dense(text), expected);
  EXPECT_EQ(mio::parse_sparse<double>(text, "test.mtx").nonZeros(), 3);
}

TEST(MatrixIoRead, SkewSymmetricMirrorsNegatedAndAcceptsAZeroDiagonalEntry) {
  const std::string text = "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 3\n3 1 4\n2 2 0\n1 2 6\n";
  Eigen::MatrixXd expected(3, 3);
  expected << 0, 6, -4, -6, 0, 0, 4, 0, 0;
  EXPECT_EQ(dense_of(text), expected);
  EXPECT_EQ(sparse_as_dense(text), expected);
}

TEST(MatrixIoRead, ExplicitZerosStayStoredInCoordinateButNotFromArrays) {
  const std::string coordinate = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 0\n2 1 0.0\n";
  const auto from_coordinate = mio::parse_sparse<double>(coordinate, "test.mtx");
  EXPECT_EQ(from_coordinate.nonZeros(), 2);
  EXPECT_EQ(Eigen::MatrixXd(from_coordinate), Eigen::MatrixXd::Zero(2, 2));
  const std::string array = "%%MatrixMarket matrix array real general\n2 2\n0\n1\n0\n-0\n";
  EXPECT_EQ(mio::parse_sparse<double>(array, "test.mtx").nonZeros(), 1);
}

TEST(MatrixIoRead, LayoutVariants) {
  // Tabs, several blanks, CRLF line ends, comments and blank lines between and after entries, no
  // final newline.
  const std::string text =
      "%%MatrixMarket matrix coordinate real general\r\n%c\r\n\r\n  2\t2   2  \r\n1\t1\t1.0\r\n% mid\r\n\r\n"
      "  2 2 2.5\r\n% trailing comment\n\n";
  Eigen::MatrixXd expected(2, 2);
  expected << 1, 0, 0, 2.5;
  EXPECT_EQ(dense_of(text), expected);
  EXPECT_EQ(dense_of("%%MatrixMarket matrix array real general\n1 2\n3\n4"), (Eigen::MatrixXd(1, 2) << 3, 4).finished());
}

TEST(MatrixIoRead, NegativeZero) {
  // Array values are assigned, so -0 keeps its sign; coordinate values are summed into a zero matrix
  // (duplicates), so a lone -0 reads as +0 in a dense result but stays -0 as a stored sparse entry.
  EXPECT_TRUE(std::signbit(dense_of("%%MatrixMarket matrix array real general\n1 1\n-0\n")(0, 0)));
  const std::string coordinate = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 -0.0\n";
  EXPECT_FALSE(std::signbit(dense_of(coordinate)(0, 0)));
  EXPECT_TRUE(std::signbit(mio::parse_sparse<double>(coordinate, "z.mtx").valuePtr()[0]));
}

TEST(MatrixIoRead, ArrayIsColumnMajor) {
  Eigen::MatrixXd expected(2, 3);
  expected << 1, 3, 5, 2, 4, 6;
  EXPECT_EQ(dense_of("%%MatrixMarket matrix array integer general\n2 3\n1\n2\n3\n4\n5\n6\n"), expected);
}

TEST(MatrixIoRead, NumberEdgeCases) {
  const std::string text =
      "%%MatrixMarket matrix array real general\n8 1\n1e-400\n-1e-400\n4.9e-324\n1.7976931348623157e308\n"
      "0x10\n"
      "-0\n"
      "123456789012345678901234567890\n"
      "0.1\n";
  // "0x10" is not a decimal number: replace it and check the others first.
  std::string decimal = text;
  decimal.replace(decimal.find("0x10"), 4, "16.");
  const Eigen::MatrixXd m = dense_of(decimal);
  EXPECT_EQ(m(0, 0), 0.0);  // underflow rounds to zero
  EXPECT_FALSE(std::signbit(m(0, 0)));
  EXPECT_EQ(m(1, 0), 0.0);
  EXPECT_TRUE(std::signbit(m(1, 0)));
  EXPECT_EQ(m(2, 0), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(m(3, 0), std::numeric_limits<double>::max());
  EXPECT_EQ(m(4, 0), 16.0);
  EXPECT_TRUE(std::signbit(m(5, 0)));
  EXPECT_EQ(m(6, 0), 123456789012345678901234567890.0);
  EXPECT_EQ(m(7, 0), 0.1);
  // Float reads round the decimal once, directly to float.
  const Eigen::MatrixXf f = mio::parse_dense<float>(decimal.replace(decimal.find("1.7976931348623157e308"), 22, "3.4028234e38"),
                                                    "test.mtx");
  EXPECT_EQ(f(7, 0), 0.1f);
  EXPECT_EQ(f(2, 0), 0.0f);  // 4.9e-324 underflows float
  EXPECT_EQ(f(3, 0), std::numeric_limits<float>::max());
  EXPECT_THROW(dense_of(text), mio::MatrixMarketError);  // hexadecimal is not Matrix Market
}

TEST(MatrixIoRead, NonFiniteValuesOnlyWhenAllowed) {
  const std::string text = "%%MatrixMarket matrix array real general\n3 1\nnan\ninf\n-Infinity\n";
  EXPECT_THROW(dense_of(text), mio::MatrixMarketError);
  mio::ReadOptions options;
  options.allow_non_finite = true;
  const Eigen::MatrixXd m = dense_of(text, options);
  EXPECT_TRUE(std::isnan(m(0, 0)));
  EXPECT_EQ(m(1, 0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(m(2, 0), -std::numeric_limits<double>::infinity());
}

TEST(MatrixIoRead, IntegerFieldKeepsAll64BitValuesInDouble) {
  const std::string text =
      "%%MatrixMarket matrix array integer general\n3 1\n9223372036854775807\n-9223372036854775808\n+12\n";
  const Eigen::MatrixXd m = dense_of(text);
  EXPECT_EQ(m(0, 0), 9223372036854775807.0);
  EXPECT_EQ(m(1, 0), -9223372036854775808.0);
  EXPECT_EQ(m(2, 0), 12.0);
}

TEST(MatrixIoRead, EmptyMatrices) {
  EXPECT_EQ(dense_of("%%MatrixMarket matrix coordinate real general\n0 0 0\n").size(), 0);
  EXPECT_EQ(dense_of("%%MatrixMarket matrix array real general\n0 3\n").cols(), 3);
  EXPECT_EQ(mio::parse_sparse<double>("%%MatrixMarket matrix coordinate pattern symmetric\n5 5 0\n", "e").rows(), 5);
  EXPECT_EQ(dense_of("%%MatrixMarket matrix array real skew-symmetric\n1 1\n"), Eigen::MatrixXd::Zero(1, 1));
}

TEST(MatrixIoRead, SixtyFourBitDimensions) {
  // 3e9 rows cannot be indexed by int: the int64 sparse type reads it (column pointers are per
  // column, so no memory depends on the row count); a dense result is refused by the memory limit.
  const std::string text = "%%MatrixMarket matrix coordinate real general\n3000000000 2 2\n3000000000 2 1.5\n1 1 2\n";
  const auto m = mio::parse_sparse<double, std::int64_t>(text, "big.mtx");
  EXPECT_EQ(m.rows(), 3000000000LL);
  EXPECT_EQ(m.coeff(2999999999LL, 1), 1.5);
  EXPECT_EQ(m.coeff(0, 0), 2.0);
  EXPECT_EQ(mio::parse_header(text, "big.mtx").rows, 3000000000LL);
  const auto any = mio::parse_matrix<double, std::int64_t>(text, "big.mtx");
  EXPECT_FALSE(any.is_dense());
  // Huge but sparse is fine with int too when it fits: a million columns cost 4 MB of pointers.
  const auto wide = mio::parse_sparse<double>(
      "%%MatrixMarket matrix coordinate real general\n1000000 1000000 1\n1000000 1000000 -1\n", "wide.mtx");
  EXPECT_EQ(wide.coeff(999999, 999999), -1.0);
}

TEST(MatrixIoRead, DensityRuleChoosesTheRepresentation) {
  // 4 x 4 = 16 cells; threshold 0.25 means 4 stored entries make it dense.
  const std::string three = "%%MatrixMarket matrix coordinate real general\n4 4 3\n1 1 1\n2 2 1\n3 3 1\n";
  const std::string four = "%%MatrixMarket matrix coordinate real general\n4 4 4\n1 1 1\n2 2 1\n3 3 1\n4 4 1\n";
  // Two file entries, four stored entries after symmetric expansion.
  const std::string mirrored = "%%MatrixMarket matrix coordinate real symmetric\n4 4 2\n2 1 1\n4 3 1\n";
  // Duplicates count once.
  const std::string duplicates = "%%MatrixMarket matrix coordinate real general\n4 4 4\n1 1 1\n1 1 1\n2 2 1\n3 3 1\n";
  EXPECT_FALSE((mio::parse_matrix<double>(three, "t").is_dense()));
  EXPECT_TRUE((mio::parse_matrix<double>(four, "t").is_dense()));
  EXPECT_TRUE((mio::parse_matrix<double>(mirrored, "t").is_dense()));
  EXPECT_FALSE((mio::parse_matrix<double>(duplicates, "t").is_dense()));
  mio::ReadOptions options;
  options.dense_threshold = 0.1;
  EXPECT_TRUE((mio::parse_matrix<double>(three, "t", options).is_dense()));
  options.dense_threshold = 0.25;
  options.max_result_bytes = 16 * sizeof(double) - 1;  // dense would not fit: stays sparse
  EXPECT_FALSE((mio::parse_matrix<double>(four, "t", options).is_dense()));
  // Array files are dense whatever their zeros.
  EXPECT_TRUE((mio::parse_matrix<float>("%%MatrixMarket matrix array real general\n2 1\n0\n0\n", "t").is_dense()));
  EXPECT_EQ((mio::parse_matrix<double>(four, "t").dense()), Eigen::MatrixXd::Identity(4, 4));
}

TEST(MatrixIoRead, FilesLargerThanOneBlockReadLikeMemory) {
  // Several 1 MiB blocks, lines crossing block boundaries, a comment line longer than a block (the
  // buffer grows), unsorted rows and duplicates; the file path and the in-memory path must agree.
  std::mt19937_64 engine(7);
  const int n = 3000, entries = 200000;
  std::ostringstream text;
  text << "%%MatrixMarket matrix coordinate real general\n%" << std::string(3 << 20, 'x') << "\n"
       << n << ' ' << n << ' ' << entries << '\n';
  text.precision(17);
  for (int e = 0; e < entries; ++e)
    text << engine() % n + 1 << ' ' << engine() % n + 1 << ' ' << static_cast<double>(engine() >> 11) * 0x1p-53 << '\n';
  const auto dir = scratch_dir();
  write_text(dir / "large.mtx", text.str());
  const auto from_file = mio::read_sparse<double>(dir / "large.mtx");
  const auto from_memory = mio::parse_sparse<double>(text.str(), "large.mtx");
  ASSERT_EQ(from_file.nonZeros(), from_memory.nonZeros());
  EXPECT_TRUE(from_file.isApprox(from_memory, 0.0));
  EXPECT_EQ(Eigen::MatrixXd(from_file), mio::read_dense<double>(dir / "large.mtx"));
  EXPECT_EQ(mio::read_header(dir / "large.mtx").stored_entries, entries);
  std::filesystem::remove_all(dir);
}

TEST(MatrixIoRead, ReadsFromAPipe) {
  const auto dir = scratch_dir();
  const auto fifo = dir / "pipe.mtx";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { write_text(fifo, "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 9\n"); });
  const auto m = mio::read_sparse<double>(fifo);
  writer.join();
  EXPECT_EQ(m.coeff(1, 0), 9.0);
  std::filesystem::remove_all(dir);
}
