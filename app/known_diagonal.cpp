#include "known_diagonal.hpp"

#include <algorithm>
#include <cmath>

#include "sketch/exact_answers.hpp"
#include "sketch_answers.hpp"

namespace pagh_mm {

KnownDiagonal subtract_known_diagonal(pagh::CompressedProduct& product, const InputMatrix& a, const InputMatrix& b,
                                      const MultiplyOptions& o) {
  KnownDiagonal known;
  known.excluded = o.no_diagonal;
  if (a.rows() != b.cols()) return known;
  if (a.is_dense() && b.is_dense()) {
    known.entries = pagh::product_diagonal(std::get<0>(a.data), std::get<0>(b.data));
  } else {
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

std::vector<pagh::Entry> select_with_known_diagonal(const pagh::CompressedProduct& product, const KnownDiagonal& diagonal,
                                                    const MultiplyOptions& o, pagh::RecoveryStats& stats) {
  const pagh::Recovery how = o.exhaustive ? pagh::Recovery::exhaustive : pagh::Recovery::automatic;
  const auto off_diagonal = [&](std::vector<pagh::Entry> entries) {
    std::erase_if(entries, [&](const pagh::Entry& e) { return e.row == e.col; });
    return entries;
  };
  std::vector<pagh::Entry> found;
  if (!o.threshold) {
    // The diagonal's estimates are now noise around 0: ask for more until k off-diagonal remain.
    const double entries = static_cast<double>(product.rows()) * static_cast<double>(product.cols());
    for (std::size_t ask = o.top;; ask *= 2) {
      const auto got = product.top_k(ask, how, &stats);
      found = off_diagonal(got);
      if (found.size() >= o.top || got.size() < ask || static_cast<double>(ask) >= entries) break;
    }
  } else {
    found = off_diagonal(entries_above([&](double t) { return product.above(t, kMaxAboveEntries, how, &stats); }, *o.threshold,
                                       std::nullopt, "--threshold"));
  }
  if (!diagonal.excluded)
    for (const auto& e : diagonal.entries)
      if (!o.threshold || std::fabs(e.value) >= *o.threshold) found.push_back(e);
  std::sort(found.begin(), found.end(), pagh::ranks_before);
  const std::size_t cap = !o.threshold || o.top_given ? o.top : found.size();
  if (found.size() > cap) found.resize(cap);
  return found;
}

}  // namespace pagh_mm
