#include "multiply_memory.hpp"

#include <algorithm>
#include <string>

#include "cli_error.hpp"
#include "resource_plan.hpp"
#include "sketch/memory_limit.hpp"

namespace pagh_mm {
namespace {

[[noreturn]] void refuse(const MultiplyOptions& o, const InputMatrix& a, const InputMatrix& b, double needed,
                         const AvailableMemory& available) {
  if (o.sketch.params.buckets != 0)
    refuse_memory(ExitCode::usage, "--buckets " + std::to_string(o.sketch.params.buckets), needed, available,
                  "; choose a smaller sketch length");
  refuse_memory(ExitCode::os_error, a.path + ", " + b.path, needed, available,
                "; a smaller --pad or fewer --sketches needs less" +
                    std::string(o.full || o.verify ? ", and --full and --verify need the whole m x p product" : ""));
}

}  // namespace

bool verifies_sparsely(const InputMatrix& a, const InputMatrix& b, const MultiplyOptions& o) {
  return o.verify && a.data.index() == 1 && b.data.index() == 1 &&
         static_cast<double>(a.rows()) * static_cast<double>(b.cols()) * 16.0 > 8.0 * (1ull << 30);
}

pagh::CompressedProduct compress_within_memory(SketchBackend& backend, const InputMatrix& a, const InputMatrix& b,
                                               const MultiplyOptions& o) {
  const AvailableMemory available = available_memory();
  const double cells = static_cast<double>(a.rows()) * static_cast<double>(b.cols());
  // --full holds the dense estimate; --verify the exact product and the dense estimate.
  const double dense = 8.0 * cells * ((o.full ? 1 : 0) + (o.verify && !verifies_sparsely(a, b, o) ? 2 : 0));
  pagh::SketchParams params = o.sketch.params;
  const double sketch_room = static_cast<double>(available.bytes) - dense;
  // The dense results alone do not fit: the option that asks for them is what cannot be granted.
  if (sketch_room <= 0)
    refuse_memory(ExitCode::usage, o.full ? "--full" : "--verify", dense, available,
                  "; use --top or --threshold, which need no m x p array");
  params.max_memory_bytes = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::min(sketch_room, 1.8e19)));
  if (backend.name() != "cpu") {
    // The device computes; the host receives the d sketches and draws the hash tables.
    const double d = params.repetitions, b_len = static_cast<double>(pagh::sketch_length(a.rows(), b.cols(), params));
    const double host = d * b_len * 8 + d * (static_cast<double>(a.rows()) + static_cast<double>(b.cols())) * 5;
    if (host > sketch_room) refuse(o, a, b, host + dense, available);
  }
  try {
    return backend.compress(a.data, b.data, params);
  } catch (const pagh::MemoryLimitExceeded& e) {
    refuse(o, a, b, static_cast<double>(e.needed_bytes()) + dense, available);
  }
}

}  // namespace pagh_mm
