// Writing: exact round trips for every writable combination, header comments, atomic replacement,
// and the writer's errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "matrix_io/read.hpp"
#include "matrix_io/write.hpp"

namespace mio = pagh::matrix_io;
namespace fs = std::filesystem;

namespace {

class MatrixIoWrite : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("matrix_io_write_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Files in the directory other than the ones named: leftovers of a write (temporary files).
  std::vector<std::string> leftovers(const std::vector<std::string>& expected) const {
    std::vector<std::string> extra;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      const std::string name = entry.path().filename().string();
      if (std::find(expected.begin(), expected.end(), name) == expected.end()) extra.push_back(name);
    }
    return extra;
  }

  static std::string contents(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  fs::path dir_;
};

// Values chosen to stress shortest round-trip printing: random doubles over many magnitudes,
// subnormals, extremes, negative zero.
Eigen::MatrixXd awkward_matrix(int rows, int cols, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  Eigen::MatrixXd m(rows, cols);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) {
      const double mantissa = static_cast<double>(engine() >> 11) * 0x1p-53 - 0.5;
      m(i, j) = std::ldexp(mantissa, static_cast<int>(engine() % 2000) - 1000);
    }
  m(0, 0) = std::numeric_limits<double>::denorm_min();
  m(1, 0) = -std::numeric_limits<double>::max();
  m(0, 1) = -0.0;
  m(1, 1) = 0.1;
  return m;
}

bool bitwise_equal(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

}  // namespace

TEST_F(MatrixIoWrite, DenseRealRoundTripIsBitExact) {
  const Eigen::MatrixXd m = awkward_matrix(7, 5, 1);
  mio::write_matrix_market(dir_ / "d.mtx", m);
  EXPECT_TRUE(bitwise_equal(mio::read_dense<double>(dir_ / "d.mtx"), m));
  const mio::Header header = mio::read_header(dir_ / "d.mtx");
  EXPECT_EQ(header.format, mio::Format::array);
  EXPECT_EQ(header.field, mio::Field::real);
  EXPECT_EQ(header.symmetry, mio::Symmetry::general);
  // Blocks and expressions are accepted (Eigen::Ref): the top-left 3 x 2 block.
  mio::write_matrix_market(dir_ / "block.mtx", m.topLeftCorner(3, 2));
  EXPECT_TRUE(bitwise_equal(mio::read_dense<double>(dir_ / "block.mtx"), m.topLeftCorner(3, 2)));
  EXPECT_TRUE(leftovers({"d.mtx", "block.mtx"}).empty());
}

TEST_F(MatrixIoWrite, FloatRoundTripIsExactInFloat) {
  Eigen::MatrixXf m = awkward_matrix(6, 4, 2).cast<float>();  // overflows to +-inf, underflows to 0
  m = m.unaryExpr([](float v) { return std::isfinite(v) ? v : std::copysign(std::numeric_limits<float>::max(), v); });
  m(0, 0) = std::numeric_limits<float>::denorm_min();
  mio::write_matrix_market(dir_ / "f.mtx", m);
  EXPECT_EQ(mio::read_dense<float>(dir_ / "f.mtx"), m);
  Eigen::SparseMatrix<float> s = m.sparseView();
  mio::write_matrix_market(dir_ / "fs.mtx", s);
  const auto back = mio::read_sparse<float>(dir_ / "fs.mtx");
  EXPECT_EQ(back.nonZeros(), s.nonZeros());
  EXPECT_EQ(Eigen::MatrixXf(back), m);
}

TEST_F(MatrixIoWrite, SparseRoundTripKeepsStructureAndValues) {
  Eigen::MatrixXd dense = awkward_matrix(9, 6, 3);
  for (int i = 0; i < dense.size(); i += 2) dense.data()[i] = 0;
  Eigen::SparseMatrix<double> s = dense.sparseView();
  s.coeffRef(2, 2) = 0.0;  // an explicit zero stays a stored entry
  s.makeCompressed();
  mio::write_matrix_market(dir_ / "s.mtx", s);
  const auto back = mio::read_sparse<double>(dir_ / "s.mtx");
  ASSERT_EQ(back.nonZeros(), s.nonZeros());
  for (int k = 0; k < s.nonZeros(); ++k) {
    EXPECT_EQ(back.innerIndexPtr()[k], s.innerIndexPtr()[k]);
    EXPECT_EQ(std::memcmp(&back.valuePtr()[k], &s.valuePtr()[k], sizeof(double)), 0);
  }
  // 64-bit indices and an uncompressed matrix write the same text.
  Eigen::SparseMatrix<double, Eigen::ColMajor, std::int64_t> wide = s;
  mio::write_matrix_market(dir_ / "wide.mtx", wide);
  Eigen::SparseMatrix<double> uncompressed = s;
  uncompressed.coeffRef(8, 5) += 0;  // insertion leaves it uncompressed
  uncompressed.prune([](Eigen::Index, Eigen::Index, double) { return true; });
  uncompressed.reserve(Eigen::VectorXi::Constant(6, 2));
  ASSERT_FALSE(uncompressed.isCompressed());
  mio::write_matrix_market(dir_ / "uncompressed.mtx", uncompressed);
  const std::string text = contents(dir_ / "s.mtx");
  EXPECT_EQ(contents(dir_ / "wide.mtx"), text);
  EXPECT_EQ(mio::read_sparse<double>(dir_ / "uncompressed.mtx").nonZeros(), uncompressed.nonZeros());
}

TEST_F(MatrixIoWrite, IntegerFieldWritesWholeNumbers) {
  Eigen::MatrixXd m(2, 2);
  m << 1, -9007199254740992.0, 0, 42;
  mio::WriteOptions options;
  options.field = mio::Field::integer;
  mio::write_matrix_market(dir_ / "i.mtx", m, options);
  EXPECT_EQ(mio::read_header(dir_ / "i.mtx").field, mio::Field::integer);
  EXPECT_NE(contents(dir_ / "i.mtx").find("\n-9007199254740992\n"), std::string::npos);
  EXPECT_EQ(mio::read_dense<double>(dir_ / "i.mtx"), m);
  Eigen::SparseMatrix<double> s = m.sparseView();
  mio::write_matrix_market(dir_ / "is.mtx", s, options);
  EXPECT_EQ(Eigen::MatrixXd(mio::read_sparse<double>(dir_ / "is.mtx")), m);
}

TEST_F(MatrixIoWrite, SymmetricAndSkewWriteOneTriangle) {
  Eigen::MatrixXd a = awkward_matrix(5, 5, 4);
  const Eigen::MatrixXd symmetric = a + a.transpose();
  Eigen::MatrixXd skew = a - a.transpose();
  mio::WriteOptions options;
  for (const auto symmetry : {mio::Symmetry::symmetric, mio::Symmetry::skew_symmetric}) {
    options.symmetry = symmetry;
    const Eigen::MatrixXd& m = symmetry == mio::Symmetry::symmetric ? symmetric : skew;
    mio::write_matrix_market(dir_ / "d.mtx", m, options);
    const mio::Header dense_header = mio::read_header(dir_ / "d.mtx");
    EXPECT_EQ(dense_header.symmetry, symmetry);
    EXPECT_EQ(dense_header.stored_entries, symmetry == mio::Symmetry::symmetric ? 15 : 10);
    EXPECT_TRUE(bitwise_equal(mio::read_dense<double>(dir_ / "d.mtx"), m));
    Eigen::SparseMatrix<double> s = m.sparseView();
    mio::write_matrix_market(dir_ / "s.mtx", s, options);
    EXPECT_EQ(mio::read_header(dir_ / "s.mtx").stored_entries, symmetry == mio::Symmetry::symmetric ? 15 : 10);
    EXPECT_EQ(Eigen::MatrixXd(mio::read_sparse<double>(dir_ / "s.mtx")), m);
  }
  // Not symmetric: refused, nothing written.
  options.symmetry = mio::Symmetry::symmetric;
  EXPECT_THROW(mio::write_matrix_market(dir_ / "no.mtx", a, options), mio::MatrixMarketError);
  Eigen::SparseMatrix<double> sparse_a = a.sparseView();
  EXPECT_THROW(mio::write_matrix_market(dir_ / "no.mtx", sparse_a, options), mio::MatrixMarketError);
  options.symmetry = mio::Symmetry::skew_symmetric;
  EXPECT_THROW(mio::write_matrix_market(dir_ / "no.mtx", symmetric, options), mio::MatrixMarketError);
  EXPECT_FALSE(fs::exists(dir_ / "no.mtx"));
  EXPECT_TRUE(leftovers({"d.mtx", "s.mtx"}).empty());
}

TEST_F(MatrixIoWrite, PatternWritesIndicesOnly) {
  Eigen::SparseMatrix<double> s(3, 3);
  s.insert(0, 0) = 5;
  s.insert(2, 1) = -2;
  mio::WriteOptions options;
  options.field = mio::Field::pattern;
  mio::write_matrix_market(dir_ / "p.mtx", s, options);
  EXPECT_EQ(contents(dir_ / "p.mtx"),
            "%%MatrixMarket matrix coordinate pattern general\n% generated by pagh " +
                std::string(mio::library_version()) + "\n3 3 2\n1 1\n3 2\n");
  EXPECT_THROW(mio::write_matrix_market(dir_ / "dense.mtx", Eigen::MatrixXd(s), options), mio::MatrixMarketError);
}

TEST_F(MatrixIoWrite, HeaderCommentsExactly) {
  mio::WriteOptions options;
  options.comments = {"seed: 7", "two\nlines", ""};
  std::ostringstream out;
  const std::vector<mio::Entry> entries = {{0, 1, 2.5}, {2, 0, -1}};
  mio::write_matrix_market(out, 3, 2, entries, options);
  EXPECT_EQ(out.str(), "%%MatrixMarket matrix coordinate real general\n% generated by pagh " +
                           std::string(mio::library_version()) +
                           "\n% seed: 7\n% two\n% lines\n%\n3 2 2\n1 2 2.5\n3 1 -1\n");
}

TEST_F(MatrixIoWrite, EntryListsKeepOrderAndDuplicates) {
  const std::vector<mio::Entry> entries = {{4, 4, 1.5}, {0, 0, 2}, {4, 4, 1.5}};
  mio::write_matrix_market(dir_ / "top.mtx", 5, 5, entries);
  const auto m = mio::read_sparse<double>(dir_ / "top.mtx");
  EXPECT_EQ(m.nonZeros(), 2);
  EXPECT_EQ(m.coeff(4, 4), 3.0);
  EXPECT_EQ(mio::read_header(dir_ / "top.mtx").stored_entries, 3);
  const std::vector<mio::Entry> outside = {{5, 0, 1}};
  EXPECT_THROW(mio::write_matrix_market(dir_ / "bad.mtx", 5, 5, outside), mio::MatrixMarketError);
  mio::WriteOptions symmetric;
  symmetric.symmetry = mio::Symmetry::symmetric;
  EXPECT_THROW(mio::write_matrix_market(dir_ / "bad.mtx", 5, 5, entries, symmetric), mio::MatrixMarketError);
  EXPECT_FALSE(fs::exists(dir_ / "bad.mtx"));
}

TEST_F(MatrixIoWrite, NonFiniteValuesNeedPermission) {
  Eigen::MatrixXd m(1, 3);
  m << std::nan(""), std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity();
  EXPECT_THROW(mio::write_matrix_market(dir_ / "n.mtx", m), mio::MatrixMarketError);
  EXPECT_FALSE(fs::exists(dir_ / "n.mtx"));
  mio::WriteOptions options;
  options.allow_non_finite = true;
  mio::write_matrix_market(dir_ / "n.mtx", m, options);
  mio::ReadOptions read;
  read.allow_non_finite = true;
  const Eigen::MatrixXd back = mio::read_dense<double>(dir_ / "n.mtx", read);
  EXPECT_TRUE(std::isnan(back(0, 0)));
  EXPECT_EQ(back(0, 1), m(0, 1));
  EXPECT_EQ(back(0, 2), m(0, 2));
  EXPECT_THROW(mio::read_dense<double>(dir_ / "n.mtx"), mio::MatrixMarketError);
}

TEST_F(MatrixIoWrite, FailureLeavesTheTargetUntouchedAndNoTemporaryFile) {
  // A write that fails half-way (the integer check trips on the last value) must not touch an
  // existing target nor leave its temporary file behind.
  const Eigen::MatrixXd original = Eigen::MatrixXd::Constant(2, 2, 3.0);
  mio::write_matrix_market(dir_ / "target.mtx", original);
  const std::string before = contents(dir_ / "target.mtx");
  Eigen::MatrixXd big = Eigen::MatrixXd::Ones(1000, 200);  // several flushes of the write buffer
  big(999, 199) = 0.5;
  mio::WriteOptions integer;
  integer.field = mio::Field::integer;
  try {
    mio::write_matrix_market(dir_ / "target.mtx", big, integer);
    ADD_FAILURE() << "no error thrown";
  } catch (const mio::MatrixMarketError& e) {
    EXPECT_EQ(e.file(), (dir_ / "target.mtx").string());
    EXPECT_EQ(e.line(), 0);
    EXPECT_NE(e.reason().find("entry (1000, 200) = 0.5 is not a whole number"), std::string::npos) << e.reason();
  }
  EXPECT_EQ(contents(dir_ / "target.mtx"), before);
  EXPECT_TRUE(leftovers({"target.mtx"}).empty());
  // A successful write replaces the target.
  mio::write_matrix_market(dir_ / "target.mtx", big);
  EXPECT_EQ(mio::read_dense<double>(dir_ / "target.mtx"), big);
  EXPECT_TRUE(leftovers({"target.mtx"}).empty());
}

TEST_F(MatrixIoWrite, UnwritablePlaces) {
  const Eigen::MatrixXd m = Eigen::MatrixXd::Ones(2, 2);
  try {
    mio::write_matrix_market(dir_ / "no_such_dir" / "m.mtx", m);
    ADD_FAILURE() << "no error thrown";
  } catch (const mio::MatrixMarketError& e) {
    EXPECT_EQ(e.line(), 0);
    EXPECT_NE(e.reason().find("no_such_dir does not exist"), std::string::npos) << e.reason();
  }
  fs::create_directories(dir_ / "a_directory");
  EXPECT_THROW(mio::write_matrix_market(dir_ / "a_directory", m), mio::MatrixMarketError);
  EXPECT_TRUE(fs::is_directory(dir_ / "a_directory"));
  EXPECT_TRUE(leftovers({"a_directory"}).empty());
  std::ostringstream failed;
  failed.setstate(std::ios::badbit);
  EXPECT_THROW(mio::write_matrix_market(failed, m), mio::MatrixMarketError);
}
