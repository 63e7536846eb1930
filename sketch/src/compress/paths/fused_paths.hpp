// The fused paths of the CUDA sketch (path_choice.hpp): slices, clusters and wide slices. Each
// class owns what its kernel reads besides the hash tables, and adds chunks of k into the engine's
// partial spectra (groups x d x b floats: one group of k per block row; the engine reduces them).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "device_memory.hpp"
#include "hashing/device_tables.hpp"
#include "sketch/params.hpp"
#include "sketch/path_tuning.hpp"

namespace pagh::cuda {

// Where a fused kernel adds its sums.
struct PartialSpectra {
  float* data = nullptr;
  int groups = 1;
  bool accumulate = false;  // false: the first chunk of a product overwrites
};

class FusedPath {
 public:
  virtual ~FusedPath() = default;
  // Dense f32 chunk: column k of A at a + (k - k_first) * lda, row k of B at bt + (k - k_first) * ldbt.
  virtual void add(const float* a, std::int64_t lda, const float* bt, std::int64_t ldbt, std::int64_t k_first, std::int64_t count,
                   const PartialSpectra& out, cudaStream_t stream) = 0;
  virtual int slice_log() const = 0;                          // buckets per block: 2^slice_log
  virtual std::int64_t resident_blocks(int sms) const = 0;    // blocks on the device at once
  virtual std::string name() const = 0;                       // for Compressor::path()
};

// Slices of 2^12 buckets per block (fused_sketch.cu). Null when 17 or more entries of one scatter
// instruction share a slot (beyond the kernel's encoding; astronomically rare): the general path.
std::unique_ptr<FusedPath> make_slice_path(const DeviceTables& tables, int log2b, cudaStream_t stream);

// Clusters of 2^log_cluster slice blocks (cluster_sketch.cu). Null where such clusters cannot be
// resident or the lists do not fit: the slices.
std::unique_ptr<FusedPath> make_cluster_path(const DeviceTables& tables, int log2b, int log_cluster, cudaStream_t stream);

// Wide slices of 2^14 buckets (wide_sketch.cu): f32 or 16-bit storage, lines staged in the kernel
// (short aligned lines) or permuted in pieces of k by a separate kernel; tensor_cores (f32 only):
// the warp rounds on tensor cores (tensor_rounds.cuh).
std::unique_ptr<FusedPath> make_wide_path(const DeviceTables& tables, int log2b, std::int64_t K, const SketchParams& params,
                                          const PathTuning& tuning, bool tensor_cores, cudaStream_t stream);

}  // namespace pagh::cuda
