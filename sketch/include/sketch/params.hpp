// Parameters of Pagh's compressed product (DESIGN.md §1).
#pragma once

#include <cstdint>

#include "fwht/options.hpp"

namespace pagh {

// When to add a k's outer product directly in the time domain instead of transforming it:
// auto decides per k with a cost model; always/never force one path (tests use them).
enum class HybridMode { automatic, always_direct, always_transform };

// Where pagh::sketch (sketch/sketch.hpp) computes: the CPU engine, or a CUDA GPU (needs the library
// pagh::sketch_cuda linked; the product then keeps its sketches on the device for the queries).
enum class Backend { cpu, cuda };

struct SketchParams {
  double pad = 8;                 // b = next power of two >= pad * max(m, p) (when buckets == 0)
  std::int64_t buckets = 0;       // explicit sketch length b (a power of two), overrides pad
  int repetitions = 3;            // d: independent sketches; estimates are their median
  std::uint64_t seed = 1;         // cuRAND Philox4_32_10 seed of the hash tables (hashing.hpp)
  // Storage of the transformed vectors: f32 by default (the estimator's own error dwarfs FP32
  // rounding), f64 for exactness work, f16/bf16 for studies. Accumulation is in f64 for f64 and in
  // f32 otherwise.
  fwht::DType precision = fwht::DType::f32;
  fwht::Stabilization stabilization = fwht::Stabilization::none;
  fwht::Algorithm algorithm = fwht::Algorithm::folklore;
  fwht::Compute compute = fwht::Compute::f32;  // f16/bf16 only, as in fwht::Options
  int threads = 0;                // 0 = all hardware threads; results do not depend on it
  HybridMode hybrid = HybridMode::automatic;
  // The most memory compress() may allocate (the sketches, the hash tables, per-partition and
  // per-thread buffers, rearranged copies of the inputs); 0 = no limit. Checked from the shapes
  // before any of it is allocated: a larger plan throws MemoryLimitExceeded (memory_limit.hpp).
  // Only the CPU engine (compress.hpp) checks it; pagh::cuda::compress ignores it.
  std::uint64_t max_memory_bytes = 0;
  // pagh::sketch only: the backend, and for Backend::cuda the device. pagh::compress is the CPU
  // engine and pagh::cuda::compress the GPU's, whatever these say. Not part of a saved sketch.
  Backend backend = Backend::cpu;
  int device = 0;
  // CPU engine: k is split into this many ranges whose sums are kept apart and added in order (the
  // sum order, see compress.hpp); 0 = 16. The bits depend on it, never on the thread count. Each
  // range clears and adds a d x b buffer, so a caller sketching a small share of k on few threads
  // (a distributed rank) sets it to its thread count.
  int partitions = 0;
};

// The sketch length b for an m x p product; throws pagh::Error for invalid parameters.
std::int64_t sketch_length(std::int64_t m, std::int64_t p, const SketchParams& params);

// Throws pagh::Error (from `where`) naming both shapes unless cols(A) == rows(B).
void check_inner_dimensions(std::int64_t rows_a, std::int64_t cols_a, std::int64_t rows_b, std::int64_t cols_b, const char* where);

}  // namespace pagh
