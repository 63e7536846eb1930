// One entry of A * B at a time: row i of A against column j of B, k ascending. A sparse A is kept
// row-major (a copy made once) so that its row i is contiguous. A dense A is column-major, so its
// row i has stride m (a page per element for tall A): evaluate() copies the candidates' rows, a
// few at a time, into a row-major block first, each row once however many candidates share it.
#include <omp.h>

#include <algorithm>
#include <numeric>

#include <string>

#include "pagh/error.hpp"
#include "sketch/refine.hpp"

namespace pagh {
namespace {

using RowMajor = Eigen::SparseMatrix<double, Eigen::RowMajor>;

void check_inner(std::int64_t a_cols, std::int64_t b_rows) {
  if (a_cols != b_rows)
    throw Error("ExactEntries: A has " + std::to_string(a_cols) + " columns but B has " + std::to_string(b_rows) + " rows");
}

}  // namespace

ExactEntries::ExactEntries(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B)
    : a_(&A), b_(&B), rows_(A.rows()), inner_(A.cols()), cols_(B.cols()) {
  check_inner(A.cols(), B.rows());
}
ExactEntries::ExactEntries(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B)
    : a_(RowMajor(A)), b_(&B), rows_(A.rows()), inner_(A.cols()), cols_(B.cols()) {
  check_inner(A.cols(), B.rows());
}
ExactEntries::ExactEntries(const Eigen::MatrixXd& A, const Eigen::SparseMatrix<double>& B)
    : a_(&A), b_(&B), rows_(A.rows()), inner_(A.cols()), cols_(B.cols()) {
  check_inner(A.cols(), B.rows());
}
ExactEntries::ExactEntries(const Eigen::SparseMatrix<double>& A, const Eigen::MatrixXd& B)
    : a_(RowMajor(A)), b_(&B), rows_(A.rows()), inner_(A.cols()), cols_(B.cols()) {
  check_inner(A.cols(), B.rows());
}

ExactEntries::ExactEntries(std::int64_t rows, std::int64_t inner, std::int64_t cols, Delegate delegate)
    : a_(static_cast<const Eigen::MatrixXd*>(nullptr)), b_(static_cast<const Eigen::MatrixXd*>(nullptr)),
      delegate_(std::make_shared<const Delegate>(std::move(delegate))), rows_(rows), inner_(inner), cols_(cols) {}

void ExactEntries::check(std::int64_t i, std::int64_t j) const {
  if (i < 0 || i >= rows_ || j < 0 || j >= cols_)
    throw Error("ExactEntries: entry (" + std::to_string(i) + ", " + std::to_string(j) + ") is outside the " +
                std::to_string(rows_) + " x " + std::to_string(cols_) + " product");
}

double ExactEntries::operator()(std::int64_t i, std::int64_t j) const {
  check(i, j);
  return value(i, j);
}

double ExactEntries::value(std::int64_t i, std::int64_t j) const {
  if (delegate_) return delegate_->evaluate({Entry{i, j, 0.0, 0.0}}, 1).at(0).value;
  double sum = 0;
  if (const auto* a = std::get_if<const Eigen::MatrixXd*>(&a_)) {
    const Eigen::MatrixXd& A = **a;
    if (const auto* b = std::get_if<const Eigen::MatrixXd*>(&b_)) {
      const double* column = (*b)->data() + j * inner_;
      for (std::int64_t k = 0; k < inner_; ++k) sum += A(i, k) * column[k];
    } else {
      const auto& B = *std::get<const Eigen::SparseMatrix<double>*>(b_);
      for (Eigen::SparseMatrix<double>::InnerIterator it(B, j); it; ++it) sum += A(i, it.index()) * it.value();
    }
    return sum;
  }
  const RowMajor& A = std::get<RowMajor>(a_);
  if (const auto* b = std::get_if<const Eigen::MatrixXd*>(&b_)) {
    const double* column = (*b)->data() + j * inner_;
    for (RowMajor::InnerIterator it(A, i); it; ++it) sum += it.value() * column[it.index()];
    return sum;
  }
  // Both sparse: merge row i of A with column j of B, both sorted by k.
  const auto& B = *std::get<const Eigen::SparseMatrix<double>*>(b_);
  RowMajor::InnerIterator x(A, i);
  Eigen::SparseMatrix<double>::InnerIterator y(B, j);
  while (x && y) {
    if (x.index() < y.index()) ++x;
    else if (y.index() < x.index()) ++y;
    else sum += x.value() * y.value(), ++x, ++y;
  }
  return sum;
}

double ExactEntries::cost(std::int64_t i, std::int64_t j) const {
  if (delegate_) return delegate_->cost(i, j);
  const auto* a = std::get_if<RowMajor>(&a_);
  const auto* b = std::get_if<const Eigen::SparseMatrix<double>*>(&b_);
  if (!a && !b) return static_cast<double>(inner_);
  double work = 0;
  if (a) work += static_cast<double>(a->outerIndexPtr()[i + 1] - a->outerIndexPtr()[i]);
  if (b) {
    const auto& B = **b;
    work += static_cast<double>(B.isCompressed() ? B.outerIndexPtr()[j + 1] - B.outerIndexPtr()[j] : B.innerNonZeroPtr()[j]);
  }
  return work;
}

std::vector<Entry> ExactEntries::evaluate(const std::vector<Entry>& positions, int threads) const {
  for (const auto& e : positions) check(e.row, e.col);  // throws here, not inside the parallel loop
  if (delegate_) return delegate_->evaluate(positions, threads);
  std::vector<Entry> out(positions.size());
  const std::int64_t n = static_cast<std::int64_t>(positions.size());
  const int team = threads > 0 ? threads : omp_get_max_threads();
  const auto* dense_a = std::get_if<const Eigen::MatrixXd*>(&a_);
  if (!dense_a) {
#pragma omp parallel for schedule(dynamic, 64) num_threads(team) if (n >= 256)
    for (std::int64_t t = 0; t < n; ++t) out[t] = Entry{positions[t].row, positions[t].col, value(positions[t].row, positions[t].col), 0.0};
    return out;
  }
  // Dense A: the positions by row, in groups of up to kRows distinct rows (fewer where that leaves
  // some threads without a group), each group's rows copied into a row-major block; the sums are
  // value()'s (k ascending), so the bits are the same.
  constexpr std::size_t kRows = 32;
  constexpr std::int64_t kTile = 256;
  const Eigen::MatrixXd& A = **dense_a;
  std::vector<std::size_t> order(positions.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return positions[x].row < positions[y].row; });
  std::vector<std::size_t> row_starts;  // into order: where each distinct row begins
  for (std::size_t t = 0; t < order.size(); ++t)
    if (t == 0 || positions[order[t]].row != positions[order[t - 1]].row) row_starts.push_back(t);
  const std::size_t group_rows = std::clamp<std::size_t>(row_starts.size() / (4 * static_cast<std::size_t>(team)), 1, kRows);
  std::vector<std::size_t> group_starts;  // into order
  for (std::size_t r = 0; r < row_starts.size(); r += group_rows) group_starts.push_back(row_starts[r]);
  group_starts.push_back(order.size());
  const std::int64_t groups = static_cast<std::int64_t>(group_starts.size()) - 1;
  // Each position reads a row of A with stride m: worth threads well before 256 of them.
#pragma omp parallel num_threads(team) if (static_cast<double>(n) * static_cast<double>(inner_) >= 0x1p16)
  {
    std::vector<double> block(group_rows * static_cast<std::size_t>(inner_));
    std::vector<std::int64_t> rows;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t g = 0; g < groups; ++g) {
      const std::size_t begin = group_starts[static_cast<std::size_t>(g)], end = group_starts[static_cast<std::size_t>(g) + 1];
      rows.clear();
      for (std::size_t t = begin; t < end; ++t)
        if (rows.empty() || rows.back() != positions[order[t]].row) rows.push_back(positions[order[t]].row);
      // In tiles of kTile columns, row by row: a tile's cache lines and pages serve every row of
      // the group (neighbouring rows share lines) instead of being fetched again for each row.
      for (std::int64_t k0 = 0; k0 < inner_; k0 += kTile) {
        const std::int64_t k1 = std::min(inner_, k0 + kTile);
        for (std::size_t r = 0; r < rows.size(); ++r) {
          const double* from = A.data() + rows[r];
          double* to = block.data() + r * static_cast<std::size_t>(inner_);
          for (std::int64_t k = k0; k < k1; ++k) to[k] = from[k * A.rows()];
        }
      }
      std::size_t r = 0;
      const auto row_of = [&](const Entry& e) {
        while (rows[r] != e.row) ++r;
        return block.data() + r * static_cast<std::size_t>(inner_);
      };
      std::size_t t = begin;
      if (const auto* b = std::get_if<const Eigen::MatrixXd*>(&b_)) {
        // Four sums side by side, each still one chain in k order: the adds' latency overlaps.
        for (; t + 4 <= end; t += 4) {
          const double* row[4];
          const double* column[4];
          for (int x = 0; x < 4; ++x) {
            const Entry& e = positions[order[t + static_cast<std::size_t>(x)]];
            row[x] = row_of(e), column[x] = (*b)->data() + e.col * inner_;
          }
          double sum[4] = {0, 0, 0, 0};
          for (std::int64_t k = 0; k < inner_; ++k)
            for (int x = 0; x < 4; ++x) sum[x] += row[x][k] * column[x][k];
          for (int x = 0; x < 4; ++x) {
            const Entry& e = positions[order[t + static_cast<std::size_t>(x)]];
            out[order[t + static_cast<std::size_t>(x)]] = Entry{e.row, e.col, sum[x], 0.0};
          }
        }
      }
      for (; t < end; ++t) {
        const Entry& e = positions[order[t]];
        const double* row = row_of(e);
        double sum = 0;
        if (const auto* b = std::get_if<const Eigen::MatrixXd*>(&b_)) {
          const double* column = (*b)->data() + e.col * inner_;
          for (std::int64_t k = 0; k < inner_; ++k) sum += row[k] * column[k];
        } else {
          const auto& B = *std::get<const Eigen::SparseMatrix<double>*>(b_);
          for (Eigen::SparseMatrix<double>::InnerIterator it(B, e.col); it; ++it) sum += row[it.index()] * it.value();
        }
        out[order[t]] = Entry{e.row, e.col, sum, 0.0};
      }
    }
  }
  return out;
}

}  // namespace pagh
