// fwht_accuracy's access to a backend: one transform of a vector whose values are representable
// in the format, computed in that format by the CPU or the CUDA backend.
#pragma once

#include <memory>
#include <vector>

#include "fwht/options.hpp"

namespace fwht::bench {

class AccuracyBackend {
 public:
  virtual ~AccuracyBackend() = default;
  // v <- transform of v, stored and computed in `format` (v's values must be representable in it).
  virtual void transform(std::vector<double>& v, DType format, const Options& options) = 0;
};

// Throws pagh::Error if the backend is not available (CUDA without a build or a device).
std::unique_ptr<AccuracyBackend> make_accuracy_backend(Backend backend);

}  // namespace fwht::bench
