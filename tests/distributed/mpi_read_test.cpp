// pagh::mpi::read_inner_share under mpirun (np 1, 2, 3): every rank's share against matrix_io's
// whole-file read of the same files (the same entries, bit for bit, including duplicates summed and
// symmetric files expanded), the ranks' inner ranges covering every k once, the sketch of the shares
// against one process, and bad files refused on every rank with the message and line a whole-file
// read gives.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "distributed/mpi_compress.hpp"
#include "mpi_test_support.hpp"
#include "distributed/mpi_read.hpp"
#include "matrix_io/read.hpp"
#include "sketch/compress.hpp"

namespace {

namespace fs = std::filesystem;
namespace mio = pagh::matrix_io;

using pagh::test::rank_of;
using pagh::test::ranks;

// A directory every rank sees (named by rank 0's process id), made by rank 0.
const fs::path& scratch() {
  static const fs::path dir = [] {
    long long id = getpid();
    MPI_Bcast(&id, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    const fs::path d = fs::temp_directory_path() / ("pagh_mpi_read_" + std::to_string(id));
    if (rank_of() == 0) fs::create_directories(d);
    MPI_Barrier(MPI_COMM_WORLD);
    return d;
  }();
  return dir;
}

// Rank 0 writes text to a file every rank then reads.
fs::path file_with(const std::string& name, const std::string& text) {
  const fs::path path = scratch() / name;
  if (rank_of() == 0) std::ofstream(path, std::ios::binary) << text;
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

// A coordinate file of `entries` random entries (integer or two-decimal values) with comments,
// blank lines and duplicates among the entries; symmetric files list the lower triangle.
std::string coordinate(std::int64_t rows, std::int64_t cols, int entries, const std::string& field, const std::string& symmetry,
                       std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::ostringstream lines;
  int written = 0;
  for (int e = 0; e < entries; ++e) {
    std::int64_t i = static_cast<std::int64_t>(rng() % rows), j = static_cast<std::int64_t>(rng() % cols);
    if (symmetry != "general" && i < j) std::swap(i, j);
    if (symmetry == "skew-symmetric" && i == j) continue;
    if (e % 37 == 5) lines << "% a comment between entries\n";
    if (e % 53 == 7) lines << "   \n";
    lines << i + 1 << " " << j + 1;
    if (field == "integer") lines << " " << static_cast<long long>(rng() % 19) - 9;
    if (field == "real") lines << " " << static_cast<double>(static_cast<long long>(rng() % 2001) - 1000) / 100.0;
    lines << "\n";
    ++written;
  }
  return "%%MatrixMarket matrix coordinate " + field + " " + symmetry + "\n% a comment\n\n" + std::to_string(rows) + " " +
         std::to_string(cols) + " " + std::to_string(written) + "\n" + lines.str();
}

// Exactly the same entries: the share and the whole-file read's columns (A) or rows (B).
void expect_same(const Eigen::SparseMatrix<double>& got, const Eigen::SparseMatrix<double>& want, const std::string& what) {
  ASSERT_EQ(got.rows(), want.rows()) << what;
  ASSERT_EQ(got.cols(), want.cols()) << what;
  const Eigen::MatrixXd g = got, w = want;
  EXPECT_TRUE(g == w) << what << " on rank " << rank_of();
  EXPECT_EQ(got.nonZeros(), want.nonZeros()) << what << ": stored entries (explicit zeros stay stored)";
}

// A rank's byte range in pieces of ~64 bytes on 3 threads: a piece boundary every line or two.
mio::ReadOptions in_pieces() {
  mio::ReadOptions options;
  options.threads = 3, options.chunk_bytes = 64;
  return options;
}

void check_share(const fs::path& a_path, const fs::path& b_path, const mio::ReadOptions& options = {}) {
  const pagh::mpi::InnerShare share = pagh::mpi::read_inner_share(a_path, b_path, MPI_COMM_WORLD, options);
  const auto A = mio::read_sparse<double>(a_path), B = mio::read_sparse<double>(b_path);
  ASSERT_EQ(share.K, A.cols());
  // The ranges: rank 0 from 0, each from its predecessor's end, the last to K.
  std::vector<long long> bounds(2 * static_cast<std::size_t>(ranks())), mine = {share.k0, share.k1};
  MPI_Allgather(mine.data(), 2, MPI_LONG_LONG, bounds.data(), 2, MPI_LONG_LONG, MPI_COMM_WORLD);
  EXPECT_EQ(bounds.front(), 0);
  EXPECT_EQ(bounds.back(), share.K);
  for (int r = 1; r < ranks(); ++r) EXPECT_EQ(bounds[2 * r], bounds[2 * r - 1]);
  expect_same(share.a, A.middleCols(share.k0, share.k1 - share.k0), a_path.filename().string() + " columns");
  const Eigen::SparseMatrix<double> bt = B.transpose();
  expect_same(share.b, Eigen::SparseMatrix<double>(bt.middleCols(share.k0, share.k1 - share.k0).transpose()),
              b_path.filename().string() + " rows");
}

TEST(MpiRead, SharesAreTheWholeFilesColumnsAndRows) {
  const auto a = file_with("a.mtx", coordinate(70, 90, 900, "real", "general", 1));
  const auto b = file_with("b.mtx", coordinate(90, 60, 700, "integer", "general", 2));
  check_share(a, b);
  const auto s = file_with("s.mtx", coordinate(90, 90, 800, "integer", "symmetric", 3));
  const auto k = file_with("k.mtx", coordinate(90, 90, 500, "real", "skew-symmetric", 4));
  check_share(s, k);
  const auto pattern = file_with("p.mtx", coordinate(40, 90, 300, "pattern", "general", 5));
  check_share(pattern, s);
  // The same shares when each rank parses its range in pieces on several threads.
  check_share(a, b, in_pieces());
  check_share(s, k, in_pieces());
  check_share(pattern, s, in_pieces());
  // Shares of 2^16 entries and more are assembled on the threads too (thousands of duplicates).
  const auto wide_a = file_with("wa.mtx", coordinate(300, 3000, 80000, "real", "general", 15));
  const auto wide_b = file_with("wb.mtx", coordinate(3000, 200, 140000, "real", "general", 16));
  check_share(wide_a, wide_b, in_pieces());
}

TEST(MpiRead, ArrayFilesAreReadWholeAndSplit) {
  std::ostringstream text;
  text << "%%MatrixMarket matrix array real general\n30 20\n";
  for (int v = 0; v < 600; ++v) text << (v % 7) - 3 << "\n";
  const auto a = file_with("dense.mtx", text.str());
  const auto b = file_with("b2.mtx", coordinate(20, 30, 200, "integer", "general", 6));
  check_share(a, b);
}

TEST(MpiRead, TinyFilesAndRanksWithoutLines) {
  const auto a = file_with("one.mtx", "%%MatrixMarket matrix coordinate real general\n3 2 1\n1 2 5\n");
  const auto b = file_with("none.mtx", "%%MatrixMarket matrix coordinate real general\n2 4 0\n");
  check_share(a, b);
}

TEST(MpiRead, SketchOfTheSharesIsTheOneProcessSketch) {
  const auto a = file_with("ia.mtx", coordinate(80, 120, 1500, "integer", "general", 7));
  const auto b = file_with("ib.mtx", coordinate(120, 70, 1200, "integer", "general", 8));
  const auto share = pagh::mpi::read_inner_share(a, b, MPI_COMM_WORLD);
  const pagh::SketchParams params{.seed = 9};
  const auto distributed = pagh::mpi::compress(share.a, share.b, params, MPI_COMM_WORLD);
  const auto single = pagh::compress(mio::read_sparse<double>(a), mio::read_sparse<double>(b), params);
  ASSERT_EQ(distributed.buckets(), single.buckets());
  for (int t = 0; t < single.repetitions(); ++t)
    for (std::int64_t h = 0; h < single.buckets(); ++h) ASSERT_EQ(distributed.sketch(t)[h], single.sketch(t)[h]) << t << " " << h;
}

// Every rank throws the MatrixMarketError of the whole-file read: its file, line and message.
void expect_refused_as_whole_read(const fs::path& bad, const fs::path& good, const mio::ReadOptions& options = {}) {
  std::string expected, file;
  std::int64_t line = -1;
  try {
    (void)mio::read_sparse<double>(bad);
    FAIL() << bad << " was read";
  } catch (const mio::MatrixMarketError& e) {
    expected = e.what(), file = e.file(), line = e.line();
  }
  try {
    (void)pagh::mpi::read_inner_share(bad, good, MPI_COMM_WORLD, options);
    ADD_FAILURE() << "rank " << rank_of() << ": " << bad << " was read";
  } catch (const mio::MatrixMarketError& e) {
    EXPECT_EQ(std::string(e.what()), expected) << "rank " << rank_of();
    EXPECT_EQ(e.file(), file) << "rank " << rank_of();
    EXPECT_EQ(e.line(), line) << "rank " << rank_of();
  }
}

TEST(MpiRead, BadFilesAreRefusedOnEveryRankAsAWholeReadRefusesThem) {
  const auto good = file_with("good.mtx", coordinate(90, 50, 400, "real", "general", 10));
  std::string text = coordinate(60, 90, 800, "real", "general", 11);
  // A bad value late in the file (in the last rank's range), and one early (rank 0's).
  std::string late = text, early = text;
  late.replace(late.rfind("\n", late.size() - 2 - 200) + 1, 1, "x");
  early.replace(early.find("\n", 200) + 1, 1, "x");
  // Too many and too few entries for the size line.
  std::string more = text, fewer = text;
  more.replace(more.find(" 800\n"), 5, " 700\n");
  fewer.replace(fewer.find(" 800\n"), 5, " 801\n");
  fewer += "% no entry\n";
  for (const mio::ReadOptions& options : {mio::ReadOptions{}, in_pieces()}) {
    expect_refused_as_whole_read(file_with("late.mtx", late), good, options);
    expect_refused_as_whole_read(file_with("early.mtx", early), good, options);
    expect_refused_as_whole_read(file_with("more.mtx", more), good, options);
    expect_refused_as_whole_read(file_with("fewer.mtx", fewer), good, options);
  }
  expect_refused_as_whole_read(scratch() / "missing.mtx", good);
  // A's columns unlike B's rows.
  try {
    (void)pagh::mpi::read_inner_share(file_with("t.mtx", text), file_with("g2.mtx", coordinate(50, 20, 30, "real", "general", 12)),
                                      MPI_COMM_WORLD);
    ADD_FAILURE() << "shapes accepted";
  } catch (const pagh::mpi::RankFailure& e) {
    EXPECT_NE(std::string(e.what()).find("60 x 90"), std::string::npos) << e.what();
  }
}

// Copies of a file that differ between ranks (each rank its own) would lose or repeat entries
// between the byte ranges: refused on every rank, naming what differs.
TEST(MpiRead, RanksWhoseCopiesDifferAreRefused) {
  const auto good = file_with("cb.mtx", coordinate(90, 50, 400, "real", "general", 13));
  const int rank = rank_of();
  const fs::path mine = scratch() / ("copy" + std::to_string(rank) + ".mtx");
  std::ofstream(mine, std::ios::binary) << coordinate(60, 90, rank == 1 ? 801 : 800, "real", "general", 14);
  MPI_Barrier(MPI_COMM_WORLD);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) GTEST_SKIP() << "one rank";
  try {
    (void)pagh::mpi::read_inner_share(mine, good, MPI_COMM_WORLD);
    ADD_FAILURE() << "rank " << rank << ": differing copies read";
  } catch (const pagh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("the ranks differ in the declared entries of A (from 800 to 801)"), std::string::npos)
        << "rank " << rank << ": " << e.what();
  }
}

}  // namespace

int main(int argc, char** argv) {
  return pagh::test::run_mpi_tests(argc, argv, [] {
    const fs::path dir = scratch();  // collective the first time: every rank
    if (rank_of() == 0) fs::remove_all(dir);
  });
}
