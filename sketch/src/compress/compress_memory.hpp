// The CPU engine's memory plan (compress.cpp): what compress() allocates, computed from the shapes
// and the per-k path choices before any of it is allocated, and checked against
// SketchParams::max_memory_bytes. Kept next to the engine: a change to what the engine allocates
// must change this plan too.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "compress/direct_adds.hpp"
#include "compress/hybrid_rule.hpp"
#include "sketch/memory_limit.hpp"
#include "sketch/params.hpp"

namespace pagh::compress_memory {

// Throws MemoryLimitExceeded when bytes exceed params.max_memory_bytes (0 = no limit).
inline void check(double bytes, const SketchParams& params, const char* where, const std::string& what) {
  if (params.max_memory_bytes == 0 || bytes <= static_cast<double>(params.max_memory_bytes)) return;
  const double clamped = std::min(bytes, 1.8e19);
  throw MemoryLimitExceeded(where, what, static_cast<std::uint64_t>(clamped), params.max_memory_bytes);
}

// Storage of a transformed value and of the accumulator, as the engine instantiates them.
inline double storage_bytes(fwht::DType precision) {
  return precision == fwht::DType::f64 ? 8 : precision == fwht::DType::f32 ? 4 : 2;
}
inline double accumulator_bytes(fwht::DType precision) { return precision == fwht::DType::f64 ? 8 : 4; }

// The hash tables: a 4-byte bucket and a 1-byte sign per row, column and repetition, and the
// 2 (m + p) words of one repetition while drawing.
inline double table_bytes(std::int64_t m, std::int64_t p, int d) {
  const double lines = static_cast<double>(m) + static_cast<double>(p);
  return static_cast<double>(d) * lines * 5 + 2 * lines * 4;
}

// The engine (cpu_engine.hpp): K ranges (partitions) of inner indices each hold a d x b spectrum
// when one of their k is transformed and a d x b time-domain sketch when one is added directly
// (sparse lines: known from their nonzeros; dense lines, whose nonzeros are counted while they are
// scattered: both, at most); each worker thread has a pair of vectors (and in 16-bit storage a
// pair of Acc vectors to scatter into) and, when some k takes the direct path, its staged adds;
// dense lines have one repetition's bucket order per repetition (8 bytes per position), sparse
// lines one packed hash word per position and repetition (4 bytes); the end
// sums into one spectrum and the d sketches.
template <class LinesA, class LinesB>
double engine_bytes(const LinesA& a, const LinesB& b, std::int64_t K, std::int64_t buckets, const SketchParams& params,
                    int threads, std::int64_t partitions) {
  const double d = params.repetitions, bd = static_cast<double>(buckets);
  const double t_bytes = storage_bytes(params.precision), acc = accumulator_bytes(params.precision);
  double total = static_cast<double>(K);  // the per-k paths
  bool any_direct = false;
  for (std::int64_t s = 0; s < partitions; ++s) {
    bool transform = !LinesA::kCountsKnown || !LinesB::kCountsKnown, direct = transform;
    if constexpr (LinesA::kCountsKnown && LinesB::kCountsKnown)
      for (std::int64_t k = K * s / partitions, end = K * (s + 1) / partitions; k < end && !(transform && direct); ++k) {
        const std::int64_t na = a.nnz(k), nb = b.nnz(k);
        if (na == 0 || nb == 0) continue;
        (take_direct_path(na, nb, buckets, params.hybrid) ? direct : transform) = true;
      }
    total += d * bd * ((transform ? acc : 0) + (direct ? 8 : 0));
    any_direct = any_direct || direct;
  }
  // Dense lines: a bucket order (8 bytes), or a packed hash word and its first-marked copy (4 + 4),
  // per position and repetition; sparse lines: a packed hash word.
  total += d * (LinesA::kCountsKnown ? 4 : 8) * static_cast<double>(a.length);
  total += d * (LinesB::kCountsKnown ? 4 : 8) * static_cast<double>(b.length);
  const double workers = static_cast<double>(std::min<std::int64_t>(std::max(threads, 1), partitions));
  total += workers * (2 * bd * (t_bytes + (t_bytes == acc ? 0 : acc)) + 256 + (any_direct ? cpu_sketch::DirectAdds::staging_bytes(buckets) : 0));
  return total + d * bd * (acc + 8);
}

}  // namespace pagh::compress_memory
