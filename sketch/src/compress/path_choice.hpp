// Which kernels compress a product on the device, and why: a pure function of the product's shape,
// the parameters, the options and one device capability, so that the choice can be read (and
// tested) in one place. The engine (engine.hpp) prepares the chosen path and falls back where the
// preparation finds it cannot run (clusters not resident, lists or scatter codes that do not fit).
#pragma once

#include <cstdint>
#include <string>

#include "sketch/params.hpp"
#include "sketch/path_tuning.hpp"

namespace pagh::cuda {

// general: scatter, fwht plan and multiply-accumulate as separate kernels (any input and params).
// The fused kernels (dense f32 inputs, or 16-bit storage on the wide kernel; plain folklore
// transforms; 2^12 <= b <= 2^27): slices of 2^12 buckets per block (fused_sketch.cu), clusters of
// 2^c such blocks sharing scatter work (cluster_sketch.cu), wide slices of 2^14 (wide_sketch.cu).
enum class Path { general, slices, clusters, wide };

struct PathChoice {
  Path path = Path::general;
  int cluster_log = 0;  // Path::clusters: clusters of 2^cluster_log slices
  bool tensor_cores = false;  // Path::wide with f32 precision: rounds A and B on tensor cores
  // Path::general: why the fused kernels do not apply, as the engine reports it
  // ("general (sparse inputs)", ...). Fused paths: empty (the engine describes them).
  std::string reason;
};

// Throws pagh::Error naming the knob when a PathTuning value is outside its range.
void validate(const PathTuning& tuning);

// device_clusters: the device launches thread-block clusters (cudaDevAttrClusterLaunch).
PathChoice choose_path(std::int64_t m, std::int64_t p, int log2b, const SketchParams& params, bool dense, bool force_general,
                       const PathTuning& tuning, bool device_clusters);

// Groups of k for a fused path: each group adds every k with k mod groups == group, on
// blocks_per_group blocks (slices x repetitions), of which `resident` run at once. One full wave
// (resident / blocks_per_group groups) unless a few waves of more, shorter groups are predicted at
// least 5% faster (time ~ waves x ceil(K / groups): e.g. 48 blocks per group on 132 resident run
// 2 groups on 96 SMs, 11 groups fill 4 waves); groups of at least kMinGroupLength k, and the
// partial spectra (groups x partial_bytes) within kMaxPartialBytes.
inline constexpr std::int64_t kMinGroupLength = 256;
inline constexpr std::int64_t kMaxPartialBytes = std::int64_t{256} << 20;
int group_count(std::int64_t resident, std::int64_t blocks_per_group, std::int64_t K, std::int64_t partial_bytes);

}  // namespace pagh::cuda
