#include "known_diagonal.hpp"

#include <algorithm>
#include <cmath>

#include "shared_operands.hpp"
#include "sketch/exact_answers.hpp"
#include "sketch_answers.hpp"

namespace pagh_mm {

KnownDiagonal subtract_known_diagonal(pagh::CompressedProduct& product, const InputMatrix& a, const InputMatrix& b,
                                      const MultiplyOptions& o) {
  KnownDiagonal known;
  known.excluded = o.no_diagonal;
  if (a.rows() != b.cols()) return known;
  if (a.shared) {
    known.entries = a.shared->diagonal();
  } else if (a.is_dense() && b.is_dense()) {
    known.entries = pagh::product_diagonal(std::get<0>(a.data), std::get<0>(b.data));
  } else if (!a.is_dense() && !b.is_dense()) {
    known.entries = pagh::product_diagonal(std::get<1>(a.data), std::get<1>(b.data));  // read in place
  } else {  // one of each: the dense one as a sparse copy
    const auto sparse = [](const MatrixData& m) {
      return m.index() == 1 ? std::get<1>(m) : Eigen::SparseMatrix<double>(std::get<0>(m).sparseView());
    };
    known.entries = pagh::product_diagonal(sparse(a.data), sparse(b.data));
  }
  double energy = 0;
  for (const auto& e : known.entries) energy += e.value * e.value;
  const double total = product.frobenius_estimate() * product.frobenius_estimate();
  known.energy_share = total > 0 ? energy / total : 0.0;
  if (!known.excluded && known.energy_share < 0.01) return known;
  product.subtract(known.entries);
  known.subtracted = true;
  return known;
}

std::vector<pagh::Entry> top_off_diagonal(const pagh::CompressedProduct& product, std::size_t n, pagh::Recovery how,
                                          pagh::RecoveryStats* stats) {
  const double entries = static_cast<double>(product.rows()) * static_cast<double>(product.cols());
  for (std::size_t ask = n;; ask *= 2) {
    auto got = product.top_k(ask, how, stats);
    const std::size_t asked_for = got.size();
    std::erase_if(got, [](const pagh::Entry& e) { return e.row == e.col; });
    if (got.size() >= n || asked_for < ask || static_cast<double>(ask) >= entries) {
      if (got.size() > n) got.resize(n);
      return got;
    }
  }
}

std::vector<pagh::Entry> select_with_known_diagonal(const pagh::CompressedProduct& product, const KnownDiagonal& diagonal,
                                                    const MultiplyOptions& o, pagh::RecoveryStats& stats, double& cutoff) {
  const pagh::Recovery how = o.exhaustive ? pagh::Recovery::exhaustive : pagh::Recovery::automatic;
  std::vector<pagh::Entry> estimates;  // off-diagonal, largest first
  if (!o.threshold) {
    estimates = top_off_diagonal(product, o.top + 1, how, &stats);
  } else {
    estimates = entries_above([&](double t) { return product.above(t, kMaxAboveEntries, how, &stats); }, *o.threshold,
                              std::nullopt, "--threshold");
    std::erase_if(estimates, [](const pagh::Entry& e) { return e.row == e.col; });
  }
  std::vector<pagh::Entry> found = estimates;
  if (!diagonal.excluded)
    for (const auto& e : diagonal.entries)
      if (!o.threshold || std::fabs(e.value) >= *o.threshold) found.push_back(e);
  std::sort(found.begin(), found.end(), pagh::ranks_before);
  const std::size_t cap = !o.threshold || o.top_given ? o.top : found.size();
  if (found.size() > cap) found.resize(cap);
  // The estimates kept are the leading ones; the first left out is the intervals' cutoff.
  const auto kept = static_cast<std::size_t>(std::count_if(found.begin(), found.end(), [](const pagh::Entry& e) { return e.row != e.col; }));
  cutoff = std::max(o.threshold.value_or(0.0), kept < estimates.size() ? std::fabs(estimates[kept].value) : 0.0);
  return found;
}

}  // namespace pagh_mm
