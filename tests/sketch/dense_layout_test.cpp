// The layout of a dense B does not change the sketch: a column-major B (transposed by the engine in
// tiles, its rows' nonzeros counted on the way) and the same B row-major (read in place) give
// bit-identical sketches, for shapes that are not multiples of the tile, with empty and thin rows
// (the hybrid direct path), in f64 and f32 inputs and storage, on 1 and 2 threads.
#include <cstring>

#include "sketch_test_support.hpp"

namespace pagh::test {
namespace {

TEST(SketchDenseLayout, RowMajorBGivesTheSameSketchAsColumnMajorB) {
  std::mt19937_64 rng(29);
  for (const auto& [m, K, p] : {std::array<Eigen::Index, 3>{70, 300, 50}, {5, 33, 1}, {1, 1, 97}, {40, 64, 64}}) {
    const Eigen::MatrixXd A = gaussian(m, K, rng);
    Eigen::MatrixXd B = gaussian(K, p, rng);
    for (Eigen::Index k = 0; k < K; k += 3) B.row(k).setZero();  // empty rows
    for (Eigen::Index k = 1; k < K; k += 5)
      for (Eigen::Index j = 1; j < p; ++j) B(k, j) = 0;  // one nonzero: the direct path
    const RowMajorMatrixXd Br = B;
    const Eigen::MatrixXf Af = A.cast<float>(), Bf = B.cast<float>();
    const RowMajorMatrixXf Bfr = Bf;
    for (fwht::DType precision : {fwht::DType::f64, fwht::DType::f32}) {
      for (int threads : {1, 2}) {
        const SketchParams params{.repetitions = 3, .seed = 5, .precision = precision, .threads = threads};
        const std::string what = std::to_string(m) + " x " + std::to_string(K) + " x " + std::to_string(p) + " " +
                                 std::string(fwht::to_string(precision)) + ", " + std::to_string(threads) + " threads";
        expect_same_sketches(compress(A, B, params), compress(A, Br, params), "double inputs " + what);
        expect_same_sketches(compress(Af, Bf, params), compress(Af, Bfr, params), "float inputs " + what);
      }
    }
  }
}

}  // namespace
}  // namespace pagh::test
