// What may come before the banner: a UTF-8 byte-order mark is skipped (gzip streams: test_read_gzip.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "matrix_io/read.hpp"

namespace mio = pagh::matrix_io;

namespace {

const std::string kText = "%%MatrixMarket matrix coordinate real general\n% a comment\n2 3 2\n1 1 1.5\n2 3 -4\n";

}  // namespace

TEST(MatrixIoReadPrefixes, ByteOrderMarkIsSkipped) {
  const std::string with_bom = "\xEF\xBB\xBF" + kText;
  const auto sparse = mio::parse_sparse<double>(with_bom, "bom.mtx");
  ASSERT_EQ(sparse.rows(), 2);
  ASSERT_EQ(sparse.cols(), 3);
  EXPECT_EQ(sparse.coeff(0, 0), 1.5);
  EXPECT_EQ(sparse.coeff(1, 2), -4.0);
  EXPECT_EQ(sparse.nonZeros(), 2);
  // From a file too (the file reader takes another path to the same parser), and the header alone.
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("matrix_io_bom_" + std::to_string(::getpid()) + ".mtx");
  { std::ofstream(file, std::ios::binary) << with_bom; }
  EXPECT_EQ(mio::read_header(file).cols, 3);
  EXPECT_EQ(mio::read_dense<double>(file)(1, 2), -4.0);
  std::filesystem::remove(file);
  // Only at the very start: a BOM before the size line is still an error.
  EXPECT_THROW(mio::parse_sparse<double>("%%MatrixMarket matrix coordinate real general\n\xEF\xBB\xBF" "2 3 0\n", "x"),
               mio::MatrixMarketError);
}
