// The compression engine of the CUDA backend: owns the device tables, accumulators and workspace of
// one product shape, takes chunks of k (device pointers), and finishes into d sketches. Both the
// host-input compress() (streaming) and the device-input Compressor drive it. No Eigen here.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cuda/device_memory.hpp"
#include "cuda/device_tables.hpp"
#include "cuda/kernels.hpp"
#include "fwht/plan.hpp"
#include "sketch/params.hpp"

namespace pagh::cuda {

class Engine {
 public:
  // Validates params like the CPU engine (throws pagh::Error), draws the tables on `stream` and
  // allocates every buffer. inputs_f64: chunks come as double (precision f64 on the general path).
  Engine(std::int64_t m, std::int64_t K, std::int64_t p, const SketchParams& params, bool dense, bool force_general,
         cudaStream_t stream);

  bool fused() const { return fused_; }
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
  // The time-domain (direct) path of sparse inputs (direct_sketch.hpp): reserve_direct allocates
  // the d time-domain sketches and the workspace for batches of at most max_pairs pairs;
  // add_direct adds the thin outer products of `count` lines (double values; pair_start: device
  // prefix sums of nnz_a * nnz_b, count + 1 entries, `pairs` in all) to every repetition.
  void reserve_direct(std::int64_t max_pairs);
  void add_direct(const Lines& a, const Lines& b, const std::int64_t* pair_start, std::int64_t count, std::int64_t pairs);
  // c_t = H P_t / b into sketches (d * b doubles, device), and the Frobenius estimate into *frobenius
  // (device double).
  void finish(double* sketches, double* frobenius);

  DeviceTables& tables() { return tables_; }
  cudaStream_t stream() const { return stream_; }

 private:
  void general_batches(const Lines& a, const Lines& b, std::int64_t count);
  bool prepare_clusters(cudaStream_t stream);
  bool prepare_wide(cudaStream_t stream);

  std::int64_t m_, K_, p_, b_;
  int d_, log2b_;
  SketchParams params_;
  cudaStream_t stream_;
  bool fused_ = false;
  std::string path_;
  int acc_bytes_ = 4;
  DeviceTables tables_;
  // fused path (slices, clusters when cluster_ > 0: log2 of the cluster size, or wide slices)
  DeviceArray<std::uint32_t> code_a_, code_b_;
  int cluster_ = 0;
  DeviceArray<std::uint32_t> list_index_a_, list_code_a_, list_index_b_, list_code_b_;
  DeviceArray<std::int64_t> list_start_a_, list_start_b_;
  // the wide kernel: per-side layouts (wide_layout.hpp) and the permuted lines of one piece
  bool wide_ = false, wide_gather_ = false;  // wide_gather_: lines may be staged in the kernel
  DeviceArray<std::uint32_t> wide_source_a_, wide_code_a_, wide_source_b_, wide_code_b_;
  DeviceArray<std::int32_t> wide_segment_a_, wide_segment_b_;
  std::int64_t wide_ld_a_ = 0, wide_ld_b_ = 0, wide_chunk_ = 1;
  DeviceArray<float> wide_lines_;
  DeviceArray<float> partials_;
  int groups_ = 1;
  bool started_ = false;
  // general path
  DeviceArray<char> vectors_, scratch_, spectrum_, plan_workspace_;
  std::int64_t pairs_per_batch_ = 1;
  std::optional<fwht::Plan> forward_;
  std::optional<fwht::Plan> inverse_;
  // direct path
  DeviceArray<double> direct_;
  DeviceArray<char> direct_workspace_;
  std::int64_t direct_max_pairs_ = 0;
  bool direct_used_ = false;
};

}  // namespace pagh::cuda
