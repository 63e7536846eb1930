#include "matrix_io/synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <set>
#include <string>
#include <utility>

#include "pagh/error.hpp"

namespace pagh::matrix_io {
namespace {

constexpr const char* where = "matrix_io::synthetic";

// Draws defined here, bit for bit, rather than by the standard library's distributions (whose
// algorithms are unspecified), so a seed means the same matrices everywhere.
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : engine_(seed) {}

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1p-53; }

  // Box-Muller; the second value of each pair is kept for the next call.
  double gaussian() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u = 0.0;
    while (u == 0.0) u = uniform();  // log(0) is not allowed
    const double radius = std::sqrt(-2.0 * std::log(u));
    const double angle = 2.0 * std::numbers::pi * uniform();
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

  // Uniform in [0, n), n >= 1 (multiply-shift; the bias is below 2^-40 for any n used here).
  std::int64_t below(std::int64_t n) {
    __extension__ using Wide = unsigned __int128;  // GCC and Clang both have it
    return static_cast<std::int64_t>((static_cast<Wide>(engine_()) * static_cast<std::uint64_t>(n)) >> 64);
  }

  // `count` distinct values from [0, n), in the order drawn.
  std::vector<std::int64_t> distinct(std::int64_t count, std::int64_t n) {
    std::vector<std::int64_t> chosen;
    std::set<std::int64_t> seen;
    while (static_cast<std::int64_t>(chosen.size()) < count) {
      const std::int64_t v = below(n);
      if (seen.insert(v).second) chosen.push_back(v);
    }
    return chosen;
  }

 private:
  std::mt19937_64 engine_;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

void require(bool condition, const std::string& why) {
  if (!condition) throw pagh::Error(where, why);
}

void require_dimensions(std::int64_t m, std::int64_t k, std::int64_t p) {
  require(m >= 1 && k >= 1 && p >= 1, "dimensions must be at least 1, got m=" + std::to_string(m) +
                                          " k=" + std::to_string(k) + " p=" + std::to_string(p));
}

Eigen::MatrixXd gaussian_matrix(Draws& draws, std::int64_t rows, std::int64_t cols, double scale) {
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j)
    for (Eigen::Index i = 0; i < rows; ++i) m(i, j) = scale * draws.gaussian();
  return m;
}

}  // namespace

DensePair planted_dense(const PlantedDenseOptions& o) {
  require_dimensions(o.m, o.k, o.p);
  require(o.planted >= 0 && o.planted <= o.k, "planted must lie in 0..k (each planted entry owns an inner index)");
  require(o.planted <= o.m * o.p, "planted must not exceed m*p");
  require(o.scale > 0 && std::isfinite(o.scale), "scale must be positive");
  require(std::isfinite(o.planted_value), "planted_value must be finite");
  Draws draws(o.seed);
  DensePair pair{gaussian_matrix(draws, o.m, o.k, o.scale), gaussian_matrix(draws, o.k, o.p, o.scale), {}};
  if (o.integer_entries) {
    pair.a = pair.a.array().round().matrix();
    pair.b = pair.b.array().round().matrix();
  }
  const double background = o.scale * o.scale * std::sqrt(static_cast<double>(std::max<std::int64_t>(1, o.k - o.planted)));
  const double target = o.planted_value != 0.0 ? o.planted_value : 10.0 * background;
  const std::vector<std::int64_t> inner = draws.distinct(o.planted, o.k);
  const std::vector<std::int64_t> cells = draws.distinct(o.planted, o.m * o.p);
  for (std::int64_t t = 0; t < o.planted; ++t) {
    const std::int64_t i = cells[t] % o.m, j = cells[t] / o.m, s = inner[t];
    const double sign = draws.uniform() < 0.5 ? -1.0 : 1.0;
    double factor = std::sqrt(std::abs(target));
    if (o.integer_entries) factor = std::max(1.0, std::round(factor));
    pair.a.col(s).setZero();
    pair.b.row(s).setZero();
    pair.a(i, s) = sign * factor;
    pair.b(s, j) = factor;
    pair.planted.push_back({i, j, sign * factor * factor});
  }
  return pair;
}

SparsePair sparse_product(const SparseProductOptions& o) {
  require_dimensions(o.m, o.k, o.p);
  require(o.a_per_row >= 0 && o.a_per_row <= o.k, "a_per_row must lie in 0..k");
  require(o.b_per_col >= 0 && o.b_per_col <= o.k, "b_per_col must lie in 0..k");
  Draws draws(o.seed);
  const auto value = [&] {
    if (!o.integer_entries) return draws.gaussian();
    const std::int64_t magnitude = 1 + draws.below(3);
    return static_cast<double>(draws.uniform() < 0.5 ? -magnitude : magnitude);
  };
  std::vector<Eigen::Triplet<double>> a_entries, b_entries;
  a_entries.reserve(static_cast<std::size_t>(o.m * o.a_per_row));
  for (std::int64_t i = 0; i < o.m; ++i)
    for (const std::int64_t c : draws.distinct(o.a_per_row, o.k)) a_entries.emplace_back(i, c, value());
  b_entries.reserve(static_cast<std::size_t>(o.p * o.b_per_col));
  for (std::int64_t j = 0; j < o.p; ++j)
    for (const std::int64_t r : draws.distinct(o.b_per_col, o.k)) b_entries.emplace_back(r, j, value());
  SparsePair pair{Eigen::SparseMatrix<double>(o.m, o.k), Eigen::SparseMatrix<double>(o.k, o.p)};
  pair.a.setFromTriplets(a_entries.begin(), a_entries.end());
  pair.b.setFromTriplets(b_entries.begin(), b_entries.end());
  return pair;
}

DensePair low_rank_plus_sparse(const LowRankPlusSparseOptions& o) {
  require_dimensions(o.m, o.k, o.p);
  require(o.rank >= 1, "rank must be at least 1");
  require(o.sparse_density >= 0 && o.sparse_density <= 1, "sparse_density must lie in [0, 1]");
  require(std::isfinite(o.sparse_scale), "sparse_scale must be finite");
  Draws draws(o.seed);
  const double normalize = 1.0 / std::sqrt(static_cast<double>(o.rank));
  const auto low_rank_plus_sparse_matrix = [&](std::int64_t rows, std::int64_t cols) {
    Eigen::MatrixXd u = gaussian_matrix(draws, rows, o.rank, 1.0);
    Eigen::MatrixXd v = gaussian_matrix(draws, o.rank, cols, normalize);
    Eigen::MatrixXd m = u * v;
    for (Eigen::Index j = 0; j < cols; ++j)
      for (Eigen::Index i = 0; i < rows; ++i)
        if (draws.uniform() < o.sparse_density) m(i, j) += o.sparse_scale * draws.gaussian();
    return m;
  };
  DensePair pair;
  pair.a = low_rank_plus_sparse_matrix(o.m, o.k);
  pair.b = low_rank_plus_sparse_matrix(o.k, o.p);
  return pair;
}

DensePair sample_covariance(const SampleCovarianceOptions& o) {
  require(o.samples >= 1 && o.features >= 2, "needs at least 1 sample and 2 features");
  require(o.pairs >= 0 && 2 * o.pairs <= o.features, "pairs must lie in 0..features/2 (pairs are disjoint)");
  require(o.correlation >= -1 && o.correlation <= 1, "correlation must lie in [-1, 1]");
  Draws draws(o.seed);
  Eigen::MatrixXd x = gaussian_matrix(draws, o.samples, o.features, 1.0);
  const std::vector<std::int64_t> features = draws.distinct(2 * o.pairs, o.features);
  DensePair pair;
  const double rest = std::sqrt(1.0 - o.correlation * o.correlation);
  for (std::int64_t t = 0; t < o.pairs; ++t) {
    const std::int64_t f = features[2 * t], g = features[2 * t + 1];
    x.col(g) = o.correlation * x.col(f) + rest * x.col(g);  // column g was independent noise
    const double expected = o.correlation * static_cast<double>(o.samples);
    pair.planted.push_back({f, g, expected});
    pair.planted.push_back({g, f, expected});
  }
  pair.a = x.transpose();
  pair.b = std::move(x);
  return pair;
}

}  // namespace pagh::matrix_io
