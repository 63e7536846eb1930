// Shared helpers of the sketch tests.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <cstring>
#include <random>
#include <string>

#include "sketch/compress.hpp"
#include "sketch/verify.hpp"

namespace pagh::test {

// A sparse integer pair whose product has few nonzeros: `pairs` inner indices each link one row of
// A to one or two columns of B; other inner indices carry entries that cancel nowhere but are zero
// on the other side (they add nothing to AB).
inline std::pair<Eigen::MatrixXd, Eigen::MatrixXd> sparse_integer_pair(int m, int K, int p, int pairs, std::mt19937_64& rng) {
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(m, K), B = Eigen::MatrixXd::Zero(K, p);
  std::uniform_int_distribution<int> row(0, m - 1), col(0, p - 1), value(-9, 9);
  auto nonzero = [&] {
    int v = 0;
    while (v == 0) v = value(rng);
    return double(v);
  };
  for (int k = 0; k < pairs && k < K; ++k) {
    A(row(rng), k) = nonzero();
    B(k, col(rng)) = nonzero();
    if (k % 2) B(k, col(rng)) = nonzero();
  }
  for (int k = pairs; k < K; ++k) A(row(rng), k) = nonzero();  // B's row k is zero: no contribution
  return {A, B};
}

// Bit-identical sketches (and hence Frobenius estimates).
inline void expect_same_sketches(const CompressedProduct& a, const CompressedProduct& b, const std::string& what) {
  ASSERT_EQ(a.repetitions(), b.repetitions()) << what;
  for (int t = 0; t < a.repetitions(); ++t)
    ASSERT_EQ(std::memcmp(a.sketch(t).data(), b.sketch(t).data(), a.sketch(t).size_bytes()), 0) << what << ", repetition " << t;
  ASSERT_EQ(a.frobenius_estimate(), b.frobenius_estimate()) << what;
}

inline Eigen::MatrixXd gaussian(int rows, int cols, std::mt19937_64& rng, double scale = 1.0) {
  std::normal_distribution<double> normal(0.0, scale);
  Eigen::MatrixXd M(rows, cols);
  for (Eigen::Index j = 0; j < M.cols(); ++j)
    for (Eigen::Index i = 0; i < M.rows(); ++i) M(i, j) = normal(rng);
  return M;
}

// C = G_A G_B (small Gaussian background) + `planted` entries of size `planted_size`, each put in by
// an inner index of its own (so C is known exactly).
struct Planted {
  Eigen::MatrixXd A, B;
};
inline Planted planted_product(int m, int K, int p, int planted, double planted_size, std::mt19937_64& rng) {
  Planted w{Eigen::MatrixXd::Zero(m, K + planted), Eigen::MatrixXd::Zero(K + planted, p)};
  w.A.leftCols(K) = gaussian(m, K, rng);
  w.B.topRows(K) = gaussian(K, p, rng);
  std::uniform_int_distribution<int> row(0, m - 1), col(0, p - 1);
  std::uniform_real_distribution<double> size(1.0, 2.0);
  for (int q = 0; q < planted; ++q) {
    w.A(row(rng), K + q) = planted_size * size(rng) * (q % 2 ? -1 : 1);
    w.B(K + q, col(rng)) = 1.0;
  }
  return w;
}

}  // namespace pagh::test
