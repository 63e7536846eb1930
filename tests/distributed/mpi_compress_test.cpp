// pagh::mpi::compress under mpirun (np 1, 2, 3): every rank builds the same workload from the
// generators, keeps its own inner indices, and the distributed sketch is compared with the
// single-process pagh::compress of the whole product, which every rank also computes.
//
// Sum order: the single process sums k in its own fixed partitions (compress.hpp), each rank sums its
// share in as many ranges as it has threads and the ranks' partial sketches are summed in rank order. Integer inputs whose sums are exact give identical bits; other inputs
// are held to the a-priori rounding bound of those sums (tolerance_for below).
#include <gtest/gtest.h>
#include <mpi.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "distributed/mpi_compress.hpp"
#include "mpi_test_support.hpp"
#include "sketch_checks.hpp"
#include "matrix_io/synthetic.hpp"
#include "sketch/compress.hpp"

namespace {

namespace mio = pagh::matrix_io;
using SparseD = Eigen::SparseMatrix<double>;

using pagh::test::rank_of;
using pagh::test::ranks;

// Contiguous inner ranges, deliberately uneven: rank r gets a share proportional to r + 1; with
// empty_rank >= 0 that rank gets none.
std::pair<std::int64_t, std::int64_t> my_range(std::int64_t K, int empty_rank = -1, int me = rank_of()) {
  const int n = ranks();
  std::vector<double> weight(n);
  double total = 0;
  for (int r = 0; r < n; ++r) total += weight[r] = r == empty_rank ? 0.0 : r + 1.0;
  double before = 0;
  for (int r = 0; r < me; ++r) before += weight[r];
  const auto at = [&](double w) { return static_cast<std::int64_t>(std::llround(w / total * static_cast<double>(K))); };
  return {at(before), at(before + weight[me])};
}

using pagh::test::columns;
using pagh::test::rows;
using pagh::test::expect_same_on_every_rank;
using pagh::test::expect_sketches;
using pagh::test::tolerance_for;

template <class MA, class MB>
void check_against_one_process(const MA& A, const MB& B, pagh::SketchParams params, bool exact, int empty_rank = -1) {
  const auto range = my_range(A.cols(), empty_rank);
  const MA a = columns(A, range);
  const MB b = rows(B, range);
  const pagh::CompressedProduct distributed = pagh::mpi::compress(a, b, params, MPI_COMM_WORLD);
  const pagh::CompressedProduct single = pagh::compress(A, B, params);
  expect_sketches(distributed, single, exact ? 0.0 : tolerance_for(A, B, single.buckets(), params.precision));
  expect_same_on_every_rank(distributed);
  if (exact) {
    const auto got = distributed.top_k(10), want = single.top_k(10);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(got[i].row == want[i].row && got[i].col == want[i].col && got[i].value == want[i].value) << "entry " << i;
  }
}

TEST(MpiCompress, IntegerDenseIsBitExact) {
  for (std::uint64_t seed : {1, 2, 3}) {
    const auto w = mio::planted_dense({.m = 48, .k = 90, .p = 40, .seed = seed, .planted = 3, .integer_entries = true});
    check_against_one_process(w.a, w.b, {.pad = 4, .seed = seed}, true);
  }
}

TEST(MpiCompress, IntegerSparseIsBitExactOnBothPaths) {
  for (auto hybrid : {pagh::HybridMode::automatic, pagh::HybridMode::always_direct, pagh::HybridMode::always_transform}) {
    const auto w = mio::sparse_product({.m = 300, .k = 200, .p = 250, .seed = 7, .integer_entries = true});
    check_against_one_process(w.a, w.b, {.seed = 5, .hybrid = hybrid}, true);
  }
}

TEST(MpiCompress, FloatWorkloadsAgreeToRounding) {
  for (auto precision : {fwht::DType::f32, fwht::DType::f64}) {
    const pagh::SketchParams params{.seed = 11, .precision = precision};
    const auto planted = mio::planted_dense({.m = 64, .k = 96, .p = 80, .seed = 4});
    check_against_one_process(planted.a, planted.b, params, false);
    const auto sparse = mio::sparse_product({.m = 400, .k = 300, .p = 350, .seed = 9});
    check_against_one_process(sparse.a, sparse.b, params, false);
    const auto low_rank = mio::low_rank_plus_sparse({.m = 100, .k = 120, .p = 90, .seed = 3});
    check_against_one_process(low_rank.a, low_rank.b, params, false);
    const auto covariance = mio::sample_covariance({.samples = 150, .features = 60, .seed = 8});
    check_against_one_process(covariance.a, covariance.b, params, false);
  }
}

// The documented sum order: each rank's sketch of its share (share_params: one range of k on one
// thread), summed in rank order; every rank recomputes every share here.
TEST(MpiCompress, PartialSketchesAreSummedInRankOrder) {
  const auto w = mio::sparse_product({.m = 400, .k = 300, .p = 350, .seed = 9});
  for (auto precision : {fwht::DType::f32, fwht::DType::f64}) {
    const pagh::SketchParams params{.seed = 11, .precision = precision, .threads = 1};
    const auto distributed = pagh::mpi::compress(columns(w.a, my_range(w.a.cols())), rows(w.b, my_range(w.a.cols())), params, MPI_COMM_WORLD);
    std::vector<double> sum;
    for (int r = 0; r < ranks(); ++r) {
      const auto range = my_range(w.a.cols(), -1, r);
      const auto partial = pagh::compress(columns(w.a, range), rows(w.b, range), pagh::mpi::share_params(params));
      const double* values = partial.sketch(0).data();  // the d sketches are contiguous
      if (r == 0) sum.assign(static_cast<std::size_t>(partial.buckets() * partial.repetitions()), 0.0);  // the sum starts from +0.0
      for (std::size_t h = 0; h < sum.size(); ++h) sum[h] += values[h];
    }
    ASSERT_EQ(sum.size(), static_cast<std::size_t>(distributed.buckets() * distributed.repetitions()));
    std::int64_t differing = 0;
    for (std::size_t h = 0; h < sum.size(); ++h) differing += distributed.sketch(0).data()[h] != sum[h];
    EXPECT_EQ(differing, 0) << "rank " << rank_of();
  }
}

// A rank's partial as pagh::compress_values gives it (unmeasured) is pagh::compress's sketch bit for
// bit, and sum_sketches of such partials equals sum_sketches of the products, bit for bit, with the
// same inner count and Frobenius estimate; a partial whose values are not d * b is refused on every rank.
TEST(MpiCompress, PartialValuesSumAsProductsDo) {
  const auto w = mio::sparse_product({.m = 300, .k = 240, .p = 260, .seed = 21});
  const auto range = my_range(w.a.cols());
  for (auto precision : {fwht::DType::f32, fwht::DType::f64}) {
    const pagh::SketchParams params = pagh::mpi::share_params({.seed = 6, .precision = precision, .threads = 1});
    const SparseD a = columns(w.a, range), b = rows(w.b, range);
    pagh::SketchValues values = pagh::compress_values(a, b, params);
    const pagh::CompressedProduct product = pagh::compress(a, b, params);
    ASSERT_EQ(values.values.size(), static_cast<std::size_t>(product.buckets() * product.repetitions()));
    std::int64_t differing = 0;
    for (std::size_t h = 0; h < values.values.size(); ++h)
      differing += std::bit_cast<std::uint64_t>(values.values[h]) != std::bit_cast<std::uint64_t>(product.sketch(0).data()[h]);
    EXPECT_EQ(differing, 0) << "rank " << rank_of();
    EXPECT_EQ(values.inner, product.inner());
    for (const int root : {pagh::mpi::kEveryRank, 0}) {
      const auto from_products = pagh::mpi::sum_sketches(product, MPI_COMM_WORLD, root);
      const auto from_values = pagh::mpi::sum_sketches(values, MPI_COMM_WORLD, root);
      ASSERT_EQ(from_values.has_value(), from_products.has_value());
      if (!from_values) continue;
      expect_sketches(*from_values, *from_products, 0.0);
      EXPECT_EQ(from_values->inner(), w.a.cols());
      EXPECT_EQ(from_values->inner(), from_products->inner());
      EXPECT_EQ(from_values->frobenius_estimate(), from_products->frobenius_estimate());
      EXPECT_EQ(from_values->tables().bucket_a, product.tables().bucket_a);
    }
  }
  // Only the last rank's partial is short: every rank throws (none is left waiting in the sum).
  pagh::SketchValues values = pagh::compress_values(columns(w.a, range), rows(w.b, range), {.seed = 6});
  if (rank_of() == ranks() - 1) values.values.pop_back();
  EXPECT_THROW(pagh::mpi::sum_sketches(std::move(values), MPI_COMM_WORLD), pagh::mpi::RankFailure);
}

// shared_hash_tables: every rank's tables are draw_hash_tables' bit for bit (shapes whose entries do not
// split evenly over the ranks, word counts off Philox's 4-word blocks, b = 1); invalid parameters on one
// rank and a seed that differs on one rank throw on every rank.
TEST(MpiCompress, SharedHashTablesAreTheDrawnOnes) {
  struct Shape {
    std::int64_t m, p;
    pagh::SketchParams params;
  };
  for (const Shape& shape : {Shape{1000, 733, {.seed = 5}}, Shape{7, 3, {.buckets = 1, .repetitions = 2, .seed = 9}},
                             Shape{1, 0, {.seed = 2}}, Shape{333, 1201, {.pad = 2, .repetitions = 5, .seed = 77}}}) {
    const pagh::HashTables shared = pagh::mpi::shared_hash_tables(shape.m, shape.p, shape.params, MPI_COMM_WORLD);
    const pagh::HashTables drawn = pagh::draw_hash_tables(shape.params.seed, shape.params.repetitions, shape.m, shape.p,
                                                          pagh::sketch_length(shape.m, shape.p, shape.params));
    EXPECT_EQ(shared.m, drawn.m);
    EXPECT_EQ(shared.p, drawn.p);
    EXPECT_EQ(shared.buckets, drawn.buckets);
    EXPECT_EQ(shared.repetitions, drawn.repetitions);
    EXPECT_EQ(shared.bucket_a, drawn.bucket_a) << "m " << shape.m << " rank " << rank_of();
    EXPECT_EQ(shared.sign_a, drawn.sign_a) << "m " << shape.m << " rank " << rank_of();
    EXPECT_EQ(shared.bucket_b, drawn.bucket_b) << "p " << shape.p << " rank " << rank_of();
    EXPECT_EQ(shared.sign_b, drawn.sign_b) << "p " << shape.p << " rank " << rank_of();
  }
  const pagh::SketchParams bad{.pad = rank_of() == ranks() - 1 ? -1.0 : 8.0};
  EXPECT_THROW(pagh::mpi::shared_hash_tables(100, 100, bad, MPI_COMM_WORLD), pagh::mpi::RankFailure);
  if (ranks() > 1) {
    try {
      pagh::mpi::shared_hash_tables(100, 100, {.seed = rank_of() == 1 ? 99u : 1u}, MPI_COMM_WORLD);
      ADD_FAILURE() << "rank " << rank_of() << ": no failure";
    } catch (const pagh::Error& e) {
      EXPECT_NE(std::string(e.what()).find("differ in the seed (from 1 to 99)"), std::string::npos) << e.what();
    }
  }
}

// Tables given to compress_values must have the product's shape.
TEST(MpiCompress, GivenTablesOfAnotherShapeAreRefused) {
  const auto w = mio::sparse_product({.m = 120, .k = 80, .p = 90, .seed = 4});
  const pagh::SketchParams params{.seed = 3};
  const std::int64_t b = pagh::sketch_length(120, 90, params);
  EXPECT_NO_THROW(pagh::compress_values(w.a, w.b, params, pagh::draw_hash_tables(3, 3, 120, 90, b)));
  EXPECT_THROW(pagh::compress_values(w.a, w.b, params, pagh::draw_hash_tables(3, 3, 121, 90, b)), pagh::Error);
  EXPECT_THROW(pagh::compress_values(w.a, w.b, params, pagh::draw_hash_tables(3, 2, 120, 90, b)), pagh::Error);
  EXPECT_THROW(pagh::compress_values(w.a, w.b, params, pagh::draw_hash_tables(3, 3, 120, 90, 2 * b)), pagh::Error);
}

// sum_sketches on crafted partial sketches of 2 pieces by messages, 12 through shared memory (2^21 x 3
// values): mostly zero, on odd ranks dense in the second half, with -0.0, +-inf and subnormals: the
// result is the rank-order sum from +0.0 of every rank's values, bit for bit, on every rank and on a
// root, by either route (automatic taking the shared-memory window: the test's ranks share a node).
TEST(MpiCompress, CraftedPartialsAreSummedInRankOrderFromZero) {
  const std::int64_t m = 50, p = 40, buckets = std::int64_t{1} << 21;
  const pagh::SketchParams params{.buckets = buckets, .seed = 3};
  const auto values_of = [&](int r) {
    std::vector<double> v(static_cast<std::size_t>(3 * buckets), 0.0);
    for (std::size_t h = 0; h < v.size(); ++h) {
      const auto u = static_cast<double>((h * 2654435761u + static_cast<std::size_t>(r) * 97u) % 1000003u);
      if ((r % 2 == 1 && h >= v.size() / 2) || h % 23 == static_cast<std::size_t>(r) % 23) v[h] = (u - 500001.0) / 7.0;
      if (h % 101 == 5) v[h] = -0.0;
    }
    v[static_cast<std::size_t>(7 + r)] = std::numeric_limits<double>::infinity() * (r % 2 ? -1 : 1);
    v[static_cast<std::size_t>(buckets + 11)] = std::numeric_limits<double>::denorm_min() * (r + 1);
    return v;
  };
  std::vector<double> want(static_cast<std::size_t>(3 * buckets), 0.0);
  for (int r = 0; r < ranks(); ++r) {
    const auto v = values_of(r);
    for (std::size_t h = 0; h < want.size(); ++h) want[h] += v[h];
  }
  const pagh::CompressedProduct partial(m, p, 1, params, pagh::draw_hash_tables(params.seed, 3, m, p, buckets), values_of(rank_of()));
  for (const auto route : {pagh::mpi::SumRoute::automatic, pagh::mpi::SumRoute::messages}) {
    for (const int root : {pagh::mpi::kEveryRank, ranks() - 1}) {
      pagh::mpi::ReduceTimings timings;
      const auto sum = pagh::mpi::sum_sketches(partial, MPI_COMM_WORLD, root, &timings, route);
      // The ranks of a test run share one node: automatic takes the window there.
      EXPECT_EQ(timings.shared_memory, route == pagh::mpi::SumRoute::automatic && ranks() > 1) << "rank " << rank_of();
      ASSERT_EQ(sum.has_value(), root == pagh::mpi::kEveryRank || root == rank_of());
      if (!sum) continue;
      EXPECT_EQ(sum->inner(), ranks());
      std::int64_t differing = 0;
      for (std::size_t h = 0; h < want.size(); ++h)
        differing += std::bit_cast<std::uint64_t>(sum->sketch(0).data()[h]) != std::bit_cast<std::uint64_t>(want[h]);
      EXPECT_EQ(differing, 0) << "rank " << rank_of() << " root " << root << " route " << static_cast<int>(route);
    }
  }
}

TEST(MpiCompress, FloatInputsSketchInFloat) {
  const auto w = mio::planted_dense({.m = 40, .k = 70, .p = 50, .seed = 6, .integer_entries = true});
  const Eigen::MatrixXf A = w.a.cast<float>(), B = w.b.cast<float>();
  check_against_one_process(A, B, {.seed = 2}, true);
}

TEST(MpiCompress, ARankWithoutInnerIndices) {
  if (ranks() < 2) GTEST_SKIP() << "needs two ranks";
  // The last rank holds no k.
  const auto dense = mio::planted_dense({.m = 30, .k = 50, .p = 20, .seed = 5, .integer_entries = true});
  check_against_one_process(dense.a, dense.b, {.seed = 3}, true, ranks() - 1);
  const auto sparse = mio::sparse_product({.m = 200, .k = 100, .p = 150, .seed = 2, .integer_entries = true});
  check_against_one_process(sparse.a, sparse.b, {.seed = 3}, true, ranks() - 1);
}

TEST(MpiCompress, ToOneRootOnly) {
  const int root = ranks() - 1;
  const auto w = mio::sparse_product({.m = 200, .k = 120, .p = 100, .seed = 12, .integer_entries = true});
  const auto range = my_range(w.a.cols());
  const auto got = pagh::mpi::compress(columns(w.a, range), rows(w.b, range), {.seed = 4}, MPI_COMM_WORLD, root);
  ASSERT_EQ(got.has_value(), rank_of() == root);
  if (got) expect_sketches(*got, pagh::compress(w.a, w.b, {.seed = 4}), 0.0);
}

TEST(MpiCompress, AFailureOnOneRankIsThrownOnEveryRank) {
  const int failing = ranks() - 1;
  const auto w = mio::planted_dense({.m = 20, .k = 30, .p = 10, .seed = 1});
  const auto range = my_range(w.a.cols());
  // The failing rank passes B with one row too many: pagh::compress refuses it there.
  const Eigen::MatrixXd a = columns(w.a, range);
  const Eigen::MatrixXd b = rank_of() == failing ? Eigen::MatrixXd(Eigen::MatrixXd::Ones(a.cols() + 1, 10)) : rows(w.b, range);
  try {
    pagh::mpi::compress(a, b, {}, MPI_COMM_WORLD);
    ADD_FAILURE() << "rank " << rank_of() << ": no failure";
  } catch (const pagh::mpi::RankFailure& e) {
    EXPECT_EQ(e.rank(), failing);
    EXPECT_EQ(e.code(), 1);
    EXPECT_NE(std::string(e.what()).find("pagh::compress"), std::string::npos) << e.what();
    // The same text on every rank.
    std::uint64_t hash = std::hash<std::string>{}(e.what()), lo = hash, hi = hash;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_EQ(lo, hi);
  }
}

TEST(MpiCompress, DifferentParametersOnOneRankAreRefusedEverywhere) {
  if (ranks() < 2) GTEST_SKIP() << "needs two ranks";
  const auto w = mio::sparse_product({.m = 100, .k = 60, .p = 80, .seed = 3});
  const auto range = my_range(w.a.cols());
  const pagh::SketchParams params{.seed = rank_of() == 1 ? 99u : 1u};
  try {
    pagh::mpi::compress(columns(w.a, range), rows(w.b, range), params, MPI_COMM_WORLD);
    ADD_FAILURE() << "rank " << rank_of() << ": no failure";
  } catch (const pagh::Error& e) {
    EXPECT_NE(std::string(e.what()).find("differ in the seed (from 1 to 99)"), std::string::npos) << e.what();
  }
}

TEST(MpiCompress, AgreeWithoutFailuresReturns) {
  pagh::mpi::agree(MPI_COMM_WORLD, nullptr);
  try {
    pagh::mpi::agree(MPI_COMM_WORLD, rank_of() == 0 ? 65 : 0, rank_of() == 0 ? "a.mtx:3: bad value" : "");
    ADD_FAILURE();
  } catch (const pagh::mpi::RankFailure& e) {
    EXPECT_EQ(e.rank(), 0);
    EXPECT_EQ(e.code(), 65);
    EXPECT_STREQ(e.what(), "a.mtx:3: bad value");
  }
}

}  // namespace

int main(int argc, char** argv) { return pagh::test::run_mpi_tests(argc, argv); }
