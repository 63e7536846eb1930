// One entry of an estimated product as the queries report it. No Eigen here: the device query
// kernels' translation units include it.
#pragma once

#include <cstdint>

namespace pagh {

struct Entry {
  std::int64_t row = 0, col = 0;
  double value = 0;   // the estimate (median of the d single estimates)
  double spread = 0;  // half the range of the d single estimates: a per-entry error bar
};

}  // namespace pagh
