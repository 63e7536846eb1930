// Synthetic workloads for the compressed product C = A*B (A is m x k, B is k x p): deterministic
// for a given seed on every platform (std::mt19937_64 with the project's own Gaussian and index
// draws, since std::normal_distribution differs between standard libraries).
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCore>

namespace pagh::matrix_io {

// A large entry planted in the product: (A*B)(row, col) = background + value, where the background
// is the sum over the unplanted inner indices (see each workload). Indices are 0-based.
struct PlantedEntry {
  std::int64_t row = 0;
  std::int64_t col = 0;
  double value = 0.0;
};

struct DensePair {
  Eigen::MatrixXd a;
  Eigen::MatrixXd b;
  std::vector<PlantedEntry> planted;
};

struct SparsePair {
  Eigen::SparseMatrix<double> a;
  Eigen::SparseMatrix<double> b;
};

// Dense Gaussian A and B (entries N(0, scale^2), or rounded to integers when integer_entries), with
// `planted` large entries in A*B. Each planted entry (i, j, v) owns one inner index t: column t of A
// is zero except A(i, t), row t of B is zero except B(t, j), and A(i, t)*B(t, j) = v exactly, so
// (A*B)(i, j) = v + sum over the other inner indices, and no other product entry is touched by t.
// The background entries of A*B have standard deviation about scale^2 * sqrt(k - planted).
// Each planted value is +-|planted_value| with a random sign; planted_value 0 means 10 times that
// standard deviation; integer_entries rounds |v| to a perfect square a^2, a >= 1 (then A(i, t) = +-a
// and B(t, j) = a are integers too).
// Positions are distinct; needs planted <= k and planted <= m*p.
struct PlantedDenseOptions {
  std::int64_t m = 64, k = 96, p = 80;
  std::uint64_t seed = 1;
  std::int64_t planted = 4;
  double planted_value = 0.0;
  double scale = 1.0;
  bool integer_entries = false;
};
DensePair planted_dense(const PlantedDenseOptions& options);

// Sparse A with a_per_row nonzeros in every row and B with b_per_col nonzeros in every column, at
// uniformly random distinct positions; values N(0, 1), or integers in {-3..3} \ {0} when
// integer_entries. A*B has about m*p*min(1, a_per_row*b_per_col/k) nonzeros: sparse when
// a_per_row*b_per_col << k.
struct SparseProductOptions {
  std::int64_t m = 1000, k = 1000, p = 1000;
  std::uint64_t seed = 1;
  std::int64_t a_per_row = 4;
  std::int64_t b_per_col = 4;
  bool integer_entries = false;
};
SparsePair sparse_product(const SparseProductOptions& options);

// A = U_a * V_a / sqrt(rank) + S_a and B = U_b * V_b / sqrt(rank) + S_b: low-rank Gaussian parts
// (factors N(0, 1), so entries have variance 1) plus sparse parts whose entries, each present with
// probability sparse_density, are N(0, sparse_scale^2). Returned dense.
struct LowRankPlusSparseOptions {
  std::int64_t m = 256, k = 256, p = 256;
  std::uint64_t seed = 1;
  std::int64_t rank = 8;
  double sparse_density = 0.01;
  double sparse_scale = 10.0;
};
DensePair low_rank_plus_sparse(const LowRankPlusSparseOptions& options);

// Sample covariance: X is samples x features, N(0, 1) entries, except that for each of `pairs`
// disjoint feature pairs (f, g) column g is correlation*X(:, f) + sqrt(1 - correlation^2)*noise.
// Returns A = X^T (features x samples) and B = X (samples x features), so A*B = X^T X; planted lists
// (f, g) and (g, f) with value correlation*samples, the expected size of those off-diagonal entries
// (the others have standard deviation sqrt(samples); the diagonal is about samples).
struct SampleCovarianceOptions {
  std::int64_t samples = 1000;
  std::int64_t features = 200;
  std::uint64_t seed = 1;
  std::int64_t pairs = 3;
  double correlation = 0.9;
};
DensePair sample_covariance(const SampleCovarianceOptions& options);

}  // namespace pagh::matrix_io
