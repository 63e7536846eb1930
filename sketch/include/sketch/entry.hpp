// One entry of an estimated product as the queries report it. No Eigen here: the device query
// kernels' translation units include it.
#pragma once

#include <cmath>
#include <cstdint>

namespace pagh {

struct Entry {
  std::int64_t row = 0, col = 0;
  double value = 0;   // the estimate (median of the d single estimates)
  double spread = 0;  // half the range of the d single estimates: a per-entry error bar
};

// The order every answer is ranked in: |value| descending, then row, then column ascending.
inline bool ranks_before(const Entry& x, const Entry& y) {
  const double ax = std::fabs(x.value), ay = std::fabs(y.value);
  if (ax != ay) return ax > ay;
  if (x.row != y.row) return x.row < y.row;
  return x.col < y.col;
}

}  // namespace pagh
