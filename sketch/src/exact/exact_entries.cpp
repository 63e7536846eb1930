// One entry of A * B at a time: row i of A against column j of B, k ascending. A sparse A is kept
// row-major (a copy made once) so that its row i is contiguous; a dense A is read with stride m,
// which costs little for the few entries refinement asks for.
#include <omp.h>

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
  std::vector<Entry> out(positions.size());
  const std::int64_t n = static_cast<std::int64_t>(positions.size());
  const int team = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 64) num_threads(team) if (n >= 256)
  for (std::int64_t t = 0; t < n; ++t) out[t] = Entry{positions[t].row, positions[t].col, value(positions[t].row, positions[t].col), 0.0};
  return out;
}

}  // namespace pagh
