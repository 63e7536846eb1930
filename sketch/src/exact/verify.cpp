// Error metrics of a sketch against the exact product.
#include "sketch/verify.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <set>
#include <vector>
#include <utility>

#include "pagh/error.hpp"
#include "sketch/noise_model.hpp"

namespace pagh {
namespace {

template <class F>
Eigen::MatrixXd timed(F&& f, double* ms) {
  const auto t0 = std::chrono::steady_clock::now();
  Eigen::MatrixXd C = f();
  if (ms) *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return C;
}

// Recall and precision of `found` against the k-th largest exact magnitude, and the noise model's
// intervals (selected above `cutoff`) and flags on it.
template <class Exact>
void score_top_k(const CompressedProduct& product, const std::vector<Entry>& found, double cutoff, double kth, Exact exact,
                 Metrics& m) {
  const NoiseModel noise(product);
  std::size_t hits = 0, covered = 0;
  for (const Entry& e : found) {
    const double truth = exact(e);
    // Ties within rounding count: products of normalised data tie at 1 +- 1e-9.
    hits += std::fabs(truth) >= kth * (1 - 1e-9);
    const EntryAssessment a = noise.assess(product, e, 0.95, 0.05, cutoff);
    covered += truth >= a.interval.low && truth <= a.interval.high;
    if (!a.significant) continue;
    ++m.significant;
    m.false_significant += std::fabs(truth) <= a.half_width;
  }
  m.top_k_recall = static_cast<double>(std::min(hits, m.top_k)) / static_cast<double>(m.top_k);
  m.top_k_precision = found.empty() ? 0.0 : static_cast<double>(hits) / static_cast<double>(found.size());
  m.interval_coverage = found.empty() ? NAN : static_cast<double>(covered) / static_cast<double>(found.size());
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

Eigen::SparseMatrix<double> exact_sparse_product(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B,
                                                 double* ms) {
  if (A.cols() != B.rows()) throw Error("pagh::exact_sparse_product", "dimension mismatch: cols(A) != rows(B)");
  const auto t0 = std::chrono::steady_clock::now();
  Eigen::SparseMatrix<double> C = A * B;
  if (ms) *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return C;
}

double product_work(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B) {
  if (A.cols() != B.rows()) throw Error("pagh::product_work", "dimension mismatch: cols(A) != rows(B)");
  std::vector<double> per_row(static_cast<std::size_t>(B.rows()), 0.0);  // nnz of each row of B
  for (Eigen::Index j = 0; j < B.outerSize(); ++j)
    for (Eigen::SparseMatrix<double>::InnerIterator it(B, j); it; ++it) per_row[static_cast<std::size_t>(it.row())] += 1;
  double work = 0;
  for (Eigen::Index k = 0; k < A.outerSize(); ++k)
    work += static_cast<double>(A.col(k).nonZeros()) * per_row[static_cast<std::size_t>(k)];
  return work;
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

  k = std::min<std::size_t>(k, static_cast<std::size_t>(exact.size()));
  m.top_k = k;
  if (k == 0) return m;
  std::vector<double> magnitudes(static_cast<std::size_t>(exact.size()));
  Eigen::Map<Eigen::VectorXd>(magnitudes.data(), exact.size()) = Eigen::Map<const Eigen::VectorXd>(exact.data(), exact.size()).cwiseAbs();
  std::nth_element(magnitudes.begin(), magnitudes.begin() + static_cast<std::ptrdiff_t>(k - 1), magnitudes.end(), std::greater<>());
  std::vector<Entry> found = product.top_k(k + 1);
  const double cutoff = keep_top(found, k);
  score_top_k(product, found, cutoff, magnitudes[k - 1], [&](const Entry& e) { return exact(e.row, e.col); }, m);
  return m;
}

Metrics verify(const CompressedProduct& product, const Eigen::SparseMatrix<double>& exact, std::size_t k) {
  if (exact.rows() != product.rows() || exact.cols() != product.cols())
    throw Error("pagh::verify", "the exact product's shape differs from the sketch's");
  Metrics m;
  m.all_entries = false;
  m.relative_frobenius_error = NAN;
  m.frobenius_estimate = product.frobenius_estimate();
  std::vector<double> magnitudes;
  magnitudes.reserve(static_cast<std::size_t>(exact.nonZeros()));
  long double squares = 0;
  for (Eigen::Index j = 0; j < exact.outerSize(); ++j)
    for (Eigen::SparseMatrix<double>::InnerIterator it(exact, j); it; ++it) {
      squares += static_cast<long double>(it.value()) * it.value();
      magnitudes.push_back(std::fabs(it.value()));
      m.max_abs_error = std::max(m.max_abs_error, std::fabs(product.estimate(it.row(), it.col()) - it.value()));
    }
  m.frobenius_exact = static_cast<double>(std::sqrt(squares));
  const double total = static_cast<double>(exact.rows()) * static_cast<double>(exact.cols());
  k = static_cast<std::size_t>(std::min<double>(static_cast<double>(k), total));
  m.top_k = k;
  std::vector<Entry> found = k ? product.top_k(k + 1) : std::vector<Entry>{};
  const double cutoff = keep_top(found, k);
  for (const Entry& e : found) m.max_abs_error = std::max(m.max_abs_error, std::fabs(e.value - exact.coeff(e.row, e.col)));
  const double sigma = m.frobenius_exact / std::sqrt(static_cast<double>(product.buckets()));
  m.max_error_in_sigmas = sigma > 0 ? m.max_abs_error / sigma : 0.0;
  if (k == 0) return m;
  // The k-th largest exact magnitude (zero when C has fewer than k nonzeros).
  double kth = 0;
  if (magnitudes.size() >= k) {
    std::nth_element(magnitudes.begin(), magnitudes.begin() + static_cast<std::ptrdiff_t>(k - 1), magnitudes.end(), std::greater<>());
    kth = magnitudes[k - 1];
  }
  score_top_k(product, found, cutoff, kth, [&](const Entry& e) { return exact.coeff(e.row, e.col); }, m);
  return m;
}

}  // namespace pagh
