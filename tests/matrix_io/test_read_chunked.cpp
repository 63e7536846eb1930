// The parallel reader cuts the body into chunks at line ends: every result and every error (message
// and line) must be that of a one-chunk, one-thread read, wherever the cuts fall and however many
// threads parse. Checked on every committed test file, on generated files with cuts everywhere
// (inside comments, blank lines, CRLF ends, extreme exponents), and on generated files with one
// fault planted at a known line, whose error must name exactly that line.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "matrix_io/read.hpp"

namespace mio = pagh::matrix_io;

namespace {

// Everything the reader says about a text: header, sparse, dense and float/int64 results (their
// bytes, so -0 and NaN payloads count), or the error of each.
template <class Matrix>
void append_bytes(std::string& out, const Matrix& m) {
  out.append(reinterpret_cast<const char*>(m.data()), static_cast<std::size_t>(m.size()) * sizeof(typename Matrix::Scalar));
}

template <class Sparse>
void append_sparse(std::string& out, const Sparse& s) {
  using Index = typename Sparse::StorageIndex;
  out += "sparse " + std::to_string(s.rows()) + "x" + std::to_string(s.cols()) + " nnz " + std::to_string(s.nonZeros()) + ":";
  out.append(reinterpret_cast<const char*>(s.outerIndexPtr()), static_cast<std::size_t>(s.outerSize() + 1) * sizeof(Index));
  out.append(reinterpret_cast<const char*>(s.innerIndexPtr()), static_cast<std::size_t>(s.nonZeros()) * sizeof(Index));
  out.append(reinterpret_cast<const char*>(s.valuePtr()),
             static_cast<std::size_t>(s.nonZeros()) * sizeof(typename Sparse::Scalar));
}

// One string per read: its result's bytes or "error <message>".
using Outcome = std::vector<std::string>;

template <class F>
void record(Outcome& outcome, F&& read) {
  std::string out;
  try {
    read(out);
  } catch (const mio::MatrixMarketError& e) {
    out = std::string("error ") + e.what();
  }
  outcome.push_back(out);
}

bool has_error(const std::string& text) { return text.starts_with("error "); }
std::string errors_of(const Outcome& outcome) {
  std::string errors;
  for (const std::string& read : outcome)
    if (has_error(read)) errors += read + "\n";
  return errors;
}

Outcome outcome(const std::string& text, mio::ReadOptions options) {
  options.max_result_bytes = std::size_t{16} << 20;  // corpus files declare huge sizes
  Outcome out;
  record(out, [&](std::string& out) {
    const mio::Header h = mio::parse_header(text, "t.mtx");
    out += "header " + std::to_string(h.rows) + " " + std::to_string(h.cols) + " " + std::to_string(h.stored_entries);
  });
  record(out, [&](std::string& out) { append_sparse(out, mio::parse_sparse<double>(text, "t.mtx", options)); });
  record(out, [&](std::string& out) { append_bytes(out, mio::parse_dense<double>(text, "t.mtx", options)); });
  record(out, [&](std::string& out) {
    const auto any = mio::parse_matrix<float, std::int64_t>(text, "t.mtx", options);
    if (any.is_dense()) append_bytes(out, any.dense());
    else append_sparse(out, any.sparse());
  });
  return out;
}

mio::ReadOptions chunked(std::size_t chunk_bytes, int threads, bool allow_non_finite = false) {
  mio::ReadOptions options;
  options.chunk_bytes = chunk_bytes;
  options.threads = threads;
  options.allow_non_finite = allow_non_finite;
  return options;
}

// One chunk on one thread: the front-to-back read the other tests check value by value.
Outcome serial_outcome(const std::string& text, bool allow_non_finite = false) {
  return outcome(text, chunked(std::size_t{1} << 40, 1, allow_non_finite));
}

void expect_chunking_changes_nothing(const std::string& text, const std::string& what, bool allow_non_finite = false) {
  const Outcome expected = serial_outcome(text, allow_non_finite);
  for (const std::size_t chunk_bytes : {1, 2, 5, 13, 64})
    for (const int threads : {1, 3})
      ASSERT_EQ(outcome(text, chunked(chunk_bytes, threads, allow_non_finite)), expected)
          << what << ", chunk_bytes " << chunk_bytes << ", threads " << threads;
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A generated Matrix Market file, line by line, with the lines that hold entries marked.
struct Generated {
  std::vector<std::string> lines;
  std::vector<std::size_t> entry_lines;  // indices into lines
  std::string newline = "\n";
  bool final_newline = true;
  mio::Format format = mio::Format::coordinate;
  mio::Field field = mio::Field::real;

  std::string text() const {
    std::string t;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      t += lines[i];
      if (i + 1 < lines.size() || final_newline) t += newline;
    }
    return t;
  }
};

std::string blanks(std::mt19937_64& rng) {
  static const char* const choices[] = {" ", " ", "\t", "  ", " \t "};
  return choices[rng() % 5];
}

// A value token, often at the edges of double and float: subnormal, rounding to zero, near the
// largest finite, signed zeros, a leading '+', no leading digit.
std::string value_token(std::mt19937_64& rng, mio::Field field) {
  if (field == mio::Field::integer) {
    static const char* const ints[] = {"0", "-7", "+12", "9007199254740993", "-9223372036854775808", "42"};
    return ints[rng() % 6];
  }
  static const char* const reals[] = {"1.5", "-2e3", ".25", "+7", "-0", "0.0", "1e-320", "4.9e-324", "1e-400",
                                      "-1e-400", "1.7976931348623157e308", "3.4e38", "1e-45", "123456789012345678901234567890",
                                      "0.1", "-3.25E+02", "5.", "2.2250738585072014e-308"};
  return reals[rng() % (sizeof reals / sizeof *reals)];
}

std::string filler_line(std::mt19937_64& rng) {
  switch (rng() % 5) {
    case 0: return "";
    case 1: return blanks(rng);
    case 2: return "% a comment with digits 1 2 3 and a % sign";
    case 3: return blanks(rng) + "%" + std::string(rng() % 40, 'x');
    default: return "%";
  }
}

Generated generate(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Generated g;
  g.format = rng() % 3 == 0 ? mio::Format::array : mio::Format::coordinate;
  static const mio::Field fields[] = {mio::Field::real, mio::Field::integer, mio::Field::pattern};
  g.field = fields[rng() % (g.format == mio::Format::array ? 2 : 3)];
  mio::Symmetry symmetry = static_cast<mio::Symmetry>(rng() % 3);
  if (g.field == mio::Field::pattern && symmetry == mio::Symmetry::skew_symmetric) symmetry = mio::Symmetry::general;
  const std::int64_t rows = 1 + static_cast<std::int64_t>(rng() % 6);
  const std::int64_t cols = symmetry == mio::Symmetry::general ? 1 + static_cast<std::int64_t>(rng() % 6) : rows;
  g.newline = rng() % 3 == 0 ? "\r\n" : "\n";
  g.final_newline = rng() % 4 != 0;
  g.lines.push_back("%%MatrixMarket matrix " + std::string(mio::to_string(g.format)) + " " +
                    std::string(mio::to_string(g.field)) + " " + std::string(mio::to_string(symmetry)));
  for (std::uint64_t i = rng() % 3; i > 0; --i) g.lines.push_back(filler_line(rng));

  std::vector<std::string> entries;
  if (g.format == mio::Format::array) {
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::int64_t first = symmetry == mio::Symmetry::general ? 0 : symmetry == mio::Symmetry::symmetric ? j : j + 1;
      for (std::int64_t i = first; i < rows; ++i) entries.push_back(blanks(rng) + value_token(rng, g.field));
    }
    g.lines.push_back(std::to_string(rows) + " " + std::to_string(cols));
  } else {
    const std::int64_t count = static_cast<std::int64_t>(rng() % 12);
    for (std::int64_t k = 0; k < count; ++k) {
      std::int64_t i = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows));
      const std::int64_t j = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(cols));
      std::string value = g.field == mio::Field::pattern ? "" : blanks(rng) + value_token(rng, g.field);
      if (symmetry == mio::Symmetry::skew_symmetric && i == j) value = " 0";  // only zero diagonals
      entries.push_back(std::to_string(i) + blanks(rng) + std::to_string(j) + value + (rng() % 4 == 0 ? blanks(rng) : ""));
    }
    g.lines.push_back(std::to_string(rows) + blanks(rng) + std::to_string(cols) + " " + std::to_string(count));
  }
  for (const std::string& entry : entries) {
    for (std::uint64_t i = rng() % 4 == 0 ? rng() % 3 : 0; i > 0; --i) g.lines.push_back(filler_line(rng));
    g.entry_lines.push_back(g.lines.size());
    g.lines.push_back(entry);
  }
  for (std::uint64_t i = rng() % 3; i > 0; --i) g.lines.push_back(filler_line(rng));
  if (g.lines.back().empty()) g.final_newline = true;  // else the empty last line would not be a line
  return g;
}

}  // namespace

TEST(MatrixIoChunked, EveryCommittedFileReadsTheSameInAnyChunks) {
  std::vector<std::filesystem::path> files;
  for (const char* dir : {MATRIX_IO_FIXTURES, MATRIX_IO_CORPUS, MATRIX_IO_DATA})
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().extension() == ".mtx") files.push_back(entry.path());
  ASSERT_GE(files.size(), 20u);
  for (const auto& file : files) {
    const std::string text = file_text(file);
    if (text.size() > (std::size_t{1} << 16)) {  // large files: fewer, larger chunks
      const Outcome expected = serial_outcome(text);
      for (const std::size_t chunk_bytes : {97, 4096})
        ASSERT_EQ(outcome(text, chunked(chunk_bytes, 2)), expected) << file;
      continue;
    }
    expect_chunking_changes_nothing(text, file.string());
  }
}

TEST(MatrixIoChunked, GeneratedFilesReadTheSameInAnyChunks) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const Generated g = generate(seed);
    const std::string text = g.text();
    // Valid for double (float may overflow): header, sparse and dense reads succeed.
    const Outcome serial = serial_outcome(text);
    ASSERT_TRUE(!has_error(serial[0]) && !has_error(serial[1]) && !has_error(serial[2]))
        << "seed " << seed << " generated a bad file:\n" << text << errors_of(serial);
    expect_chunking_changes_nothing(text, "seed " + std::to_string(seed));
  }
}

TEST(MatrixIoChunked, NonFiniteValuesAreRefusedOrKeptAlikeInAnyChunks) {
  const std::string text =
      "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1\n% nan\n2 2 nan\n\n3 3 -inf\n1 3 inf\n";
  expect_chunking_changes_nothing(text, "non-finite refused");
  EXPECT_NE(errors_of(serial_outcome(text)).find("t.mtx:5: value 'nan' is not finite"), std::string::npos)
      << errors_of(serial_outcome(text));
  expect_chunking_changes_nothing(text, "non-finite allowed", true);
}

// A fault planted at a known line: the error names exactly that line in every chunking.
TEST(MatrixIoChunked, PlantedFaultsAreReportedAtTheirLineInAnyChunks) {
  int planted = 0;
  for (std::uint64_t seed = 1000; seed < 1300; ++seed) {
    Generated g = generate(seed);
    if (g.entry_lines.empty()) continue;
    std::mt19937_64 rng(seed);
    const std::size_t victim = g.entry_lines[rng() % g.entry_lines.size()];
    std::size_t expected_line = victim + 1;  // 1-based
    std::string expected_reason;
    const bool array = g.format == mio::Format::array;
    switch (rng() % 5) {
      case 0:
        g.lines[victim] = array ? "x1" : "1 x";
        expected_reason = !array                         ? "column index 'x' is not an integer"
                          : g.field == mio::Field::integer ? "value 'x1' is not an integer"
                                                           : "value 'x1' is not a number";
        break;
      case 1:
        g.lines[victim] = array ? "1e999" : (g.field == mio::Field::pattern ? "0 1" : "0 1 1");
        expected_reason = !array                         ? "row index 0 is out of range"
                          : g.field == mio::Field::integer ? "value '1e999' is not an integer"
                                                           : "value '1e999' is out of range for double";
        break;
      case 2:
        g.lines[victim] = array ? "nan" : "1 1 nan";
        expected_reason = g.field == mio::Field::pattern   ? "unexpected token 'nan'"
                          : g.field == mio::Field::integer ? "value 'nan' is not an integer"
                                                           : "value 'nan' is not finite";
        break;
      case 3: {  // one entry line too many, just before the last: the last entry line is the extra one
        g.lines.insert(g.lines.begin() + static_cast<std::ptrdiff_t>(victim), g.lines[victim]);
        expected_line = g.entry_lines.back() + 2;
        expected_reason = "more entries than the";
        break;
      }
      default: {  // one entry line missing: the reader notices at the end of the input
        g.lines[victim] = "% removed";
        expected_line = g.lines.size();
        expected_reason = "expected ";
        break;
      }
    }
    const std::string text = g.text();
    const Outcome expected = serial_outcome(text);
    const std::string located = "t.mtx:" + std::to_string(expected_line) + ": " + expected_reason;
    ASSERT_NE(errors_of(expected).find(located), std::string::npos)
        << "seed " << seed << ": wanted '" << located << "' in\n" << errors_of(expected) << "for\n" << text;
    for (const std::size_t chunk_bytes : {1, 4, 9, 33})
      for (const int threads : {1, 3})
        ASSERT_EQ(outcome(text, chunked(chunk_bytes, threads)), expected) << "seed " << seed << ", chunk_bytes " << chunk_bytes;
    ++planted;
  }
  EXPECT_GE(planted, 250);
}

// Automatic chunking (a chunk per thread and more, at least 1 MiB each) on a file of several MiB.
TEST(MatrixIoChunked, OneThreadAndManyThreadsGiveIdenticalResults) {
  std::mt19937_64 rng(7);
  std::string text = "%%MatrixMarket matrix coordinate real general\n% large\n4000 3000 400000\n";
  for (int k = 0; k < 400000; ++k) {
    text += std::to_string(1 + rng() % 4000) + " " + std::to_string(1 + rng() % 3000) + " " +
            std::to_string(static_cast<double>(rng() >> 11) * 0x1p-53 - 0.5) + (k % 1000 == 0 ? "\r\n% c\n" : "\n");
  }
  ASSERT_GT(text.size(), std::size_t{4} << 20);
  const Outcome expected = outcome(text, chunked(0, 1));
  EXPECT_EQ(outcome(text, chunked(0, 2)), expected);
  EXPECT_EQ(outcome(text, chunked(0, 5)), expected);
  EXPECT_EQ(outcome(text, chunked(0, 0)), expected);

  // Symmetric and skew-symmetric coordinate files with duplicates: mirrored entries and summed
  // duplicates placed by several threads in parallel assembly.
  for (const std::string symmetry : {"symmetric", "skew-symmetric"}) {
    std::string mirrored = "%%MatrixMarket matrix coordinate real " + symmetry + "\n2000 2000 300000\n";
    for (int k = 0; k < 300000; ++k) {
      const std::uint64_t i = 1 + rng() % 2000, j = 1 + rng() % 2000;
      mirrored += std::to_string(i) + " " + std::to_string(i == j ? (j % 2000) + 1 : j) + " " +
                  std::to_string(static_cast<int>(rng() % 19) - 9) + ".25\n";
    }
    const Outcome expected_mirrored = outcome(mirrored, chunked(0, 1));
    ASSERT_FALSE(has_error(expected_mirrored[1])) << expected_mirrored[1];
    EXPECT_EQ(outcome(mirrored, chunked(0, 2)), expected_mirrored) << symmetry;
    EXPECT_EQ(outcome(mirrored, chunked(0, 7)), expected_mirrored) << symmetry;
  }

  std::string array = "%%MatrixMarket matrix array real symmetric\n1000 1000\n";
  for (int k = 0; k < 1000 * 1001 / 2; ++k) array += std::to_string(static_cast<int>(rng() % 2001) - 1000) + "e-3\n";
  const Outcome expected_array = outcome(array, chunked(0, 1));
  EXPECT_EQ(outcome(array, chunked(0, 3)), expected_array);
  EXPECT_EQ(outcome(array, chunked(1000, 2)), expected_array);
}
