// Every error the reader reports: its type, file name, line number and reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "matrix_io/read.hpp"

namespace mio = pagh::matrix_io;

namespace {

struct BadInput {
  const char* label;
  std::string text;
  std::int64_t line;   // expected line number
  std::string reason;  // expected to appear in the reason
};

// Runs every reader on the text and checks each throws the expected error.
void expect_error(const BadInput& bad, const mio::ReadOptions& options = {}) {
  SCOPED_TRACE(std::string(bad.label) + "\n" + bad.text);
  const auto check = [&](auto&& read) {
    try {
      read();
      ADD_FAILURE() << "no error thrown";
    } catch (const mio::MatrixMarketError& e) {
      EXPECT_EQ(e.file(), "bad.mtx");
      EXPECT_EQ(e.line(), bad.line) << e.what();
      EXPECT_NE(e.reason().find(bad.reason), std::string::npos) << "reason: " << e.reason();
      EXPECT_EQ(std::string(e.what()), "bad.mtx:" + std::to_string(bad.line) + ": " + e.reason());
    }
  };
  check([&] { mio::parse_sparse<double>(bad.text, "bad.mtx", options); });
  check([&] { mio::parse_sparse<float, std::int64_t>(bad.text, "bad.mtx", options); });
  check([&] { mio::parse_dense<double>(bad.text, "bad.mtx", options); });
  check([&] { mio::parse_matrix<double>(bad.text, "bad.mtx", options); });
}

const std::string coordinate_real = "%%MatrixMarket matrix coordinate real general\n";

}  // namespace

TEST(MatrixIoReadErrors, MissingOrGarbledBanner) {
  const std::vector<BadInput> cases = {
      {"empty", "", 1, "missing the banner"},
      {"no banner", "3 3 1\n1 1 1\n", 1, "missing Matrix Market banner"},
      {"one percent", "%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n", 1, "missing Matrix Market banner"},
      {"indented", " %%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n", 1, "missing Matrix Market banner"},
      {"glued", "%%MatrixMarketmatrix coordinate real general\n1 1 1\n1 1 1\n", 1, "missing Matrix Market banner"},
      {"incomplete", "%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n", 1, "incomplete banner"},
      {"extra word", "%%MatrixMarket matrix coordinate real general yes\n1 1 1\n1 1 1\n", 1, "unexpected 'yes'"},
      {"vector", "%%MatrixMarket vector coordinate real general\n1 1 1\n1 1 1\n", 1, "unsupported object 'vector'"},
      {"format", "%%MatrixMarket matrix sparse real general\n1 1 1\n1 1 1\n", 1, "unknown format 'sparse'"},
      {"field", "%%MatrixMarket matrix coordinate double general\n1 1 1\n1 1 1\n", 1, "unknown field 'double'"},
      {"symmetry", "%%MatrixMarket matrix coordinate real upper\n1 1 1\n1 1 1\n", 1, "unknown symmetry 'upper'"},
      {"complex", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 1, "complex matrices are not supported"},
      {"hermitian", "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", 1, "hermitian matrices are not supported"},
      {"array pattern", "%%MatrixMarket matrix array pattern general\n1 1\n1\n", 1, "only allowed with the coordinate format"},
      {"pattern skew", "%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 1\n2 1\n", 1, "cannot be skew-symmetric"},
  };
  for (const auto& bad : cases) expect_error(bad);
}

TEST(MatrixIoReadErrors, BadSizeLine) {
  const std::vector<BadInput> cases = {
      {"no size line", coordinate_real + "% only a comment\n\n", 3, "ends before the size line"},
      {"two numbers", coordinate_real + "%c\n3 3\n", 3, "expected 'rows columns entries', found 2 tokens"},
      {"four numbers", coordinate_real + "3 3 1 1\n1 1 1\n", 2, "found 4 tokens"},
      {"array three numbers", "%%MatrixMarket matrix array real general\n1 1 1\n1\n", 2, "expected 'rows columns'"},
      {"not a number", coordinate_real + "3 x 1\n1 1 1\n", 2, "column count 'x' is not an integer"},
      {"fraction", coordinate_real + "3.0 3 1\n1 1 1\n", 2, "row count '3.0' is not an integer"},
      {"negative", coordinate_real + "3 3 -1\n", 2, "entry count '-1' is out of range"},
      {"too large", coordinate_real + "99999999999999999999 3 1\n1 1 1\n", 2, "row count '99999999999999999999' is out of range"},
      {"symmetric not square", "%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n1 1 1\n", 2, "must be square, found 3 x 4"},
  };
  for (const auto& bad : cases) expect_error(bad);
}

TEST(MatrixIoReadErrors, LyingHeadersAreRefusedBeforeAllocating) {
  const std::vector<BadInput> cases = {
      // 10^12 array entries cannot be in a 30-byte remainder.
      {"array", "%%MatrixMarket matrix array real general\n1000000 1000000\n1\n2\n3\n", 2,
       "declares 1000000000000 entries, but the 6 bytes after it can hold at most 3"},
      {"array symmetric", "%%MatrixMarket matrix array real symmetric\n4 4\n1\n2\n3\n4\n5\n6\n7\n8\n9\n", 2,
       "declares 10 entries, but the 18 bytes after it can hold at most 9"},
      {"array overflow", "%%MatrixMarket matrix array real general\n9000000000000000000 9000000000000000000\n", 2,
       "more entries than any file can hold"},
      {"coordinate", coordinate_real + "5 5 4\n1 1 1\n2 2 2\n3 3 3\n", 2, "declares 4 entries, but the 18 bytes after it can hold at most 3"},
      {"pattern", "%%MatrixMarket matrix coordinate pattern general\n5 5 4\n1 1\n2 2\n3 3\n", 2, "can hold at most 3"},
  };
  for (const auto& bad : cases) expect_error(bad);
  // The shortest possible lines fit exactly (last line without '\n').
  EXPECT_NO_THROW(mio::parse_sparse<double>(coordinate_real + "1 1 2\n1 1 1\n1 1 1", "ok.mtx"));
}

TEST(MatrixIoReadErrors, ResultsBeyondTheMemoryLimitAreRefusedAtTheSizeLine) {
  // An honest coordinate file with huge dimensions: fine as sparse (int64 pointers for 10 columns),
  // refused as dense before allocating.
  const std::string huge = coordinate_real + "1000000000000 10 1\n1 1 1\n";
  EXPECT_NO_THROW((mio::parse_sparse<double, std::int64_t>(huge, "bad.mtx")));
  try {
    mio::parse_dense<double>(huge, "bad.mtx");
    ADD_FAILURE() << "no error thrown";
  } catch (const mio::MatrixMarketError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(e.reason().find("needs 80000000000000 bytes, more than ReadOptions::max_result_bytes"), std::string::npos)
        << e.reason();
  }
  // Columns cost pointers: 10^9 columns need 4 GB of int pointers, over a 1 MiB limit.
  mio::ReadOptions small;
  small.max_result_bytes = 1 << 20;
  expect_error({"sparse pointers", coordinate_real + "1 1000000000 1\n1 1 1\n", 2, "more than ReadOptions::max_result_bytes"},
               small);
  // Dimensions beyond int: a clear pointer to the 64-bit index type.
  try {
    mio::parse_sparse<double>(coordinate_real + "3000000000 1 1\n1 1 1\n", "bad.mtx");
    ADD_FAILURE() << "no error thrown";
  } catch (const mio::MatrixMarketError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(e.reason().find("read with StorageIndex = std::int64_t"), std::string::npos) << e.reason();
  }
  // Symmetric expansion can make the result exceed the limit only once the entries are read (the
  // size line gives a lower bound): reported without a line.
  small.max_result_bytes = 3 * 4 + 3 * (4 + 8);  // 3 pointers; 2 file entries -> 3 stored
  EXPECT_NO_THROW(mio::parse_sparse<double>("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1\n1 1 1\n", "ok.mtx", small));
  small.max_result_bytes -= 1;
  try {
    mio::parse_sparse<double>("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1\n1 1 1\n", "bad.mtx", small);
    ADD_FAILURE() << "no error thrown";
  } catch (const mio::MatrixMarketError& e) {
    EXPECT_EQ(e.line(), 0);
    EXPECT_NE(e.reason().find("3 stored entries needs 48 bytes"), std::string::npos) << e.reason();
  }
}

TEST(MatrixIoReadErrors, WrongNumberOfEntries) {
  const std::vector<BadInput> cases = {
      // Comments pad these inputs: without them the size line check (too short for the count) fires first.
      {"too few", coordinate_real + "3 3 3\n1 1 1\n2 2 2\n% padding comment\n", 5,
       "expected 3 entries after the size line, found 2 before the end of the input"},
      {"too few, no final newline", coordinate_real + "3 3 3\n1 1 1\n%%%%%\n2 2 2", 5, "found 2"},
      {"too few array", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n\n", 6, "expected 4 entries"},
      {"too many", coordinate_real + "3 3 1\n1 1 1\n% fine\n2 2 2\n", 5, "more entries than the 1 declared"},
      {"too many array", "%%MatrixMarket matrix array real general\n1 2\n1\n2\n3\n", 5, "more entries than the 2 declared"},
  };
  for (const auto& bad : cases) expect_error(bad);
}

TEST(MatrixIoReadErrors, BadEntryLines) {
  const std::string head = coordinate_real + "3 4 1\n";
  const std::string integer_head = "%%MatrixMarket matrix coordinate integer general\n3 4 1\n";
  const std::vector<BadInput> cases = {
      {"row zero", head + "0 1 1\n", 3, "row index 0 is out of range 1..3"},
      {"row too big", head + "4 1 1\n", 3, "row index 4 is out of range 1..3"},
      {"column too big", head + "1 5 1\n", 3, "column index 5 is out of range 1..4"},
      {"negative", head + "1 -2 1\n", 3, "column index -2 is out of range"},
      {"huge index", head + "123456789012345678901 1 1\n", 3, "row index '123456789012345678901' is out of range"},
      {"index not integer", head + "1.0 1 1\n", 3, "row index '1.0' is not an integer"},
      {"index garbage", head + "1 b 1\n", 3, "column index 'b' is not an integer"},
      {"value garbage", head + "1 1 abc\n", 3, "value 'abc' is not a number"},
      {"value suffix", head + "1 1 1.5x\n", 3, "value '1.5x' is not a number"},
      {"comma", head + "1,1 1\n", 3, "row index '1,1' is not an integer"},
      {"missing value", head + "1 1\n% pad\n", 3, "expected 3 tokens (row column value), found 2"},
      {"only row", head + "1\n%pad\n", 3, "found 1"},
      {"extra token", head + "1 1 1 1\n", 3, "unexpected token '1' at the end of the entry"},
      {"pattern extra", "%%MatrixMarket matrix coordinate pattern general\n3 4 1\n1 1 1\n", 3, "unexpected token '1'"},
      {"integer fraction", integer_head + "1 1 1.5\n", 3, "value '1.5' is not an integer"},
      {"integer overflow", integer_head + "1 1 9223372036854775808\n", 3, "out of the 64-bit range"},
      {"array two values", "%%MatrixMarket matrix array real general\n2 1\n1 2\n", 3, "unexpected token '2'"},
      {"overflow", head + "1 1 1e309\n", 3, "value '1e309' is out of range for "},
      {"nan", head + "1 1 nan\n", 3, "value 'nan' is not finite"},
      {"inf", head + "1 1 -inf\n", 3, "value '-inf' is not finite"},
      {"infinity array", "%%MatrixMarket matrix array real general\n1 1\nInfinity\n", 3, "not finite"},
      {"skew diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 0.5\n", 4,
       "nonzero diagonal entry (2, 2) in a skew-symmetric matrix"},
      {"later line", head.substr(0, head.size() - 2) + "3\n%\n\n1 1 1\n2 2 2\n3 3 x\n", 7, "value 'x'"},
  };
  for (const auto& bad : cases) expect_error(bad);
}

TEST(MatrixIoReadErrors, FloatRangeIsCheckedForFloatReads) {
  const std::string text = "%%MatrixMarket matrix array real general\n1 1\n1e39\n";
  EXPECT_NO_THROW(mio::parse_dense<double>(text, "ok.mtx"));
  try {
    mio::parse_dense<float>(text, "bad.mtx");
    ADD_FAILURE() << "no error thrown";
  } catch (const mio::MatrixMarketError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(e.reason().find("out of range for float"), std::string::npos);
  }
}

TEST(MatrixIoReadErrors, UnreadableFiles) {
  const auto dir = std::filesystem::temp_directory_path() / ("matrix_io_errors_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto check = [](const std::filesystem::path& path, const std::string& reason) {
    try {
      mio::read_sparse<double>(path);
      ADD_FAILURE() << "no error thrown for " << path;
    } catch (const mio::MatrixMarketError& e) {
      EXPECT_EQ(e.file(), path.string());
      EXPECT_EQ(e.line(), 0);
      EXPECT_NE(e.reason().find(reason), std::string::npos) << e.reason();
    }
    EXPECT_THROW(mio::read_header(path), pagh::Error);
  };
  check(dir / "missing.mtx", "cannot open file: No such file or directory");
  check(dir, "it is a directory");
  // Errors in a file carry its path and the line, also past the first read block.
  const auto path = dir / "late_error.mtx";
  {
    std::ofstream out(path);
    out << "%%MatrixMarket matrix array real general\n300000 1\n";
    for (int i = 0; i < 299999; ++i) out << "1.2345\n";
    out << "oops\n";
  }
  try {
    mio::read_dense<double>(path);
    ADD_FAILURE() << "no error thrown";
  } catch (const mio::MatrixMarketError& e) {
    EXPECT_EQ(std::string(e.what()), path.string() + ":300002: value 'oops' is not a number");
  }
  std::filesystem::remove_all(dir);
}

TEST(MatrixIoReadErrors, ErrorIsAPaghError) {
  try {
    mio::parse_sparse<double>("nonsense", "x.mtx");
    ADD_FAILURE();
  } catch (const pagh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("x.mtx:1: "), std::string::npos);
  }
}
