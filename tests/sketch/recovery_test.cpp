// Heavy-bucket recovery (sketch/recovery.hpp) against two oracles: the library's exhaustive scan
// (Recovery::exhaustive) and a brute force written here from entry(i, j) alone, which shares no
// ranking or selection code with the library. Recovery is exact, not approximate: every test
// compares whole answers (rows, columns, values, spreads and order) for equality.
#include <gtest/gtest.h>
#include <omp.h>

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <tuple>

#include "sketch/compress.hpp"
#include "sketch_test_support.hpp"

namespace pagh {
namespace {

void expect_same(const std::vector<Entry>& got, const std::vector<Entry>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t n = 0; n < got.size(); ++n) {
    EXPECT_EQ(got[n].row, want[n].row) << what << " #" << n;
    EXPECT_EQ(got[n].col, want[n].col) << what << " #" << n;
    EXPECT_EQ(got[n].value, want[n].value) << what << " #" << n;
    EXPECT_EQ(got[n].spread, want[n].spread) << what << " #" << n;
  }
}

// Every entry through the public single-entry query, in row-major order.
std::vector<Entry> every_entry(const CompressedProduct& c) {
  std::vector<Entry> all;
  all.reserve(static_cast<std::size_t>(c.rows() * c.cols()));
  for (std::int64_t i = 0; i < c.rows(); ++i)
    for (std::int64_t j = 0; j < c.cols(); ++j) all.push_back(c.entry(i, j));
  return all;
}

// The documented order: |value| descending, then row, then column; the first k.
std::vector<Entry> brute_top_k(std::vector<Entry> all, std::size_t k) {
  std::stable_sort(all.begin(), all.end(), [](const Entry& x, const Entry& y) { return std::fabs(x.value) > std::fabs(y.value); });
  all.resize(std::min(k, all.size()));  // stable over row-major input: ties stay by row, then column
  return all;
}

std::vector<Entry> brute_above(const std::vector<Entry>& all, double tau) {
  std::vector<Entry> out;
  for (const Entry& e : all)
    if (std::fabs(e.value) >= tau) out.push_back(e);
  return out;
}

// Checks top_k and above of the fast path against both oracles, at several k and thresholds.
void check_against_oracles(const CompressedProduct& c, const std::string& what) {
  const std::vector<Entry> all = every_entry(c);
  for (std::size_t k : {std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{300}}) {
    RecoveryStats stats;
    const auto fast = c.top_k(k, Recovery::heavy_buckets, &stats);
    const std::string label = what + " top-" + std::to_string(k) + " (" + stats.reason + ")";
    expect_same(fast, brute_top_k(all, k), label + " vs brute force");
    expect_same(fast, c.top_k(k, Recovery::exhaustive), label + " vs scan");
    expect_same(c.top_k(k), fast, label + " automatic");
  }
  const auto ranked = brute_top_k(all, 400);
  for (std::size_t at : {std::size_t{0}, std::size_t{9}, std::size_t{99}, ranked.size() - 1}) {
    if (at >= ranked.size()) continue;
    const double tau = std::fabs(ranked[at].value);  // a threshold that an entry meets exactly
    if (tau == 0) continue;
    const auto fast = c.above(tau, std::size_t{1} << 26, Recovery::heavy_buckets);
    const std::string label = what + " above " + std::to_string(tau);
    expect_same(fast, brute_above(all, tau), label + " vs brute force");
    expect_same(fast, c.above(tau, std::size_t{1} << 26, Recovery::exhaustive), label + " vs scan");
  }
}

// median_of takes three values (the default d) without sorting them: the value sorting puts in the
// middle, for every order of every triple, ties included.
TEST(MedianOf, ThreeValuesGiveTheSortedMiddleInEveryOrder) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> small(-3, 3);  // few distinct values: many ties
  for (int trial = 0; trial < 2000; ++trial) {
    std::array<double, 3> v{double(small(rng)), double(small(rng)), trial % 2 ? double(small(rng)) : std::ldexp(double(rng() % 1000), -7)};
    std::array<double, 3> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    std::sort(v.begin(), v.end());
    do {
      std::array<double, 3> copy = v;
      EXPECT_EQ(median_of(copy), sorted[1]) << v[0] << " " << v[1] << " " << v[2];
    } while (std::next_permutation(v.begin(), v.end()));
  }
}

TEST(Recovery, EqualsTheOraclesOnDenseProductsForEveryRepetitionCount) {
  std::mt19937_64 rng(20261125);
  for (int d : {1, 2, 3, 4, 5}) {
    const Eigen::MatrixXd A = test::gaussian(150, 40, rng), B = test::gaussian(40, 90, rng);
    const CompressedProduct c = compress(A, B, {.pad = 2, .repetitions = d, .seed = static_cast<std::uint64_t>(d)});
    check_against_oracles(c, "dense 150x90 d=" + std::to_string(d));
  }
}

TEST(Recovery, EqualsTheOraclesOnRectangularAndThinShapes) {
  std::mt19937_64 rng(7);
  for (auto [m, K, p] : {std::tuple{1, 5, 3000}, std::tuple{3000, 5, 1}, std::tuple{2, 9, 1500}, std::tuple{700, 20, 13}}) {
    const Eigen::MatrixXd A = test::gaussian(m, K, rng), B = test::gaussian(K, p, rng);
    const CompressedProduct c = compress(A, B, {.repetitions = 3, .seed = 11});
    check_against_oracles(c, std::to_string(m) + "x" + std::to_string(p));
  }
}

// One row against a million columns (and the transpose): the enumeration walks the single row.
TEST(Recovery, EqualsTheScanOnAMillionColumnsByOneRow) {
  std::mt19937_64 rng(5);
  const Eigen::MatrixXd a = test::gaussian(1, 3, rng), b = test::gaussian(3, 1000000, rng);
  for (bool transpose : {false, true}) {
    const CompressedProduct c = transpose ? compress(Eigen::MatrixXd(b.transpose()), Eigen::MatrixXd(a.transpose()), {.pad = 1, .seed = 9})
                                          : compress(a, b, {.pad = 1, .seed = 9});
    // (For one row the scan, m * p * d probes, is what the planner picks by itself.)
    const auto fast = c.top_k(20, Recovery::heavy_buckets);
    expect_same(fast, c.top_k(20, Recovery::exhaustive), transpose ? "10^6 x 1" : "1 x 10^6");
    expect_same(c.top_k(20), fast, "automatic");
    const double tau = std::fabs(fast.back().value);
    expect_same(c.above(tau, std::size_t{1} << 26, Recovery::heavy_buckets), c.above(tau, std::size_t{1} << 26, Recovery::exhaustive),
                "above");
  }
}

// Above the sizes where queries run on several threads; integer values give many exact ties, which
// must come out by row, then column.
TEST(Recovery, EqualsTheOraclesWithTiesOnSeveralThreads) {
  std::mt19937_64 rng(3);
  Eigen::SparseMatrix<double> A(1100, 300), B(300, 1200);
  std::vector<Eigen::Triplet<double>> ta, tb;
  std::uniform_int_distribution<int> row(0, 1099), col(0, 1199), sign(0, 1);
  for (int k = 0; k < 300; ++k)
    for (int n = 0; n < 3; ++n) {
      ta.emplace_back(row(rng), k, sign(rng) ? 1.0 : -1.0);
      tb.emplace_back(k, col(rng), sign(rng) ? 1.0 : -1.0);
    }
  A.setFromTriplets(ta.begin(), ta.end());
  B.setFromTriplets(tb.begin(), tb.end());
  for (int d : {3}) {
    const CompressedProduct c = compress(A, B, {.pad = 4, .repetitions = d, .seed = 5, .precision = fwht::DType::f64});
    const int threads = omp_get_max_threads();
    for (int t : {1, 2}) {
      omp_set_num_threads(t);
      check_against_oracles(c, "ties d=" + std::to_string(d) + " threads=" + std::to_string(t));
    }
    omp_set_num_threads(threads);
  }
}

// The scans' float prefilter (estimate/float_medians.hpp) rejects an entry only where its rounded
// |median| is below the rounded bound. Sketch values that differ in double but round to one float,
// values beyond float's range and exact zeros must all leave the answers as the brute force gives
// them: d = 1 and 3 take the prefilter, d = 5 does not; one and two threads.
TEST(Recovery, ScansEqualTheOraclesWhereSketchValuesRoundToOneFloat) {
  std::mt19937_64 rng(11);
  const double kValues[] = {1.0, 1.0 + 0x1p-40, 1.0 + 0x1p-35, 1.0 - 0x1p-38, 0x1.000001p0, 3e38, 3.4028236e38, 1e300, 0.0, 0x1p-140};
  std::uniform_int_distribution<int> pick(0, 9), sign(0, 1);
  const int threads = omp_get_max_threads();
  for (int d : {1, 3, 5}) {
    const std::int64_t m = 300, p = 300, b = 64;
    std::vector<double> values(static_cast<std::size_t>(d * b));
    for (double& v : values) v = (sign(rng) ? 1 : -1) * kValues[pick(rng)];
    const CompressedProduct c(m, p, 1, SketchParams{.buckets = b, .repetitions = d, .seed = 4}, draw_hash_tables(4, d, m, p, b),
                              values, {});
    const std::vector<Entry> all = every_entry(c);
    for (int t : {1, 2}) {
      omp_set_num_threads(t);
      const std::string what = "d=" + std::to_string(d) + " threads=" + std::to_string(t);
      for (std::size_t k : {std::size_t{1}, std::size_t{50}, std::size_t{2000}, std::size_t{15000}})
        expect_same(c.top_k(k, Recovery::exhaustive), brute_top_k(all, k), what + " top-" + std::to_string(k));
      for (double tau : {1.0, 1.0 + 0x1p-40, 0x1.000001p0, 3.4028235e38, 1e300, 0x1p-140})
        expect_same(c.above(tau, std::size_t{1} << 26, Recovery::exhaustive), brute_above(all, tau), what + " above " + std::to_string(tau));
    }
  }
  omp_set_num_threads(threads);
}

// A sketch with fewer nonzero estimates than k: the rest of the answer are zero estimates in
// row-major order (odd d), or the scan (even d); both equal the oracle.
TEST(Recovery, FewerNonzeroEstimatesThanK) {
  std::mt19937_64 rng(9);
  auto [A, B] = test::sparse_integer_pair(60, 8, 50, 3, rng);
  for (int d : {1, 3, 4}) {
    const CompressedProduct c = compress(A, B, {.pad = 8, .repetitions = d, .seed = 2, .precision = fwht::DType::f64});
    for (std::size_t k : {std::size_t{5}, std::size_t{40}, std::size_t{2999}, std::size_t{3000}, std::size_t{5000}}) {
      const auto fast = c.top_k(k, Recovery::heavy_buckets);
      expect_same(fast, brute_top_k(every_entry(c), k), "sparse d=" + std::to_string(d) + " k=" + std::to_string(k));
    }
  }
}

// Every nonzero of a sparse integer product comes back with its exact value (no two nonzeros share
// a bucket in two of the three repetitions at these sizes); entries that are zero can still show
// up where they share buckets with nonzeros in two repetitions, as the scan also reports them.
// A zero product (A's and B's inner supports are disjoint): every estimate is exactly 0, for any
// d, and the answer is the first k entries in row-major order — without a pass over m * p (here
// 4 * 10^10 entries).
TEST(Recovery, ZeroProductsAnswerWithoutAScan) {
  for (int d : {2, 3}) {
    for (std::int64_t n : {std::int64_t{40}, std::int64_t{200000}}) {
      Eigen::SparseMatrix<double> A(n, 4), B(4, n);
      A.insert(1, 0) = 3.0;
      B.insert(1, n - 1) = 5.0;
      const CompressedProduct c = compress(A, B, {.repetitions = d, .seed = 1});
      RecoveryStats stats;
      const auto top = c.top_k(10, Recovery::automatic, &stats);
      EXPECT_FALSE(stats.exhaustive) << stats.reason;
      if (n == 40) expect_same(top, brute_top_k(every_entry(c), 10), "zero product d=" + std::to_string(d));
      ASSERT_EQ(top.size(), 10u);
      for (std::size_t r = 0; r < 10; ++r) {
        EXPECT_EQ(top[r].row, 0);
        EXPECT_EQ(top[r].col, static_cast<std::int64_t>(r));
        EXPECT_EQ(top[r].value, 0.0);
      }
    }
  }
}

TEST(Recovery, IntegerProductsAreRecoveredExactly) {
  std::mt19937_64 rng(123);
  for (int trial = 0; trial < 5; ++trial) {
    auto [A, B] = test::sparse_integer_pair(2000, 40, 3000, 30, rng);
    const Eigen::MatrixXd C = A * B;
    const CompressedProduct c = compress(A, B, {.pad = 8, .repetitions = 3, .seed = 40u + trial, .precision = fwht::DType::f64});
    RecoveryStats stats;
    const auto found = c.above(1.0, std::size_t{1} << 20, Recovery::automatic, &stats);
    EXPECT_FALSE(stats.exhaustive) << stats.reason;
    expect_same(found, c.above(1.0, std::size_t{1} << 20, Recovery::exhaustive), "trial " + std::to_string(trial));
    std::size_t nonzero = 0;
    for (Eigen::Index j = 0; j < C.cols(); ++j)
      for (Eigen::Index i = 0; i < C.rows(); ++i) {
        if (C(i, j) == 0) continue;
        ++nonzero;
        const auto at = std::find_if(found.begin(), found.end(), [&](const Entry& e) { return e.row == i && e.col == j; });
        ASSERT_NE(at, found.end()) << "(" << i << ", " << j << ") trial " << trial;
        EXPECT_EQ(at->value, C(i, j)) << "(" << i << ", " << j << ") trial " << trial;
      }
    EXPECT_GT(nonzero, 20u);
  }
}

// Planted entries of at least 4 sigma over a faint background, with planted pairs forced to share
// a bucket in repetition 0 with opposite signs, so that they cancel there: each must still be found
// (it is heavy in the other two repetitions, and any two of three repetitions meet). The
// background's whole mass is far below sigma, so every outcome here is deterministic given the
// seeds, not a matter of luck: recall must be exactly 1 on all 50 seeds.
TEST(Recovery, PlantedEntriesCollidingInOneRepetitionAreFound) {
  constexpr int m = 400, K = 64, p = 500, planted_pairs = 8;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    std::mt19937_64 rng(seed);
    const SketchParams params{.buckets = 1 << 13, .repetitions = 3, .seed = seed, .precision = fwht::DType::f64};
    const HashTables tables = draw_hash_tables(seed, 3, m, p, params.buckets);
    Eigen::MatrixXd A = 1e-4 * test::gaussian(m, K, rng), B = 1e-4 * test::gaussian(K, p, rng);
    std::uniform_int_distribution<int> row(0, m - 1), col(0, p - 1);
    // Pairs (i1, j1), (i2, j2) sharing their bucket in repetition 0; no planted entry shares a bucket
    // with another in repetitions 1 and 2 (else two of its three estimates could be spoiled, which
    // no recovery can undo): redrawn until that holds.
    std::vector<std::pair<int, int>> planted;
    auto clean = [&] {
      for (int t = 1; t < 3; ++t)
        for (std::size_t x = 0; x < planted.size(); ++x)
          for (std::size_t y = x + 1; y < planted.size(); ++y)
            if ((tables.h1(t, planted[x].first) ^ tables.h2(t, planted[x].second)) ==
                (tables.h1(t, planted[y].first) ^ tables.h2(t, planted[y].second)))
              return false;
      return true;
    };
    while (planted.size() < 2 * planted_pairs) {
      const int i1 = row(rng), j1 = col(rng);
      const std::uint32_t bucket = tables.h1(0, i1) ^ tables.h2(0, j1);
      int i2 = -1, j2 = -1;
      for (int i = 0; i < m && i2 < 0; ++i)
        for (int j = 0; j < p; ++j)
          if (i != i1 && j != j1 && (tables.h1(0, i) ^ tables.h2(0, j)) == bucket) {
            i2 = i, j2 = j;
            break;
          }
      if (i2 < 0) continue;
      planted.emplace_back(i1, j1);
      planted.emplace_back(i2, j2);
      if (!clean()) planted.resize(planted.size() - 2);
    }
    for (int n = 0; n < planted_pairs; ++n) {
      const auto [i1, j1] = planted[2 * n];
      const auto [i2, j2] = planted[2 * n + 1];
      // C(i1, j1) = 10 and C(i2, j2) = -10 * s(i1, j1) s(i2, j2): their terms cancel in repetition 0.
      const double v2 = -10.0 * tables.s1(0, i1) * tables.s2(0, j1) * tables.s1(0, i2) * tables.s2(0, j2);
      const int k1 = 2 * n, k2 = 2 * n + 1;
      A.col(k1).setZero(), B.row(k1).setZero(), A.col(k2).setZero(), B.row(k2).setZero();
      A(i1, k1) = 10, B(k1, j1) = 1, A(i2, k2) = v2, B(k2, j2) = 1;
    }
    const CompressedProduct c = compress(A, B, params);
    ASSERT_GE(10.0, 4 * c.sigma()) << "seed " << seed;
    // Entries that no planted entry touches can still reach ~10 where they share buckets with two
    // planted ones (same signs): found alongside, as the scan finds them, so recall is checked
    // among the top 2k and the entries above 5.
    const auto top = c.top_k(2 * planted.size(), Recovery::heavy_buckets);
    expect_same(top, c.top_k(2 * planted.size(), Recovery::exhaustive), "seed " + std::to_string(seed));
    const auto strong = c.above(5.0, std::size_t{1} << 20, Recovery::heavy_buckets);
    expect_same(strong, c.above(5.0, std::size_t{1} << 20, Recovery::exhaustive), "above, seed " + std::to_string(seed));
    for (const auto& [i, j] : planted) {
      auto is_planted = [&](const Entry& e) { return e.row == i && e.col == j; };
      EXPECT_TRUE(std::any_of(top.begin(), top.end(), is_planted)) << "(" << i << ", " << j << ") seed " << seed;
      EXPECT_TRUE(std::any_of(strong.begin(), strong.end(), is_planted)) << "(" << i << ", " << j << ") seed " << seed;
    }
  }
}

TEST(Recovery, SavedSketchGivesTheSameEntries) {
  std::mt19937_64 rng(31);
  const Eigen::MatrixXd A = test::gaussian(300, 30, rng), B = test::gaussian(30, 200, rng);
  const CompressedProduct c = compress(A, B, {.repetitions = 3, .seed = 8});
  const std::string path = ::testing::TempDir() + "/recovery_test.pagh";
  c.save(path);
  const CompressedProduct loaded = CompressedProduct::load(path);
  std::remove(path.c_str());
  expect_same(loaded.top_k(50), c.top_k(50, Recovery::exhaustive), "loaded top-50");
  const double tau = std::fabs(c.top_k(20)[19].value);
  expect_same(loaded.above(tau), c.above(tau, std::size_t{1} << 26, Recovery::exhaustive), "loaded above");
}

// The planner: a product large enough that the scan is far dearer picks heavy buckets by itself,
// and a tiny one picks the scan; a low threshold with too many qualifying entries throws.
TEST(Recovery, PlannerChoicesAndLimits) {
  std::mt19937_64 rng(77);
  const Eigen::MatrixXd A = test::gaussian(2000, 16, rng), B = test::gaussian(16, 2000, rng);
  const CompressedProduct c = compress(A, B, {.repetitions = 3, .seed = 3});
  RecoveryStats stats;
  (void)c.top_k(10, Recovery::automatic, &stats);
  EXPECT_FALSE(stats.exhaustive) << stats.reason;
  EXPECT_LT(stats.probes, stats.scan_probes / 10) << stats.reason;
  (void)c.top_k(10, Recovery::exhaustive, &stats);
  EXPECT_TRUE(stats.exhaustive);
  EXPECT_THROW((void)c.above(0.0, 1000, Recovery::heavy_buckets), TooManyEntries);
  const double low = 0.01 * c.sigma();
  EXPECT_THROW((void)c.above(low, 1000, Recovery::heavy_buckets), TooManyEntries);
  EXPECT_THROW((void)c.above(-1.0), Error);
  EXPECT_THROW((void)c.above(NAN), Error);
}

}  // namespace
}  // namespace pagh
