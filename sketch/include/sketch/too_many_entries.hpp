// What the threshold queries (CompressedProduct::above, cuda::DeviceProduct::above) throw when more
// than max_entries entries qualify: a pagh::Error, so that code catching Error still sees it, and a
// type of its own, so that a caller offering a remedy (a higher threshold, top_k) catches this
// condition and nothing else. No Eigen here: the device kernels' translation units include it.
#pragma once

#include "pagh/error.hpp"

namespace pagh {

class TooManyEntries : public Error {
 public:
  using Error::Error;
};

}  // namespace pagh
