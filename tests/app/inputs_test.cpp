// pagh-mm's inputs and outputs beyond plain Matrix Market: NumPy .npy inputs (C and Fortran order),
// --transpose-a (X^T X from one file), gzip-compressed inputs, results written as .npy, and bad
// .npy files refused with one line and status 65.
#include <zlib.h>

#include "cli_test_support.hpp"
#include "inputs.hpp"
#include "matrix_io/npy.hpp"
#include "matrix_io/read.hpp"
#include "matrix_io/write.hpp"

namespace pagh_mm_test {
namespace {

using nlohmann::json;
namespace mio = pagh::matrix_io;

// A version 1.0 .npy file as numpy.save writes it: the dictionary padded to a 64-byte boundary.
std::string npy_bytes(const std::string& dictionary, const std::string& data) {
  std::string header = dictionary;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string bytes = "\x93NUMPY\x01";
  bytes += '\0';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  return bytes + header + data;
}

// m as a C-order (row-major, NumPy's default) float64 .npy file.
void write_c_order_npy(const fs::path& path, const Eigen::MatrixXd& m) {
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row_major = m;
  std::ofstream(path, std::ios::binary) << npy_bytes(
      "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) + "), }",
      std::string(reinterpret_cast<const char*>(row_major.data()), static_cast<std::size_t>(m.size()) * sizeof(double)));
}

}  // namespace

TEST_F(Cli, NpyInputsAnswerLikeTheirMatrixMarketText) {
  const Eigen::MatrixXd a = mio::read_dense<double>(A());
  const Eigen::MatrixXd b = mio::read_dense<double>(B());
  write_c_order_npy(work("A.npy"), a);
  mio::write_npy(work("B.npy"), b);  // Fortran order
  const json plain = run_json({"-k", "5", A(), B()});
  EXPECT_EQ(run_json({"-k", "5", "A.npy", "B.npy"})["entries"], plain["entries"]);
  EXPECT_EQ(run_json({"-k", "5", "A.npy", B()})["entries"], plain["entries"]);
}

// X is samples x features; X^T X is what a covariance screen wants. --transpose-a X X reads A = X^T
// from the same file, and answers as an explicit X^T file would.
TEST_F(Cli, TransposeAScreensXTransposeXFromOneFile) {
  Eigen::MatrixXd x = mio::read_dense<double>(B());  // 96 x 80: samples x features
  write_c_order_npy(work("X.npy"), x);
  mio::write_npy(work("X_fortran.npy"), x);
  mio::write_matrix_market(work("X.mtx"), x);
  mio::write_matrix_market(work("Xt.mtx"), Eigen::MatrixXd(x.transpose()));
  const json explicit_transpose = run_json({"-k", "6", "Xt.mtx", "X.mtx"});
  ASSERT_EQ(explicit_transpose["entries"].size(), 6u);
  EXPECT_EQ(run_json({"-k", "6", "--transpose-a", "X.npy", "X.npy"})["entries"], explicit_transpose["entries"]);
  EXPECT_EQ(run_json({"-k", "6", "--transpose-a", "X_fortran.npy", "X.npy"})["entries"], explicit_transpose["entries"]);
  EXPECT_EQ(run_json({"-k", "6", "--transpose-a", "X.mtx", "X.mtx"})["entries"], explicit_transpose["entries"]);
  // Without it, X X is not defined (80 != 96): the usual refusal.
  EXPECT_EQ(run({"X.npy", "X.npy"}).status, 65);
}

TEST_F(Cli, GzipInputsAnswerLikeTheirText) {
  for (const std::string& name : {A(), B()}) {
    const std::string text = slurp(name);
    gzFile out = gzopen(work(fs::path(name).filename().string() + ".gz").c_str(), "wb");
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
    ASSERT_EQ(gzclose(out), Z_OK);
  }
  EXPECT_EQ(run_json({"-k", "5", "A.mtx.gz", "B.mtx.gz"})["entries"], run_json({"-k", "5", A(), B()})["entries"]);
}

TEST_F(Cli, ResultsAsNpy) {
  ASSERT_EQ(run({"--full", "-o", "C.mtx", "-q", A(), B()}).status, 0);
  ASSERT_EQ(run({"--full", "-o", "C.npy", "-q", A(), B()}).status, 0);
  EXPECT_EQ(mio::read_npy<double>(work("C.npy")), mio::read_dense<double>(work("C.mtx")));
  // The reported entries: (row, column, estimate), 0-based, in the report's order.
  const json report = run_json({"-k", "4", "-o", "top.NPY", A(), B()});
  const Eigen::MatrixXd top = mio::read_npy<double>(work("top.NPY"));
  ASSERT_EQ(top.rows(), 4);
  ASSERT_EQ(top.cols(), 3);
  for (Eigen::Index i = 0; i < 4; ++i) {
    const auto& e = report["entries"][static_cast<std::size_t>(i)];
    EXPECT_EQ(top(i, 0), e["row"].get<double>() - 1);
    EXPECT_EQ(top(i, 1), e["col"].get<double>() - 1);
    EXPECT_EQ(top(i, 2), e["estimate"].get<double>());
  }
}

TEST_F(Cli, BadNpyInputsAreOneLineErrors) {
  std::ofstream(work("bad.npy"), std::ios::binary) << std::string("\x93NUMPY\x01\x00\x10\x00{'descr': '<i8',", 26);
  const Result truncated = run({"bad.npy", B()});
  EXPECT_EQ(truncated.status, 65);
  expect_one_line_error(truncated, {"bad.npy: "});
  EXPECT_EQ(truncated.out, "");
  std::ofstream(work("ints.npy"), std::ios::binary)
      << npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 1), }", std::string(8, '\0'));
  const Result ints = run({"ints.npy", B()});
  EXPECT_EQ(ints.status, 65);
  expect_one_line_error(ints, {"ints.npy: dtype '<i8' is not supported"});
  EXPECT_EQ(ints.out, "");
}

// --backend auto weighs the backends on the shape the headers declare, before reading: only for
// files that are always read densely (array files, .npy), transposed by --transpose-a.
TEST_F(Cli, DeclaredDenseSizeReadsOnlyDenseHeaders) {
  EXPECT_EQ(pagh_mm::declared_dense_size(A()), std::make_pair(std::int64_t{64}, std::int64_t{96}));
  EXPECT_EQ(pagh_mm::declared_dense_size(A(), true), std::make_pair(std::int64_t{96}, std::int64_t{64}));
  write_c_order_npy(work("x.npy"), Eigen::MatrixXd::Ones(3, 5));
  EXPECT_EQ(pagh_mm::declared_dense_size(work("x.npy").string()), std::make_pair(std::int64_t{3}, std::int64_t{5}));
  std::ofstream(work("coo.mtx")) << "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.5\n";
  EXPECT_EQ(pagh_mm::declared_dense_size(work("coo.mtx").string()), std::nullopt);  // density decides
  std::ofstream(work("bad.mtx")) << "%%MatrixMarket matrix array real general\nnot a size\n";
  EXPECT_EQ(pagh_mm::declared_dense_size(work("bad.mtx").string()), std::nullopt);  // the read says why
  EXPECT_EQ(pagh_mm::declared_dense_size(work("missing.mtx").string()), std::nullopt);
  EXPECT_EQ(pagh_mm::declared_dense_size("/dev/null"), std::nullopt);  // not a regular file: never read
}

}  // namespace pagh_mm_test
