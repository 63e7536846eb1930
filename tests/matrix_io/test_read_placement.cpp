// The reader's shortcuts, checked against results worked out here entry by entry: values of a
// general array file and entries of a general coordinate file go straight into the result (with the
// gaps that comment and blank lines leave closed afterwards), and coordinate files already in column
// order are assembled without placing. Every entry order (sorted, columns in order with rows not,
// duplicates, no order), with and without comment lines, on any chunking and thread count, must give
// the matrix a front-to-back read defines: rows sorted in each column, duplicates summed in file order.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "matrix_io/read.hpp"

namespace mio = pagh::matrix_io;

namespace {

struct Entry {
  std::int64_t row, col;  // 1-based, as written
  double value;
};

// The file's text; a comment or blank line after every `noise`-th entry when noise > 0.
std::string coordinate_text(std::int64_t rows, std::int64_t cols, const std::vector<Entry>& entries, int noise) {
  std::ostringstream out;
  out.precision(17);
  out << "%%MatrixMarket matrix coordinate real general\n" << rows << " " << cols << " " << entries.size() << "\n";
  for (std::size_t k = 0; k < entries.size(); ++k) {
    out << entries[k].row << " " << entries[k].col << " " << entries[k].value << "\n";
    if (noise > 0 && k % static_cast<std::size_t>(noise) == 0) out << (k % 2 == 0 ? "% a comment\n" : "  \n");
  }
  return out.str();
}

// The compressed-column arrays a front-to-back read defines: duplicates summed in file order.
struct Expected {
  std::vector<int> outer, inner;
  std::vector<double> values;
};
Expected expected_of(std::int64_t cols, const std::vector<Entry>& entries) {
  std::map<std::pair<std::int64_t, std::int64_t>, double> sums;  // (column, row): sum so far
  for (const Entry& e : entries) {
    const auto [at, fresh] = sums.try_emplace({e.col - 1, e.row - 1}, e.value);
    if (!fresh) at->second += e.value;
  }
  Expected expected;
  expected.outer.assign(static_cast<std::size_t>(cols) + 1, 0);
  for (const auto& [key, sum] : sums) {
    ++expected.outer[static_cast<std::size_t>(key.first) + 1];
    expected.inner.push_back(static_cast<int>(key.second));
    expected.values.push_back(sum);
  }
  for (std::size_t j = 0; j < static_cast<std::size_t>(cols); ++j) expected.outer[j + 1] += expected.outer[j];
  return expected;
}

void expect_matrix(const Expected& expected, const mio::SparseMatrix<double, int>& m, const std::string& what) {
  ASSERT_TRUE(m.isCompressed()) << what;
  ASSERT_EQ(std::vector<int>(m.outerIndexPtr(), m.outerIndexPtr() + m.outerSize() + 1), expected.outer) << what;
  ASSERT_EQ(std::vector<int>(m.innerIndexPtr(), m.innerIndexPtr() + m.nonZeros()), expected.inner) << what;
  const std::vector<double> values(m.valuePtr(), m.valuePtr() + m.nonZeros());
  ASSERT_EQ(values.size(), expected.values.size()) << what;
  for (std::size_t k = 0; k < values.size(); ++k)  // bit for bit: the order of summation shows
    ASSERT_EQ(std::bit_cast<std::uint64_t>(values[k]), std::bit_cast<std::uint64_t>(expected.values[k]))
        << what << ", entry " << k;
}

enum class Order { sorted, columns_only, duplicates, none };

std::vector<Entry> entries_in(Order order, std::int64_t rows, std::int64_t cols, std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1, 1);
  std::vector<Entry> entries;
  for (std::size_t k = 0; k < count; ++k)
    entries.push_back({static_cast<std::int64_t>(rng() % rows) + 1, static_cast<std::int64_t>(rng() % cols) + 1, value(rng)});
  const auto by_column = [](const Entry& a, const Entry& b) { return a.col < b.col; };
  switch (order) {
    case Order::sorted:
      std::sort(entries.begin(), entries.end(),
                [](const Entry& a, const Entry& b) { return a.col != b.col ? a.col < b.col : a.row < b.row; });
      entries.erase(std::unique(entries.begin(), entries.end(),
                                [](const Entry& a, const Entry& b) { return a.col == b.col && a.row == b.row; }),
                    entries.end());
      break;
    case Order::columns_only: std::stable_sort(entries.begin(), entries.end(), by_column); break;
    case Order::duplicates: {
      // Every entry repeated later in its column, with another value (summation order matters).
      const std::size_t n = entries.size();
      for (std::size_t k = 0; k < n; k += 3) entries.push_back({entries[k].row, entries[k].col, value(rng) * 1e-3});
      std::stable_sort(entries.begin(), entries.end(), by_column);
      break;
    }
    case Order::none: break;
  }
  return entries;
}

}  // namespace

TEST(MatrixIoPlacement, CoordinateEntriesInEveryOrderReadAsAFrontToBackRead) {
  const char* names[] = {"sorted", "columns only", "duplicates", "none"};
  for (const Order order : {Order::sorted, Order::columns_only, Order::duplicates, Order::none}) {
    for (const auto& [rows, cols, count] : {std::tuple{40, 30, 300}, std::tuple{1000, 7, 2000}, std::tuple{5, 400, 150}}) {
      const std::vector<Entry> entries = entries_in(order, rows, cols, static_cast<std::size_t>(count), 7);
      const Expected expected = expected_of(cols, entries);
      for (const int noise : {0, 1, 17}) {
        const std::string text = coordinate_text(rows, cols, entries, noise);
        for (const std::size_t chunk_bytes : {std::size_t{0}, std::size_t{7}, std::size_t{200}})
          for (const int threads : {1, 3}) {
            mio::ReadOptions options;
            options.chunk_bytes = chunk_bytes;
            options.threads = threads;
            const std::string what = std::string(names[static_cast<int>(order)]) + ", " + std::to_string(rows) + "x" +
                                     std::to_string(cols) + ", noise " + std::to_string(noise) + ", chunk_bytes " +
                                     std::to_string(chunk_bytes) + ", threads " + std::to_string(threads);
            expect_matrix(expected, mio::parse_sparse<double, int>(text, "placement.mtx", options), what);
          }
      }
    }
  }
}

TEST(MatrixIoPlacement, MoreCommentLinesThanEntriesReadTheSame) {
  // The lines outnumber the declared entries, so the entries cannot be placed by line: the reader
  // keeps them per chunk instead.
  std::string text = "%%MatrixMarket matrix coordinate real general\n3 3 2\n";
  for (int k = 0; k < 20; ++k) text += "% comment\n";
  text += "3 2 1.5\n\n\n1 2 -2\n% end\n";
  for (const int threads : {1, 2}) {
    mio::ReadOptions options;
    options.threads = threads;
    expect_matrix({{0, 0, 2, 2}, {0, 2}, {-2, 1.5}}, mio::parse_sparse<double, int>(text, "comments.mtx", options),
                  "threads " + std::to_string(threads));
    std::string array = "%%MatrixMarket matrix array real general\n2 1\n% a\n% b\n% c\n7\n% d\n-8\n";
    const auto dense = mio::parse_dense<double>(array, "comments_array.mtx", options);
    ASSERT_EQ(dense.rows(), 2);
    EXPECT_EQ(dense(0, 0), 7);
    EXPECT_EQ(dense(1, 0), -8);
  }
}

TEST(MatrixIoPlacement, ArrayValuesWithCommentAndBlankLinesLandInColumnMajorOrder) {
  const std::int64_t rows = 37, cols = 11;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> value(-10, 10);
  mio::DenseMatrix<double> expected(rows, cols);
  for (const int noise : {0, 1, 5}) {
    std::ostringstream out;
    out.precision(17);
    out << "%%MatrixMarket matrix array real general\n% header comment\n" << rows << " " << cols << "\n";
    for (std::int64_t k = 0; k < rows * cols; ++k) {
      expected.data()[k] = value(rng);
      out << expected.data()[k] << (k % 3 == 0 ? "\r\n" : "\n");
      if (noise > 0 && k % noise == 0) out << (k % 2 == 0 ? "%% comment\n" : "\t \n");
    }
    const std::string text = out.str();
    for (const std::size_t chunk_bytes : {std::size_t{0}, std::size_t{5}, std::size_t{300}})
      for (const int threads : {1, 4}) {
        mio::ReadOptions options;
        options.chunk_bytes = chunk_bytes;
        options.threads = threads;
        const auto m = mio::parse_dense<double>(text, "array.mtx", options);
        ASSERT_EQ(m.rows(), rows);
        ASSERT_EQ(m.cols(), cols);
        for (std::int64_t k = 0; k < rows * cols; ++k)
          ASSERT_EQ(m.data()[k], expected.data()[k]) << "noise " << noise << ", chunk_bytes " << chunk_bytes << ", threads "
                                                      << threads << ", value " << k;
      }
  }
}

TEST(MatrixIoPlacement, LargeFilesWithDuplicatesReadTheSameOnAnyThreadCount) {
  // Large enough that columns are sorted and summed on all threads, and the gaps that summed
  // duplicates leave are closed in parallel: in place where they are fewer than the entries of each
  // thread's range of columns (columns only: ~1000 gaps; duplicates on 2 threads: 50000 gaps in
  // ranges of 100000), into new arrays otherwise (duplicates on 5 threads).
  for (const Order order : {Order::columns_only, Order::duplicates, Order::none}) {
    const std::vector<Entry> entries = entries_in(order, 500, 20000, 150000, 11);
    const Expected expected = expected_of(20000, entries);
    ASSERT_LT(expected.inner.size(), entries.size());  // duplicates were summed
    const std::string text = coordinate_text(500, 20000, entries, 0);
    for (const int threads : {1, 2, 5}) {
      mio::ReadOptions options;
      options.threads = threads;
      expect_matrix(expected, mio::parse_sparse<double, int>(text, "large.mtx", options),
                    std::to_string(static_cast<int>(order)) + ", threads " + std::to_string(threads));
    }
  }
}
