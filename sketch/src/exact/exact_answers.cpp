#include "sketch/exact_answers.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "estimate/entry_ranking.hpp"
#include "pagh/error.hpp"
#include "sketch/too_many_entries.hpp"

namespace pagh {
namespace {

// Entries per panel and thread: a panel of rows of C small enough to stay in the last-level cache's
// neighbourhood and large enough for GEMM to run at speed.
constexpr double kPanelEntries = double(1 << 20);

void check_shapes(Eigen::Index a_cols, Eigen::Index b_rows, const char* where) {
  if (a_cols != b_rows) throw Error(where, "dimension mismatch: cols(A) != rows(B)");
}

void check_threshold(double threshold, const char* where) {
  if (!(threshold >= 0)) throw Error(where, "the threshold must be a number >= 0");
}

// Calls visit(panel, first_row) for consecutive row panels of A*B, on `threads` threads; visit gets
// the thread's number so that it can keep per-thread state.
template <class Visit>
void for_each_panel(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, int threads, Visit visit) {
  const Eigen::Index m = A.rows(), p = B.cols();
  const Eigen::Index rows = std::max<Eigen::Index>(1, static_cast<Eigen::Index>(kPanelEntries / std::max<double>(1.0, double(p))));
  const Eigen::Index panels = (m + rows - 1) / rows;
#pragma omp parallel num_threads(threads)
  {
    Eigen::MatrixXd panel;
#pragma omp for schedule(dynamic, 1)
    for (Eigen::Index q = 0; q < panels; ++q) {
      const Eigen::Index first = q * rows, count = std::min(rows, m - first);
      panel.noalias() = A.middleRows(first, count) * B;
      visit(panel, first, omp_get_thread_num());
    }
  }
}

int thread_count(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

std::vector<Entry> ranked(std::vector<Entry> entries) {
  std::sort(entries.begin(), entries.end(), detail::ranks_before);
  return entries;
}

template <class F>
void for_each_nonzero(const Eigen::SparseMatrix<double>& C, F f) {
  for (Eigen::Index j = 0; j < C.outerSize(); ++j)
    for (Eigen::SparseMatrix<double>::InnerIterator it(C, j); it; ++it) f(Entry{it.row(), it.col(), it.value(), 0.0});
}

}  // namespace

std::vector<Entry> exact_top_k(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, std::size_t k, int threads) {
  check_shapes(A.cols(), B.rows(), "pagh::exact_top_k");
  const int n = thread_count(threads);
  std::vector<detail::BestK> best(static_cast<std::size_t>(n), detail::BestK(k));
  for_each_panel(A, B, n, [&](const Eigen::MatrixXd& panel, Eigen::Index first, int thread) {
    auto& mine = best[static_cast<std::size_t>(thread)];
    for (Eigen::Index j = 0; j < panel.cols(); ++j)
      for (Eigen::Index i = 0; i < panel.rows(); ++i) mine.offer(Entry{first + i, j, panel(i, j), 0.0});
  });
  std::vector<Entry> all;
  for (const auto& b : best) all.insert(all.end(), b.kept().begin(), b.kept().end());
  return detail::best_of(std::move(all), k);
}

std::vector<Entry> exact_top_k(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B, std::size_t k) {
  check_shapes(A.cols(), B.rows(), "pagh::exact_top_k");
  const Eigen::SparseMatrix<double> C = A * B;
  detail::BestK best(k);
  for_each_nonzero(C, [&](const Entry& e) {
    if (e.value != 0) best.offer(e);  // stored zeros (cancellations) are ranked with the other zeros below
  });
  // Fewer than k nonzeros: the rest of the top-k are zeros, first by row then column, as the scan
  // of all m * p entries would rank them.
  std::vector<Entry> out = detail::best_of(best.kept(), k);
  const double total = static_cast<double>(C.rows()) * static_cast<double>(C.cols());
  for (Eigen::Index i = 0; out.size() < std::min<double>(static_cast<double>(k), total) && i < C.rows(); ++i)
    for (Eigen::Index j = 0; out.size() < k && j < C.cols(); ++j)
      if (C.coeff(i, j) == 0) out.push_back(Entry{i, j, 0.0, 0.0});
  return out;
}

std::vector<Entry> exact_above(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, double threshold, std::size_t max_entries,
                               int threads) {
  check_shapes(A.cols(), B.rows(), "pagh::exact_above");
  check_threshold(threshold, "pagh::exact_above");
  const int n = thread_count(threads);
  std::vector<std::vector<Entry>> found(static_cast<std::size_t>(n));
  bool too_many = false;
  for_each_panel(A, B, n, [&](const Eigen::MatrixXd& panel, Eigen::Index first, int thread) {
    auto& mine = found[static_cast<std::size_t>(thread)];
    for (Eigen::Index j = 0; j < panel.cols(); ++j)
      for (Eigen::Index i = 0; i < panel.rows(); ++i)
        if (std::fabs(panel(i, j)) >= threshold && mine.size() <= max_entries) mine.push_back(Entry{first + i, j, panel(i, j), 0.0});
    if (mine.size() > max_entries) {
#pragma omp atomic write
      too_many = true;
    }
  });
  std::size_t total = 0;
  for (const auto& f : found) total += f.size();
  if (too_many || total > max_entries) throw too_many_entries("pagh::exact_above", max_entries, threshold);
  std::vector<Entry> all;
  all.reserve(total);
  for (const auto& f : found) all.insert(all.end(), f.begin(), f.end());
  return ranked(std::move(all));
}

std::vector<Entry> exact_above(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B, double threshold,
                               std::size_t max_entries) {
  check_shapes(A.cols(), B.rows(), "pagh::exact_above");
  check_threshold(threshold, "pagh::exact_above");
  const Eigen::SparseMatrix<double> C = A * B;
  // threshold 0 selects every entry, the zeros of C too.
  const double total = static_cast<double>(C.rows()) * static_cast<double>(C.cols());
  if (threshold == 0 && total > static_cast<double>(max_entries)) throw too_many_entries("pagh::exact_above", max_entries, threshold);
  std::vector<Entry> all;
  if (threshold == 0) {
    const Eigen::MatrixXd dense(C);
    for (Eigen::Index j = 0; j < dense.cols(); ++j)
      for (Eigen::Index i = 0; i < dense.rows(); ++i) all.push_back(Entry{i, j, dense(i, j), 0.0});
    return ranked(std::move(all));
  }
  for_each_nonzero(C, [&](const Entry& e) {
    if (std::fabs(e.value) >= threshold) all.push_back(e);
  });
  if (all.size() > max_entries) throw too_many_entries("pagh::exact_above", max_entries, threshold);
  return ranked(std::move(all));
}

namespace {
void check_square(Eigen::Index m, Eigen::Index K, Eigen::Index K2, Eigen::Index p) {
  if (K != K2 || m != p) throw Error("pagh::product_diagonal", "the product must be square with cols(A) == rows(B)");
}
}  // namespace

std::vector<Entry> product_diagonal(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
  check_square(A.rows(), A.cols(), B.rows(), B.cols());
  // d_i = sum_k A(i, k) B(k, i), k ascending. Row i of the column-major A has stride m (a page per
  // element once m >= 512): rows go in blocks, k outer, so that the block's part of each column of
  // A is contiguous and B's columns of the block are each read front to back.
  const Eigen::Index m = A.rows(), K = A.cols();
  constexpr Eigen::Index block = 32;
  std::vector<double> d(static_cast<std::size_t>(m), 0.0);
#pragma omp parallel for schedule(dynamic, 1) if (m * K >= (Eigen::Index{1} << 20))
  for (Eigen::Index i0 = 0; i0 < m; i0 += block) {
    const Eigen::Index n = std::min(block, m - i0);
    double sums[block] = {};
    for (Eigen::Index k = 0; k < K; ++k) {
      const double* a = A.data() + k * m + i0;
      const double* b = B.data() + i0 * K + k;
      for (Eigen::Index t = 0; t < n; ++t) sums[t] += a[t] * b[t * K];
    }
    std::copy(sums, sums + n, d.begin() + i0);
  }
  std::vector<Entry> out;
  for (Eigen::Index i = 0; i < m; ++i)
    if (d[static_cast<std::size_t>(i)] != 0) out.push_back(Entry{i, i, d[static_cast<std::size_t>(i)], 0.0});
  return out;
}

std::vector<Entry> product_diagonal(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B) {
  check_square(A.rows(), A.cols(), B.rows(), B.cols());
  // d_i = sum over k ascending of A(i, k) B(k, i) where both are stored (as the sparse product
  // forms it): column i of B gives the k's in order, A(i, k) is found by binary search in A's
  // column k. Each i is one sum, so the rows go in parallel with the bits of one thread.
  const Eigen::Index m = A.rows();
  const auto stored = [](const Eigen::SparseMatrix<double>& M, Eigen::Index col) {
    const Eigen::Index begin = M.outerIndexPtr()[col];
    const Eigen::Index end = M.isCompressed() ? M.outerIndexPtr()[col + 1] : begin + M.innerNonZeroPtr()[col];
    return std::pair{M.innerIndexPtr() + begin, M.innerIndexPtr() + end};
  };
  std::vector<double> d(static_cast<std::size_t>(m), 0.0);
#pragma omp parallel for schedule(dynamic, 4096) if (B.nonZeros() >= (Eigen::Index{1} << 16))
  for (Eigen::Index i = 0; i < m; ++i) {
    double sum = 0;
    for (Eigen::SparseMatrix<double>::InnerIterator it(B, i); it; ++it) {
      const auto [first, last] = stored(A, it.index());
      const auto* at = std::lower_bound(first, last, static_cast<int>(i));
      if (at != last && *at == i) sum += A.valuePtr()[at - A.innerIndexPtr()] * it.value();
    }
    d[static_cast<std::size_t>(i)] = sum;
  }
  std::vector<Entry> out;
  for (std::size_t i = 0; i < d.size(); ++i)
    if (d[i] != 0) out.push_back(Entry{static_cast<std::int64_t>(i), static_cast<std::int64_t>(i), d[i], 0.0});
  return out;
}

std::vector<Entry> top_k_of(const Eigen::MatrixXd& C, std::size_t k) {
  detail::BestK best(k);
  for (Eigen::Index j = 0; j < C.cols(); ++j)
    for (Eigen::Index i = 0; i < C.rows(); ++i) best.offer(Entry{i, j, C(i, j), 0.0});
  return detail::best_of(best.kept(), k);
}

std::vector<Entry> above_of(const Eigen::MatrixXd& C, double threshold, std::size_t max_entries) {
  check_threshold(threshold, "pagh::above_of");
  std::vector<Entry> all;
  for (Eigen::Index j = 0; j < C.cols(); ++j)
    for (Eigen::Index i = 0; i < C.rows(); ++i)
      if (std::fabs(C(i, j)) >= threshold) {
        if (all.size() == max_entries) throw too_many_entries("pagh::above_of", max_entries, threshold);
        all.push_back(Entry{i, j, C(i, j), 0.0});
      }
  return ranked(std::move(all));
}

}  // namespace pagh
