#include "correlation.hpp"

#include <cmath>
#include <vector>

#include "cli_error.hpp"
#include "inputs.hpp"

namespace pagh_mm {
namespace {

// Mean and the norm of the centred vector of each row of A (rows = true) or column of B, over n
// entries of which the stored ones are visited: sum of squares of (x - mean) over the stored ones
// plus the mean's square for each entry not stored. Two passes: no cancellation of large means.
struct Moments {
  std::vector<double> mean, norm;
};

Moments moments(const MatrixData& data, bool rows, std::int64_t n) {
  const auto count = [&](std::int64_t outer) {
    Moments m;
    m.mean.assign(static_cast<std::size_t>(outer), 0.0);
    m.norm.assign(static_cast<std::size_t>(outer), 0.0);
    return m;
  };
  if (const auto* dense = std::get_if<Eigen::MatrixXd>(&data)) {
    const Eigen::MatrixXd& M = *dense;
    Moments m = count(rows ? M.rows() : M.cols());
    for (std::size_t t = 0; t < m.mean.size(); ++t) {
      const auto v = [&](std::int64_t k) { return rows ? M(static_cast<Eigen::Index>(t), k) : M(k, static_cast<Eigen::Index>(t)); };
      double sum = 0, squares = 0;
      for (std::int64_t k = 0; k < n; ++k) sum += v(k);
      const double mean = sum / static_cast<double>(n);
      for (std::int64_t k = 0; k < n; ++k) squares += (v(k) - mean) * (v(k) - mean);
      m.mean[t] = mean, m.norm[t] = std::sqrt(squares);
    }
    return m;
  }
  const auto& S = std::get<Eigen::SparseMatrix<double>>(data);
  Moments m = count(rows ? S.rows() : S.cols());
  std::vector<double> stored(m.mean.size(), 0.0);
  for (Eigen::Index j = 0; j < S.outerSize(); ++j)
    for (Eigen::SparseMatrix<double>::InnerIterator it(S, j); it; ++it) {
      const std::size_t t = static_cast<std::size_t>(rows ? it.row() : it.col());
      m.mean[t] += it.value(), stored[t] += 1;
    }
  for (double& mean : m.mean) mean /= static_cast<double>(n);
  for (Eigen::Index j = 0; j < S.outerSize(); ++j)
    for (Eigen::SparseMatrix<double>::InnerIterator it(S, j); it; ++it) {
      const std::size_t t = static_cast<std::size_t>(rows ? it.row() : it.col());
      m.norm[t] += (it.value() - m.mean[t]) * (it.value() - m.mean[t]);
    }
  for (std::size_t t = 0; t < m.norm.size(); ++t)
    m.norm[t] = std::sqrt(m.norm[t] + (static_cast<double>(n) - stored[t]) * m.mean[t] * m.mean[t]);
  return m;
}

// 1 / norm, or 0 for a constant vector (its correlations are undefined: it takes part in none).
std::int64_t invert(std::vector<double>& norm) {
  std::int64_t constant = 0;
  for (double& s : norm) {
    if (s > 0 && std::isfinite(1 / s)) s = 1 / s;
    else s = 0, ++constant;
  }
  return constant;
}

}  // namespace

Standardized standardize_for_correlation(InputMatrix& a, InputMatrix& b) {
  const std::int64_t n = a.cols();
  if (n < 2) usage_error("--correlation", "needs at least two samples (the inner dimension is " + std::to_string(n) + ")");
  Moments ma = moments(a.data, true, n), mb = moments(b.data, false, n);
  Standardized out;
  out.constant_rows_a = invert(ma.norm), out.constant_cols_b = invert(mb.norm);
  const double root_n = std::sqrt(static_cast<double>(n));
  // Dense: centre and scale in place.
  if (auto* A = std::get_if<Eigen::MatrixXd>(&a.data))
    for (Eigen::Index k = 0; k < A->cols(); ++k)
      for (Eigen::Index i = 0; i < A->rows(); ++i) (*A)(i, k) = ((*A)(i, k) - ma.mean[i]) * ma.norm[i];
  if (auto* B = std::get_if<Eigen::MatrixXd>(&b.data))
    for (Eigen::Index j = 0; j < B->cols(); ++j)
      for (Eigen::Index k = 0; k < B->rows(); ++k) (*B)(k, j) = ((*B)(k, j) - mb.mean[j]) * mb.norm[j];
  // Sparse: scaled in place, not centred (that would fill them). Where the other side is dense it
  // is centred, and sum_k a_ik (b_kj - nu_j) already removes mu_i's term; where both are sparse the
  // means join as one extra inner index.
  if (auto* A = std::get_if<Eigen::SparseMatrix<double>>(&a.data))
    *A = Eigen::SparseMatrix<double>(Eigen::VectorXd::Map(ma.norm.data(), A->rows()).asDiagonal() * *A);
  if (auto* B = std::get_if<Eigen::SparseMatrix<double>>(&b.data))
    *B = Eigen::SparseMatrix<double>(*B * Eigen::VectorXd::Map(mb.norm.data(), B->cols()).asDiagonal());
  if (a.is_dense() || b.is_dense()) return out;
  out.augmented = true;
  auto& A = std::get<Eigen::SparseMatrix<double>>(a.data);
  auto& B = std::get<Eigen::SparseMatrix<double>>(b.data);
  A.conservativeResize(A.rows(), A.cols() + 1);
  for (Eigen::Index i = 0; i < A.rows(); ++i)
    if (ma.mean[i] != 0 && ma.norm[i] != 0) A.insert(i, A.cols() - 1) = -root_n * ma.mean[i] * ma.norm[i];
  A.makeCompressed();
  B.conservativeResize(B.rows() + 1, B.cols());
  for (Eigen::Index j = 0; j < B.cols(); ++j)
    if (mb.mean[j] != 0 && mb.norm[j] != 0) B.insert(B.rows() - 1, j) = root_n * mb.mean[j] * mb.norm[j];
  B.makeCompressed();
  return out;
}

}  // namespace pagh_mm
