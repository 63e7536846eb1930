// --correlation: C(i, j) = the Pearson correlation of row i of A with column j of B over the inner
// index (the samples): with A = X^T and B = X (pagh-mm --transpose-a X X) the correlation matrix of
// X's columns. Each row of A and column of B is centred and scaled to unit norm, exactly, before
// the product: dense operands in place; sparse ones keep their sparsity (scaled in place, their
// means left to the other side: centring one side removes the mean term, and where both are sparse
// the means join as one extra inner index, since
//   sum_k (a_ik - mu_i)(b_kj - nu_j) = sum_k a_ik b_kj - n mu_i nu_j
// is the product of [A | -sqrt(n) mu] and [B ; sqrt(n) nu^T]). Every method (sketch, exact,
// refinement, the known diagonal of ones) then works on the standardized product unchanged.
#pragma once

#include <cstdint>

namespace pagh_mm {

struct InputMatrix;  // inputs.hpp

struct Standardized {
  std::int64_t constant_rows_a = 0, constant_cols_b = 0;  // no variance: left as zeros (correlation undefined)
  bool augmented = false;                                  // an inner index for the means was added
};

// Replaces a and b by their standardized forms (a's rows, b's columns); needs cols(a) == rows(b) >= 2.
Standardized standardize_for_correlation(InputMatrix& a, InputMatrix& b);

}  // namespace pagh_mm
