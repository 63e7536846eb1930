// The CPU engine (sketch/src/compress) against a reference sketch written straight from DESIGN.md §1
// and the engine's documented order of summation, bit for bit, on Gaussian (non-integer) data: for
// each of the min(K, 16) ranges of inner indices [K s / 16, K (s+1) / 16) and each repetition t,
// P_t(range) sums (H a_k) . (H b_k) over its k in order, a_k[h1(i)] += s1(i) A_ik summed over i in
// order (zeros skipped), H the reference FWHT; the ranges are summed in order and c_t = H P_t / b.
// The direct path (HybridMode::always_direct) adds s1(i) A_ik * (s2(j) B_kj) to c_t[h1(i) ^ h2(j)]
// per range in the same order. Every input layout (dense column-major and row-major B, sparse,
// float), f64 and f32 storage, d = 1 and 3, K below and above the 16 ranges and the 64 lines from
// which dense lines are scattered in bucket order, empty lines, and 1, 2, 3 and 7 threads.
#include <bit>
#include <cstring>

#include "fwht/reference.hpp"
#include "sketch/hashing.hpp"
#include "sketch_test_support.hpp"

// The reference's products and sums round one operation at a time, as the engine's do.
#pragma GCC optimize("fp-contract=off")

namespace pagh::test {
namespace {

using index = std::int64_t;

template <class Acc>
std::vector<double> reference_sketches(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const SketchParams& params) {
  const index m = A.rows(), K = A.cols(), p = B.cols();
  const index b = sketch_length(m, p, params);
  const int d = params.repetitions;
  const HashTables tables = draw_hash_tables(params.seed, d, m, p, b);
  const index ranges = std::max<index>(1, std::min<index>(K, params.partitions > 0 ? params.partitions : 16));
  const bool direct_path = params.hybrid == HybridMode::always_direct;
  std::vector<std::vector<Acc>> spectra(static_cast<std::size_t>(ranges));
  std::vector<std::vector<double>> direct(static_cast<std::size_t>(ranges));
  for (index s = 0; s < ranges; ++s) {
    for (int t = 0; t < d; ++t) {
      for (index k = K * s / ranges; k < K * (s + 1) / ranges; ++k) {
        if ((A.col(k).array() != 0).count() == 0 || (B.row(k).array() != 0).count() == 0) continue;
        const auto u = static_cast<std::size_t>(b);
        if (direct_path) {
          auto& c = direct[static_cast<std::size_t>(s)];
          if (c.empty()) c.assign(u * static_cast<std::size_t>(d), 0.0);
          for (index i = 0; i < m; ++i) {
            if (A(i, k) == 0) continue;
            const double ai = tables.s1(t, i) * A(i, k);
            for (index j = 0; j < p; ++j)
              if (B(k, j) != 0) c[static_cast<std::size_t>(t) * u + (tables.h1(t, i) ^ tables.h2(t, j))] += ai * (tables.s2(t, j) * B(k, j));
          }
          continue;
        }
        std::vector<Acc> x(u, Acc{0}), y(u, Acc{0});
        for (index i = 0; i < m; ++i)
          if (A(i, k) != 0) x[tables.h1(t, i)] += static_cast<Acc>(tables.s1(t, i) < 0 ? -A(i, k) : A(i, k));
        for (index j = 0; j < p; ++j)
          if (B(k, j) != 0) y[tables.h2(t, j)] += static_cast<Acc>(tables.s2(t, j) < 0 ? -B(k, j) : B(k, j));
        fwht::reference::transform(std::span<Acc>(x));
        fwht::reference::transform(std::span<Acc>(y));
        auto& P = spectra[static_cast<std::size_t>(s)];
        if (P.empty()) P.assign(u * static_cast<std::size_t>(d), Acc{0});
        for (std::size_t h = 0; h < u; ++h) P[static_cast<std::size_t>(t) * u + h] += x[h] * y[h];
      }
    }
  }
  const std::size_t total = static_cast<std::size_t>(b) * static_cast<std::size_t>(d);
  std::vector<Acc> spectrum(total, Acc{0});
  std::vector<double> sketches(total, 0.0);
  for (index s = 0; s < ranges; ++s)
    for (std::size_t h = 0; h < total; ++h) {
      if (!spectra[static_cast<std::size_t>(s)].empty()) spectrum[h] += spectra[static_cast<std::size_t>(s)][h];
      if (!direct[static_cast<std::size_t>(s)].empty()) sketches[h] += direct[static_cast<std::size_t>(s)][h];
    }
  for (int t = 0; t < d; ++t)
    fwht::reference::transform(std::span<Acc>(spectrum.data() + static_cast<std::size_t>(t) * static_cast<std::size_t>(b),
                                              static_cast<std::size_t>(b)),
                               {.normalization = fwht::Normalization::inverse});
  for (std::size_t h = 0; h < total; ++h) sketches[h] += static_cast<double>(spectrum[h]);
  return sketches;
}

void expect_sketches(const CompressedProduct& product, const std::vector<double>& reference, const std::string& what) {
  const auto b = static_cast<std::size_t>(product.buckets());
  for (int t = 0; t < product.repetitions(); ++t) {
    const auto s = product.sketch(t);
    for (std::size_t h = 0; h < b; ++h)
      ASSERT_EQ(std::bit_cast<std::uint64_t>(s[h]), std::bit_cast<std::uint64_t>(reference[static_cast<std::size_t>(t) * b + h]))
          << what << ": repetition " << t << " bucket " << h << ": engine " << s[h] << ", reference " << reference[static_cast<std::size_t>(t) * b + h];
  }
}

// A (m x K) and B (K x p) Gaussian, with empty columns of A and rows of B and scattered zeros.
std::pair<Eigen::MatrixXd, Eigen::MatrixXd> inputs(index m, index K, index p, std::mt19937_64& rng) {
  Eigen::MatrixXd A = gaussian(static_cast<int>(m), static_cast<int>(K), rng), B = gaussian(static_cast<int>(K), static_cast<int>(p), rng);
  for (index k = 0; k < K; ++k) {
    if (k % 7 == 3) A.col(k).setZero();
    if (k % 5 == 1) B.row(k).setZero();
    for (index i = 0; i < m; ++i)
      if ((i + 3 * k) % 4 == 0) A(i, k) = 0;
    for (index j = 0; j < p; ++j)
      if ((2 * j + k) % 6 == 0) B(k, j) = 0;
  }
  return {A, B};
}

TEST(SketchEngineReference, EveryLayoutAndThreadCountGivesTheReferenceBits) {
  std::mt19937_64 rng(41);
  struct Shape {
    index m, K, p;
  };
  // K = 5: fewer lines than ranges; K = 40: dense lines in position order; K = 300: bucket order;
  // m = 600: b = 2^13, more than one L1 block of the fused transform product in f32 and f64.
  for (const Shape shape : {Shape{30, 5, 20}, Shape{50, 40, 70}, Shape{90, 300, 60}, Shape{600, 80, 300}}) {
    const auto [A, B] = inputs(shape.m, shape.K, shape.p, rng);
    const RowMajorMatrixXd B_rows = B;
    const Eigen::SparseMatrix<double> As = A.sparseView(), Bs = B.sparseView();
    const Eigen::MatrixXf Af = A.cast<float>(), Bf = B.cast<float>();
    const Eigen::MatrixXd Afd = Af.cast<double>(), Bfd = Bf.cast<double>();
    for (const fwht::DType precision : {fwht::DType::f64, fwht::DType::f32})
      for (const int d : {1, 3})
        for (const HybridMode hybrid : {HybridMode::always_transform, HybridMode::always_direct}) {
          const SketchParams base{.repetitions = d, .seed = 7u + static_cast<std::uint64_t>(d), .precision = precision, .hybrid = hybrid};
          const bool f64 = precision == fwht::DType::f64;
          const auto reference = f64 ? reference_sketches<double>(A, B, base) : reference_sketches<float>(A, B, base);
          const auto reference_float = f64 ? reference_sketches<double>(Afd, Bfd, base) : reference_sketches<float>(Afd, Bfd, base);
          for (const int threads : {1, 2, 3, 7}) {
            SketchParams params = base;
            params.threads = threads;
            const std::string what = "m " + std::to_string(shape.m) + " K " + std::to_string(shape.K) + " " +
                                     std::string(fwht::to_string(precision)) + " d " + std::to_string(d) + " hybrid " +
                                     std::to_string(int(hybrid)) + " threads " + std::to_string(threads);
            expect_sketches(compress(A, B, params), reference, "dense " + what);
            expect_sketches(compress(A, B_rows, params), reference, "dense, B row-major, " + what);
            expect_sketches(compress(As, Bs, params), reference, "sparse " + what);
            expect_sketches(compress(Af, Bf, params), reference_float, "float inputs " + what);
          }
        }
  }
}

// SketchParams::partitions: the reference summed over that many ranges, for any thread count.
TEST(SketchEngineReference, PartitionCountSetsTheRangesOfTheSumOrder) {
  std::mt19937_64 rng(47);
  const auto [A, B] = inputs(50, 40, 70, rng);
  const Eigen::SparseMatrix<double> As = A.sparseView(), Bs = B.sparseView();
  for (const HybridMode hybrid : {HybridMode::always_transform, HybridMode::always_direct})
    for (const int partitions : {1, 3, 64}) {
      const SketchParams base{.repetitions = 3, .seed = 5, .precision = fwht::DType::f32, .hybrid = hybrid, .partitions = partitions};
      const auto reference = reference_sketches<float>(A, B, base);
      for (const int threads : {1, 2, 3}) {
        SketchParams params = base;
        params.threads = threads;
        const std::string what = "partitions " + std::to_string(partitions) + " hybrid " + std::to_string(int(hybrid)) +
                                 " threads " + std::to_string(threads);
        expect_sketches(compress(A, B, params), reference, "dense " + what);
        expect_sketches(compress(As, Bs, params), reference, "sparse " + what);
      }
    }
}

// Long sketches (b >= 2^16) stage the direct path's terms and add them in bins of buckets
// (compress/direct_adds.hpp): still the reference's order for every bucket. 80 x 60 x 80 at b = 2^17:
// ~2.5 10^5 terms per repetition, several sorts of 2^16 staged terms each, in 1 and 16 ranges.
TEST(SketchEngineReference, BinnedDirectAddsOfLongSketchesGiveTheReferenceBits) {
  std::mt19937_64 rng(53);
  const auto [A, B] = inputs(80, 60, 80, rng);
  const Eigen::SparseMatrix<double> As = A.sparseView(), Bs = B.sparseView();
  for (const int partitions : {1, 0}) {
    const SketchParams base{.buckets = index{1} << 17, .repetitions = 3, .seed = 9, .precision = fwht::DType::f32,
                            .hybrid = HybridMode::always_direct, .partitions = partitions};
    const auto reference = reference_sketches<float>(A, B, base);
    for (const int threads : {1, 3}) {
      SketchParams params = base;
      params.threads = threads;
      const std::string what = "partitions " + std::to_string(partitions) + " threads " + std::to_string(threads);
      expect_sketches(compress(A, B, params), reference, "dense " + what);
      expect_sketches(compress(As, Bs, params), reference, "sparse " + what);
    }
  }
}

// Vectors of 128 KiB or more (b = 2^15: f64 and f32): a dense line's scatter stores each bucket's
// first term and adds the others (cpu_engine.hpp, kStoreFirstBytes). 4000 and 3000 positions in
// 2^15 buckets: a few hundred buckets with two or more terms per repetition, zeros among the terms.
TEST(SketchEngineReference, StoredFirstTermsOfLongVectorsGiveTheReferenceBits) {
  std::mt19937_64 rng(59);
  const auto [A, B] = inputs(4000, 12, 3000, rng);
  const RowMajorMatrixXd B_rows = B;
  for (const fwht::DType precision : {fwht::DType::f64, fwht::DType::f32}) {
    const SketchParams base{.buckets = index{1} << 15, .repetitions = 3, .seed = 11, .precision = precision,
                            .hybrid = HybridMode::always_transform};
    const bool f64 = precision == fwht::DType::f64;
    const auto reference = f64 ? reference_sketches<double>(A, B, base) : reference_sketches<float>(A, B, base);
    for (const int threads : {1, 3}) {
      SketchParams params = base;
      params.threads = threads;
      const std::string what = std::string(fwht::to_string(precision)) + " threads " + std::to_string(threads);
      expect_sketches(compress(A, B, params), reference, "dense " + what);
      expect_sketches(compress(A, B_rows, params), reference, "dense, B row-major, " + what);
    }
  }
}

// Sparse inputs large enough that their lines are built by several threads (2^16 stored entries and
// more: cpu_lines.hpp), B's rows in more than one block of 4096, with stored zeros (dropped from the
// lines) and empty rows and columns: the reference's bits for every thread count.
TEST(SketchEngineReference, LargeSparseLinesGiveTheReferenceBitsOnEveryThreadCount) {
  std::mt19937_64 rng(61);
  const index m = 300, K = 9000, p = 250;
  std::normal_distribution<double> normal;
  std::vector<Eigen::Triplet<double>> ta, tb;
  for (index k = 0; k < K; ++k) {
    if (k % 97 == 5) continue;  // an empty column of A and row of B
    for (int e = 0; e < 8; ++e) {
      const bool stored_zero = e == 0 && k % 3 == 0;
      ta.emplace_back(static_cast<int>(rng() % m), static_cast<int>(k), stored_zero ? 0.0 : normal(rng));
      tb.emplace_back(static_cast<int>(k), static_cast<int>(rng() % p), e == 1 && k % 5 == 0 ? 0.0 : normal(rng));
    }
  }
  Eigen::SparseMatrix<double> As(m, K), Bs(K, p);
  As.setFromTriplets(ta.begin(), ta.end());
  Bs.setFromTriplets(tb.begin(), tb.end());
  ASSERT_GE(Bs.nonZeros(), index{1} << 16);
  const Eigen::MatrixXd A(As), B(Bs);
  const SketchParams base{.repetitions = 2, .seed = 13, .hybrid = HybridMode::always_direct};
  const auto reference = reference_sketches<double>(A, B, base);
  for (const int threads : {1, 2, 3, 7}) {
    SketchParams params = base;
    params.threads = threads;
    expect_sketches(compress(As, Bs, params), reference, "sparse, " + std::to_string(threads) + " threads");
  }
}

TEST(SketchEngineReference, PathCountsComeFromTheScatterOfDenseLines) {
  std::mt19937_64 rng(43);
  const auto [A, B] = inputs(40, 200, 30, rng);
  index empty = 0;
  for (index k = 0; k < 200; ++k) empty += (A.col(k).array() != 0).count() == 0 || (B.row(k).array() != 0).count() == 0;
  ASSERT_GT(empty, 0);
  for (const int threads : {1, 3}) {
    const auto dense = compress(A, B, {.repetitions = 2, .threads = threads});
    const auto sparse = compress(Eigen::SparseMatrix<double>(A.sparseView()), Eigen::SparseMatrix<double>(B.sparseView()),
                                 {.repetitions = 2, .threads = threads});
    EXPECT_EQ(dense.timings().empty_k, empty);
    EXPECT_EQ(dense.timings().empty_k + dense.timings().direct_k + dense.timings().transformed_k, 200);
    EXPECT_EQ(dense.timings().direct_k, sparse.timings().direct_k);
    EXPECT_EQ(dense.timings().transformed_k, sparse.timings().transformed_k);
  }
}

}  // namespace
}  // namespace pagh::test
