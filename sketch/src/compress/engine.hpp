// The compression engine of the CUDA backend: owns the device tables, the spectra and the inverse
// plan of one product shape, and the one path (fused_paths.hpp, general_path.hpp) that adds chunks
// of k (device pointers); finishes into d sketches. Both the host-input compress() (streaming) and
// the device-input Compressor drive it. No Eigen here.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "device_memory.hpp"
#include "hashing/device_tables.hpp"
#include "compress/paths/direct_add_on.hpp"
#include "compress/paths/fused_paths.hpp"
#include "compress/paths/general_path.hpp"
#include "compress/paths/kernels.hpp"
#include "fwht/plan.hpp"
#include "sketch/params.hpp"
#include "sketch/path_tuning.hpp"

namespace pagh::cuda {

class Engine {
 public:
  // Validates params like the CPU engine (throws pagh::Error), draws the tables on `stream`,
  // prepares the path that choose_path picks (path_choice.hpp) and allocates every buffer.
  // force_general and tuning: DeviceOptions's.
  Engine(std::int64_t m, std::int64_t K, std::int64_t p, const SketchParams& params, bool dense, bool force_general,
         const PathTuning& tuning, cudaStream_t stream);

  bool fused() const { return fused_ != nullptr; }
  std::string path() const { return path_; }
  // Whether host double inputs should be staged as double (precision f64): float loses nothing
  // otherwise, since the CPU engine rounds each value to float before adding it.
  bool wants_double() const { return acc_bytes_ == 8; }
  std::int64_t buckets() const { return b_; }

  // Zeroes the accumulators: the next chunks start a new product.
  void reset();
  // Dense chunk: column k of A at a + (k - k_first) * lda (m values), row k of B at
  // bt + (k - k_first) * ldbt (p values). Double chunks need the general path.
  void add_dense(const float* a, std::int64_t lda, const float* bt, std::int64_t ldbt, std::int64_t k_first, std::int64_t count);
  void add_dense(const double* a, std::int64_t lda, const double* bt, std::int64_t ldbt, std::int64_t count);
  // Sparse chunk of `count` lines (the caller has dropped empty k).
  void add_sparse(const Lines& a, const Lines& b, std::int64_t count);
  // The time-domain (direct) part of sparse inputs (direct_add_on.hpp).
  void reserve_direct(std::int64_t max_pairs) { direct_.reserve(max_pairs, tables_, log2b_, stream_); }
  void add_direct(const Lines& a, const Lines& b, const std::int64_t* pair_start, std::int64_t count, std::int64_t pairs) {
    direct_.add(a, b, pair_start, count, pairs, tables_, log2b_, stream_);
  }
  // c_t = H P_t / b into sketches (d * b doubles, device), and the Frobenius estimate into *frobenius
  // (device double).
  void finish(double* sketches, double* frobenius);

  DeviceTables& tables() { return tables_; }
  cudaStream_t stream() const { return stream_; }

 private:
  std::int64_t m_, p_, b_;
  int d_, log2b_;
  cudaStream_t stream_;
  std::string path_;
  int acc_bytes_ = 4;
  DeviceTables tables_;
  DeviceArray<char> spectrum_;  // d * b values of the accumulation type
  std::optional<fwht::Plan> inverse_;
  // One of the two: a fused path adding into the partial spectra, or the general path.
  std::unique_ptr<FusedPath> fused_;
  DeviceArray<float> partials_;
  int groups_ = 1;
  bool started_ = false;
  std::optional<GeneralPath> general_;
  DirectAddOn direct_;
};

}  // namespace pagh::cuda
