// The main command's memory plan: before the sketch is computed, what it and the dense results
// (--full, --verify) need is compared with the memory this machine can spare, and a request that
// cannot fit is refused with one clear line instead of ending in a kill or "out of memory" midway.
#pragma once

#include "backend.hpp"
#include "inputs.hpp"
#include "multiply_options.hpp"
#include "sketch/compressed_product.hpp"

namespace pagh_mm {

// Compresses A and B as the backend does, with the memory available now (less the dense results
// the options ask for) as the limit of the CPU engine's plan; the CUDA backend's host copy (the d
// sketches and the hash tables) is checked here. Refuses with 64 naming --full or --verify when their
// dense results alone do not fit, with 64 naming --buckets when an explicit sketch length is what
// does not fit, else with 71 ("insufficient memory: needs X GB, Y GB available").
// --verify against the exact sparse product (no m x p array): both inputs sparse and the dense
// exact product and estimate beyond the 8 GiB that dense verification allows.
bool verifies_sparsely(const InputMatrix& a, const InputMatrix& b, const MultiplyOptions& options);

pagh::CompressedProduct compress_within_memory(SketchBackend& backend, const InputMatrix& a, const InputMatrix& b,
                                               const MultiplyOptions& options);

}  // namespace pagh_mm
