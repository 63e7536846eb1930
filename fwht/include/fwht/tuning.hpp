// fwht::Tuning: the knobs of the CUDA planner, for experiments and tests (Options::tuning).
//
// Every field left empty takes the planner's own rule: the default written next to it, or the
// shape or device rule it names. Results never depend on these knobs (every schedule applies the
// same stages in the same order, so the output is bit-identical); only the speed does. A CUDA
// plan's constructor throws pagh::Error for a value outside the range given; CPU plans ignore them.
// The library reads no environment variables; benchmarks map theirs onto this struct
// (bench/tuning_from_env.hpp).
#pragma once

#include <optional>

namespace fwht {

struct Tuning {
  // Route. register_tile: the register-tile kernel where it applies (default true; false: the
  // general tile pass). paired_words: plain f16/bf16 plans computed in storage precision run as
  // 32-bit words of two elements (default true).
  std::optional<bool> register_tile;
  std::optional<bool> paired_words;

  // General tile pass: log2 elements per block (8..15) and log2 columns of a strided tile (2..6)
  // of the 4-byte, one-plane entry of the tile table; both or neither.
  std::optional<int> tile_block_log;
  std::optional<int> tile_column_log;

  // Register-tile schedule. single_block_log: log2 elements per block of single-pass plans of
  // n <= 2^12 (12..14; default by n and the storage size). first_pass_stages: most stages of the
  // first pass of a multi-pass plan (8..14; default 14, max(12, log2 n - 9) at 2^20..2^22).
  std::optional<int> single_block_log;
  std::optional<int> first_pass_stages;

  // Cluster passes. max_cluster_log: largest cluster, log2 (0..3, capped by the device; 0: none).
  // cluster_first: clusters (log2) of the first of two cluster passes (0..3; default: the shape
  // table, else log2 n - 24 at 2^25..2^27). cluster_column_log: log2 columns of the strided
  // cluster pass (2..8; default: the shape table, else 4). slow_memory: the device memory class
  // that selects shape-table entries (default: DeviceCaps, from the device's clocks and bus).
  std::optional<int> max_cluster_log;
  std::optional<int> cluster_first;
  std::optional<int> cluster_column_log;
  std::optional<bool> slow_memory;

  // The last two of three register-tile passes fused into one launch (default true), strips of
  // about fuse_strip_mib MiB (1..32, default 4), the lag in strips between the two passes (1..64;
  // default from the resident blocks), L2 eviction hints in the fused kernel (default true).
  std::optional<bool> fuse;
  std::optional<int> fuse_strip_mib;
  std::optional<int> fuse_lag;
  std::optional<bool> fuse_hints;

  // First-pass loads. 0: straight into registers; 1 (default): through cp.async for 4-byte
  // storage, and for 2-byte storage in 2^14-element blocks; 2: through cp.async always.
  std::optional<int> stage_mode;
  // Passes after the first launched as programmatic dependents of the previous one (default:
  // where the device has them, compute capability 9.0 and later; true cannot add them elsewhere).
  std::optional<bool> dependent_launch;
};

}  // namespace fwht
