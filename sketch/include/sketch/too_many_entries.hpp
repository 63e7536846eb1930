// What the threshold queries (CompressedProduct::above, cuda::DeviceProduct::above) throw when more
// than max_entries entries qualify: a pagh::Error, so that code catching Error still sees it, and a
// type of its own, so that a caller offering a remedy (a higher threshold, top_k) catches this
// condition and nothing else. No Eigen here: the device kernels' translation units include it.
#pragma once

#include <cstddef>
#include <string>

#include "pagh/error.hpp"

namespace pagh {

class TooManyEntries : public Error {
 public:
  using Error::Error;
};

// The error of a threshold query from `where` that found more than max_entries qualifying.
inline TooManyEntries too_many_entries(const char* where, std::size_t max_entries, double threshold) {
  return TooManyEntries(where, "more than " + std::to_string(max_entries) + " entries have |estimate| >= " + std::to_string(threshold) +
                                   "; raise the threshold or use top_k");
}

}  // namespace pagh
