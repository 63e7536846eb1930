// Results do not depend on the thread count (README: "results are identical for every thread
// count"): the sketches bit for bit for 1, 2, 3 and 7 threads on every path (dense, sparse, float
// inputs, hybrid direct/transform, each precision), and the queries (decompress, top_k, above)
// for 1, 2, 3 and 7 OpenMP threads on a product large enough for their parallel paths (m p > 2^16),
// and the noise model's statistics of the sketch values.
#include <omp.h>

#include <cmath>
#include <cstring>

#include "sketch/sketch_statistics.hpp"
#include "sketch_test_support.hpp"

namespace pagh::test {
namespace {

TEST(SketchThreads, SketchesAreBitIdenticalFor1237Threads) {
  std::mt19937_64 rng(17);
  // K = 300 inner indices: more than the 16 fixed ranges the sum is split into, uneven per thread.
  const Eigen::MatrixXd A = gaussian(70, 300, rng), B = gaussian(300, 50, rng);
  Eigen::MatrixXd As = A, Bs = B;  // sparse operands with empty and thin columns and rows
  for (Eigen::Index k = 0; k < 300; ++k)
    for (Eigen::Index i = 0; i < 70; ++i)
      if ((i * 7 + k * 3) % 5 != 0) As(i, k) = 0;
  for (Eigen::Index k = 0; k < 300; ++k)
    for (Eigen::Index j = 0; j < 50; ++j)
      if ((j + 2 * k) % 4 != 0) Bs(k, j) = 0;
  const Eigen::SparseMatrix<double> Asp = As.sparseView(), Bsp = Bs.sparseView();
  const Eigen::MatrixXf Af = A.cast<float>(), Bf = B.cast<float>();
  struct Case {
    fwht::DType precision;
    HybridMode hybrid;
    fwht::Stabilization stabilization;
  };
  const Case cases[] = {{fwht::DType::f32, HybridMode::automatic, fwht::Stabilization::none},
                        {fwht::DType::f64, HybridMode::always_transform, fwht::Stabilization::none},
                        {fwht::DType::f32, HybridMode::always_direct, fwht::Stabilization::none},
                        {fwht::DType::f16, HybridMode::automatic, fwht::Stabilization::neumaier},
                        {fwht::DType::bf16, HybridMode::always_transform, fwht::Stabilization::wide_carry}};
  for (const Case& c : cases) {
    const std::string name = std::string(fwht::to_string(c.precision)) + " hybrid " + std::to_string(int(c.hybrid)) + " " +
                             std::string(fwht::to_string(c.stabilization));
    auto params = [&](int threads) {
      return SketchParams{.repetitions = 3, .seed = 21, .precision = c.precision, .stabilization = c.stabilization,
                          .threads = threads, .hybrid = c.hybrid};
    };
    const auto dense1 = compress(A, B, params(1));
    const auto sparse1 = compress(Asp, Bsp, params(1));
    const auto float1 = compress(Af, Bf, params(1));
    for (int threads : {2, 3, 7}) {
      const std::string what = name + ", " + std::to_string(threads) + " threads";
      expect_same_sketches(dense1, compress(A, B, params(threads)), "dense " + what);
      expect_same_sketches(sparse1, compress(Asp, Bsp, params(threads)), "sparse " + what);
      expect_same_sketches(float1, compress(Af, Bf, params(threads)), "float inputs " + what);
    }
  }
}

TEST(SketchThreads, QueriesAreIdenticalFor1237Threads) {
  std::mt19937_64 rng(23);
  // 300 x 260 = 78000 estimates > 2^16: the queries' parallel paths run.
  const Eigen::MatrixXd A = gaussian(300, 4, rng), B = gaussian(4, 260, rng);
  const auto c = compress(A, B, {.repetitions = 3, .seed = 5, .precision = fwht::DType::f64, .threads = 1});
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const Eigen::MatrixXd full1 = c.decompress();
  const auto top1 = c.top_k(200);
  const auto above1 = c.above(0.5 * c.sigma());
  ASSERT_GT(above1.size(), 1000u) << "the threshold should select a fair number of entries";
  for (int threads : {2, 3, 7}) {
    omp_set_num_threads(threads);
    SCOPED_TRACE(std::to_string(threads) + " threads");
    EXPECT_TRUE(c.decompress() == full1);
    const auto top = c.top_k(200);
    ASSERT_EQ(top.size(), top1.size());
    for (std::size_t q = 0; q < top.size(); ++q) {
      EXPECT_EQ(top[q].row, top1[q].row) << "rank " << q;
      EXPECT_EQ(top[q].col, top1[q].col) << "rank " << q;
      EXPECT_EQ(top[q].value, top1[q].value) << "rank " << q;
    }
    const auto above = c.above(0.5 * c.sigma());
    ASSERT_EQ(above.size(), above1.size());
    for (std::size_t q = 0; q < above.size(); ++q) {
      EXPECT_EQ(above[q].row, above1[q].row) << "position " << q;
      EXPECT_EQ(above[q].col, above1[q].col) << "position " << q;
    }
  }
  omp_set_num_threads(saved);
}

// The noise model's statistics (sums of squares overall and per magnitude bin) are summed over
// fixed pieces of the values: the same bits for 1, 2, 3 and 7 threads. A NaN value counts in no bin.
TEST(SketchThreads, SketchStatisticsAreIdenticalFor1237Threads) {
  std::mt19937_64 rng(31);
  std::normal_distribution<double> normal;
  std::vector<double> values(300000);
  for (double& v : values) v = normal(rng) * 1e3;
  values[123] = 0.0;
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const SketchStatistics one = measure_sketch_values(values);
  EXPECT_TRUE(one.finite);
  std::vector<double> with_nan = values;
  with_nan[4567] = std::nan("");
  const SketchStatistics nan = measure_sketch_values(with_nan);
  EXPECT_FALSE(nan.finite);
  double counted = nan.below;
  for (double c : nan.counts) counted += c;
  EXPECT_EQ(counted, 299999.0);
  for (int threads : {2, 3, 7}) {
    omp_set_num_threads(threads);
    const SketchStatistics s = measure_sketch_values(values);
    EXPECT_EQ(s.largest, one.largest) << threads;
    EXPECT_EQ(s.energy, one.energy) << threads;
    EXPECT_EQ(s.counts, one.counts) << threads;
    EXPECT_EQ(s.bin_energy, one.bin_energy) << threads;
    EXPECT_EQ(s.below_energy, one.below_energy) << threads;
  }
  omp_set_num_threads(saved);
}

}  // namespace
}  // namespace pagh::test
