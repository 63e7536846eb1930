#include "compress/path_choice.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "compress/paths/kernels.hpp"
#include "compress/paths/wide_layout.hpp"
#include "pagh/error.hpp"

namespace pagh::cuda {
namespace {

constexpr const char* kWhere = "pagh::cuda::compress";

// The wide kernel replaces the slice and cluster kernels for 2^14 <= b <= 2^18 and lines that fit
// its layout (bench/NOTES.md, "wide kernel").
bool wide_applies(int log2b, std::int64_t m, std::int64_t p, const PathTuning& tuning) {
  return tuning.wide.value_or(true) && log2b >= kWideLog && log2b <= kWideMaxLog && m <= kWideMaxLine && p <= kWideMaxLine;
}

// The cluster kernel scatters each entry once per cluster of 2^c slices instead of once per slice,
// but pays two cluster barriers and remote reads per k: it wins only when the slice kernel's
// replication (b / 2^12) is large: c = 3 from b = 2^16 on; c = 4 (non-portable clusters of 16)
// halves the scatter but not the time.
int cluster_log_for(int log2b, const PathTuning& tuning) {
  if (tuning.cluster_log) {
    const int c = *tuning.cluster_log;
    return c >= 1 && log2b >= kSliceLog + c ? c : 0;
  }
  return log2b >= 16 ? 3 : 0;
}

}  // namespace

void validate(const PathTuning& tuning) {
  if (tuning.cluster_log && (*tuning.cluster_log < 0 || *tuning.cluster_log > kMaxLogCluster))
    throw Error(kWhere, "PathTuning::cluster_log = " + std::to_string(*tuning.cluster_log) + " is outside 0.." +
                            std::to_string(kMaxLogCluster));
  if (tuning.wide_piece && *tuning.wide_piece < 1)
    throw Error(kWhere, "PathTuning::wide_piece = " + std::to_string(*tuning.wide_piece) + " must be at least 1");
}

PathChoice choose_path(std::int64_t m, std::int64_t p, int log2b, const SketchParams& params, bool dense, bool force_general,
                       const PathTuning& tuning, bool device_clusters) {
  const bool plain = params.stabilization == fwht::Stabilization::none && params.algorithm == fwht::Algorithm::folklore;
  // 16-bit storage (either compute type): only the wide kernel rounds like the CPU engine
  // (wide_sketch.cu).
  const bool sixteen = fwht::size_of(params.precision) == 2;
  const bool wide = wide_applies(log2b, m, p, tuning);
  const bool fused_precision = params.precision == fwht::DType::f32 || (sixteen && wide);
  const bool fused = dense && !force_general && fused_precision && plain && log2b >= kSliceLog && log2b <= 27 &&
                     m <= INT32_MAX && p <= INT32_MAX;
  PathChoice out;
  if (!fused) {
    const std::string precision_name(fwht::to_string(params.precision));
    if (force_general) out.reason = "general (forced)";
    else if (!dense) out.reason = "general (sparse inputs)";
    else if (params.precision == fwht::DType::f64) out.reason = "general (precision f64)";
    else if (!plain) out.reason = "general (stabilized or Alman-Rao transform)";
    else if (sixteen)
      out.reason = "general (precision " + precision_name + ": b = 2^" + std::to_string(log2b) +
                   " or lines outside the wide kernel's range)";
    else out.reason = "general (b = 2^" + std::to_string(log2b) + " outside the fused kernel's 2^12..2^27)";
    return out;
  }
  if (wide) {
    out.path = Path::wide;
    out.tensor_cores = params.precision == fwht::DType::f32 && tuning.tensor_cores.value_or(false);
    return out;
  }
  const int c = cluster_log_for(log2b, tuning);
  if (c > 0 && device_clusters) {
    out.path = Path::clusters;
    out.cluster_log = c;
    return out;
  }
  out.path = Path::slices;
  return out;
}

int group_count(std::int64_t resident, std::int64_t blocks_per_group, std::int64_t K, std::int64_t partial_bytes) {
  const std::int64_t k = std::max<std::int64_t>(K, 1), per_group = std::max<std::int64_t>(blocks_per_group, 1);
  const std::int64_t one_wave = std::clamp<std::int64_t>(resident / per_group, 1, k);
  const auto waves = [&](std::int64_t g) { return (g * per_group + resident - 1) / std::max<std::int64_t>(resident, 1); };
  const auto cost = [&](std::int64_t g) { return waves(g) * ((k + g - 1) / g); };
  std::int64_t best = one_wave;
  for (std::int64_t g = one_wave + 1; waves(g) <= 4 && k / g >= kMinGroupLength && g * partial_bytes <= kMaxPartialBytes; ++g)
    if (20 * cost(g) <= 19 * cost(one_wave) && cost(g) < cost(best)) best = g;
  return static_cast<int>(best);
}

}  // namespace pagh::cuda
