// pagh::cuda::PathTuning: the knobs of the CUDA sketch's kernel path choice (DeviceOptions::tuning).
#pragma once

#include <cstdint>
#include <optional>

namespace pagh::cuda {

// Knobs of the kernel path choice (choose_path in sketch/src/compress/path_choice.hpp), for experiments
// and tests; each field left empty takes the default rule. The paths sum in different orders, so
// results agree within rounding (bit for bit on exactly representable sums). The library reads no
// environment variables; benchmarks map theirs onto this struct (bench/tuning_from_env.hpp).
struct PathTuning {
  // The wide kernel where it applies, 2^14 <= b <= 2^18 (default true). false: slices or clusters,
  // and 16-bit precisions take the general path.
  std::optional<bool> wide;
  // The fused kernel without the wide one: 0 = slices of 2^12 buckets; 1..4 = clusters of 2^c
  // slices wherever b >= 2^(12 + c), else slices (default: 3 from b = 2^16, else 0).
  std::optional<int> cluster_log;
  // The wide kernel stages short, 16-byte aligned lines itself (default true); false: it always
  // reads lines permuted by a separate kernel.
  std::optional<bool> wide_staged_lines;
  // The wide kernel's permuted lines go in pieces of at most this many k (>= 1; default and cap:
  // the buffer's size).
  std::optional<std::int64_t> wide_piece;
  // The wide kernel with f32 precision runs its warp-local transform rounds on tensor cores: H_1024
  // as 16 x 16 MMA tiles of three exact bf16 parts per value with FP32 accumulation (within a
  // small constant of FP32 rounding; bit for bit on integer sums below 2^24). Default false: on an
  // H100 these rounds cost more than the FP32 butterflies (bench/NOTES.md, "tensor-core rounds").
  std::optional<bool> tensor_cores;
};

}  // namespace pagh::cuda
