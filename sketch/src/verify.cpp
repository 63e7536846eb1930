// Error metrics of a sketch against the exact product.
#include "sketch/verify.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <utility>

#include "pagh/error.hpp"

namespace pagh {
namespace {

template <class F>
Eigen::MatrixXd timed(F&& f, double* ms) {
  const auto t0 = std::chrono::steady_clock::now();
  Eigen::MatrixXd C = f();
  if (ms) *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return C;
}

}  // namespace

Eigen::MatrixXd exact_product(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, double* ms) {
  if (A.cols() != B.rows()) throw Error("pagh::exact_product", "dimension mismatch: cols(A) != rows(B)");
  return timed([&] { return Eigen::MatrixXd(A * B); }, ms);
}

Eigen::MatrixXd exact_product(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B, double* ms) {
  if (A.cols() != B.rows()) throw Error("pagh::exact_product", "dimension mismatch: cols(A) != rows(B)");
  return timed([&] { return Eigen::MatrixXd(Eigen::SparseMatrix<double>(A * B)); }, ms);
}

Metrics verify(const CompressedProduct& product, const Eigen::MatrixXd& exact, std::size_t k) {
  if (exact.rows() != product.rows() || exact.cols() != product.cols())
    throw Error("pagh::verify", "the exact product's shape differs from the sketch's");
  const Eigen::MatrixXd estimate = product.decompress();
  Metrics m;
  m.frobenius_exact = exact.norm();
  m.frobenius_estimate = product.frobenius_estimate();
  const double err = (estimate - exact).norm();
  m.relative_frobenius_error = m.frobenius_exact > 0 ? err / m.frobenius_exact : (err > 0 ? INFINITY : 0.0);
  m.max_abs_error = exact.size() ? (estimate - exact).cwiseAbs().maxCoeff() : 0.0;
  const double sigma = m.frobenius_exact / std::sqrt(static_cast<double>(product.buckets()));
  m.max_error_in_sigmas = sigma > 0 ? m.max_abs_error / sigma : 0.0;

  // Top-k by magnitude of the exact product (ties by row, column) against the sketch's top-k.
  k = std::min<std::size_t>(k, static_cast<std::size_t>(exact.size()));
  m.top_k = k;
  if (k == 0) return m;
  std::vector<std::pair<std::int64_t, std::int64_t>> order;
  order.reserve(static_cast<std::size_t>(exact.size()));
  for (Eigen::Index j = 0; j < exact.cols(); ++j)
    for (Eigen::Index i = 0; i < exact.rows(); ++i) order.emplace_back(i, j);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(), [&](auto a, auto b) {
    const double x = std::fabs(exact(a.first, a.second)), y = std::fabs(exact(b.first, b.second));
    return x != y ? x > y : a < b;
  });
  const std::set<std::pair<std::int64_t, std::int64_t>> truth(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k));
  const auto found = product.top_k(k);
  std::size_t hits = 0;
  for (const Entry& e : found) hits += truth.count({e.row, e.col});
  m.top_k_recall = static_cast<double>(hits) / static_cast<double>(k);
  m.top_k_precision = found.empty() ? 0.0 : static_cast<double>(hits) / static_cast<double>(found.size());
  return m;
}

}  // namespace pagh
