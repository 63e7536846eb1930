// The diagonal of a square product, computed exactly in O(nnz) and subtracted from the sketch
// (CompressedProduct::subtract): Gram and covariance products (X^T X) are dominated by it, and its
// energy would otherwise inflate every other estimate's noise. Its exact values join the answer,
// or are left out with --no-diagonal (what covariance and co-occurrence screening want). A saved
// sketch, --full and --verify (without --no-diagonal) keep the sketch of C itself.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "inputs.hpp"
#include "multiply_options.hpp"
#include "sketch/compressed_product.hpp"

namespace pagh_mm {

struct KnownDiagonal {
  std::vector<pagh::Entry> entries;  // the nonzero diagonal entries of C, exact
  bool subtracted = false;           // removed from the sketch
  bool excluded = false;             // --no-diagonal: not reported
  double energy_share = 0;           // their share of ||C||_F^2 (against the sketch's estimate)
  bool on_diagonal(const pagh::Entry& e) const { return subtracted && e.row == e.col; }
};

// Subtracts the diagonal when the product is square and it holds at least 1 % of the energy (or
// --no-diagonal asks to leave it out); does nothing otherwise.
KnownDiagonal subtract_known_diagonal(pagh::CompressedProduct& product, const InputMatrix& a, const InputMatrix& b,
                                      const MultiplyOptions& o);

// The n largest off-diagonal estimates (fewer only if the product has fewer): diagonal estimates are
// no candidates once the diagonal is subtracted (noise around 0) or left out, so this asks the sketch
// for more until n others remain.
std::vector<pagh::Entry> top_off_diagonal(const pagh::CompressedProduct& product, std::size_t n,
                                          pagh::Recovery how = pagh::Recovery::automatic, pagh::RecoveryStats* stats = nullptr);

// The entries --top / --threshold ask for, from the host sketch (which alone was subtracted from):
// off-diagonal estimates, and the exact diagonal unless excluded, ranked together.
// `cutoff` receives that of the estimates' intervals (pagh::keep_top, sketch/noise_model.hpp).
std::vector<pagh::Entry> select_with_known_diagonal(const pagh::CompressedProduct& product, const KnownDiagonal& diagonal,
                                                    const MultiplyOptions& o, pagh::RecoveryStats& stats, double& cutoff);

}  // namespace pagh_mm
