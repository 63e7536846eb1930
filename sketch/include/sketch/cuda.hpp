// Pagh's compressed product on an NVIDIA GPU (sketch-cuda): the same mathematics, hash tables and
// result as sketch/compress.hpp, computed on the device.
//
//   Eigen::MatrixXf A = ..., B = ...;
//   pagh::cuda::DeviceProduct C = pagh::cuda::compress(A, B, {.repetitions = 3, .seed = 42});
//   for (const pagh::Entry& e : C.top_k(10)) ...          // top-k on the device, k entries copied back
//   pagh::CompressedProduct host = C.to_host();           // the d sketches (d * b values) copied back
//
// Results: the hash tables are drawn by the cuRAND device generator and equal the host tables of
// hashing.hpp bit for bit. Integer-valued inputs whose sums are exact in the precision give the
// CPU's sketches bit for bit; other floating inputs agree within rounding (the GPU sums in another
// order; with 16-bit precisions the fused kernel also rounds folded bucket sums, see
// sketch/src/compress/paths/wide_sketch.cu). For a given device, configuration and input the
// result is deterministic: no atomics touch floating-point sums; partial sketches are reduced in a
// fixed order.
//
// Host inputs larger than the device-memory budget stream through pinned host buffers in chunks of
// k, copies overlapped with compute; a result is produced whatever the size of K. Running out of
// device memory anywhere is a pagh::Error naming the allocation.
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sketch/compressed_product.hpp"
#include "sketch/params.hpp"
#include "sketch/path_tuning.hpp"
#include "sketch/sketch_statistics.hpp"
#include "sketch/verify.hpp"

// The CUDA runtime's stream handle (as in fwht/plan.hpp), so that this header needs no CUDA headers.
struct CUstream_st;
using cudaStream_t = CUstream_st*;

namespace pagh::cuda {

// Whether a CUDA device is usable by this build; if not, *reason says why.
bool available(std::string* reason = nullptr);

struct DeviceOptions {
  int device = 0;
  // Device memory the staged inputs may occupy at once (host inputs); 0 = a quarter of the free
  // memory. Smaller values force the streaming path (tests use that). The plan's own workspaces
  // come on top and are allocated when the plan is made: the sketches and partial spectra, and up
  // to 256 MiB for the general path's vector batches or the wide kernel's permuted lines (16 MiB
  // where the wide kernel stages lines itself: then they serve only unaligned device inputs).
  std::size_t max_input_bytes = 0;
  // Take the general path (scatter, fwht plan, multiply-accumulate as separate kernels) even where
  // the fused kernel applies: tests and benchmarks compare the two.
  bool force_general = false;
  // Compressor only: B will come by rows (execute_rows) and never in cuBLAS's column-major layout,
  // so the plan does not allocate the K x p buffer that execute() transposes B into (execute()
  // then throws).
  bool b_by_rows_only = false;
  PathTuning tuning = {};
};

// A compressed product that lives on the device: d sketches of length b (double) and the hash
// tables. Move-only; frees its memory on destruction.
class DeviceProduct {
 public:
  struct State;  // defined in the backend
  explicit DeviceProduct(std::unique_ptr<State> state);
  DeviceProduct(DeviceProduct&&) noexcept;
  DeviceProduct& operator=(DeviceProduct&&) noexcept;
  ~DeviceProduct();

  // A host product copied to the device (tests and device queries of a CPU result).
  static DeviceProduct upload(const CompressedProduct& host, int device = 0);
  // A product whose d * b sketch values (d = params.repetitions) were computed on `device` by other
  // means, such as a sum over GPU ranks (distributed/nccl_sum.hpp): `values` (device memory, complete:
  // synchronize after writing them) are copied, the hash tables drawn there from params.seed as
  // compress draws them, and the Frobenius estimate measured there as compress measures it.
  static DeviceProduct from_device_values(std::int64_t rows, std::int64_t cols, std::int64_t inner, std::int64_t buckets,
                                          const SketchParams& params, const double* values, int device,
                                          const CompressTimings& timings = {});

  std::int64_t rows() const;
  std::int64_t cols() const;
  std::int64_t inner() const;
  std::int64_t buckets() const;
  int repetitions() const;
  const SketchParams& params() const;
  const CompressTimings& timings() const;

  // The same object on the host (copies d * b sketch values and the tables).
  CompressedProduct to_host() const;
  // The parts of it: the d * b values into `out` (host memory of that size); the values at
  // positions t * b + bucket (out[i] for positions[i]); the hash tables.
  void copy_to_host(std::span<double> out) const;
  void values_at(std::span<const std::int64_t> positions, std::span<double> out) const;
  HashTables host_tables() const;
  // What the noise model and the overflow check read (sketch_statistics.hpp), measured on the device:
  // largest, counts and finiteness equal to measure_sketch_values on the host copy; the sums of
  // squares equal where exact (integer values), within rounding otherwise (another order; the
  // per-bin sums are exact before one rounding). Deterministic.
  SketchStatistics statistics() const;
  // A copy with known entries of C subtracted from its sketches, bit for bit as
  // CompressedProduct::subtract subtracts them from a host copy; throws pagh::Error for an entry out
  // of range.
  DeviceProduct minus(std::span<const Entry> known) const;

  // Queries computed on the device with the CompressedProduct semantics (median of the d single
  // estimates; ties by row, then column); only the answer is copied back. The kernels hold up to
  // 64 repetitions; with more, the same answers come from a host copy (queries_on_device() false).
  // top_k and above recover heavy buckets as on the host (sketch/recovery.hpp): no pass over the
  // m * p entries unless the scan is cheaper or asked for.
  bool queries_on_device() const;
  std::vector<Entry> top_k(std::size_t k, Recovery how = Recovery::automatic, RecoveryStats* stats = nullptr) const;
  std::vector<Entry> above(double threshold, std::size_t max_entries = std::size_t{1} << 26, Recovery how = Recovery::automatic,
                           RecoveryStats* stats = nullptr) const;
  Eigen::MatrixXd decompress(std::size_t max_bytes = std::size_t{8} << 30) const;
  double frobenius_estimate() const;
  double sigma() const;

  // Device views for advanced use (valid while this object lives): sketch t at [t*b, (t+1)*b).
  const double* device_sketches() const;
  State& state() const { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

// `host` (the same sketches' host copy, as to_host() gives it) holding `device` for top_k, above and
// decompress, which then run on the GPU.
CompressedProduct with_device_queries(CompressedProduct host, DeviceProduct device);
// `device` as a CompressedProduct that keeps the sketches there (CompressedProduct::kept_on_device):
// queries, statistics (the noise model, the overflow check) and single entries' values are read on
// the device; the d * b values are copied to the host only when something reads them all. What
// pagh::sketch returns with Backend::cuda. tables: the host's hash tables where the caller has them
// (the same seed and shape), downloaded otherwise.
CompressedProduct kept_on_device(DeviceProduct device, const HashTables* tables = nullptr);

DeviceProduct compress(const Eigen::MatrixXf& A, const Eigen::MatrixXf& B, const SketchParams& params = {},
                       const DeviceOptions& options = {});
DeviceProduct compress(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const SketchParams& params = {},
                       const DeviceOptions& options = {});
DeviceProduct compress(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B,
                       const SketchParams& params = {}, const DeviceOptions& options = {});

// A plan for repeated products of device-resident dense FP32 inputs in cuBLAS's column-major layout
// (A: m x K, lda >= m; B: K x p, ldb >= K). The constructor allocates everything (and draws the hash
// tables); execute() launches on the plan's own stream and neither allocates nor synchronizes.
// That stream does not wait for other streams: the inputs must be complete when execute() is
// called (synchronize after writing them, or order the work with events; note that a cudaMemcpy
// from pageable host memory may return before its data has landed). Inputs are FP32 whatever
// params.precision says (f64 sketches them exactly). Columns of A and rows of B aligned to 16
// bytes (lda, ldbt and the pointers multiples of 4 floats) let short lines take the staged path.
class Compressor {
 public:
  Compressor(std::int64_t m, std::int64_t K, std::int64_t p, const SketchParams& params, const DeviceOptions& options = {});
  Compressor(Compressor&&) noexcept;
  Compressor& operator=(Compressor&&) noexcept;
  ~Compressor();

  void execute(const float* A, std::int64_t lda, const float* B, std::int64_t ldb);
  // The same with B given by rows: row k of B at Bt + k * ldbt (B row-major, i.e. B^T column-major,
  // ldbt >= p). Saves the transposition of B that execute() performs on the device (and, with
  // DeviceOptions::b_by_rows_only, its K x p buffer).
  void execute_rows(const float* A, std::int64_t lda, const float* Bt, std::int64_t ldbt);
  void synchronize() const;
  // The stream execute() enqueues on (created by the plan), for timing with events.
  cudaStream_t stream() const;
  // The last execute()'s result as an independent object (copies the d * b sketch values).
  DeviceProduct product() const;
  // Which kernel path execute() takes ("fused" or "general") and why, for reports.
  std::string path() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The exact product on the device with cuBLAS DGEMM (inputs and result in double), timed by CUDA
// events (ms: the GEMM alone, excluding transfers). Sparse inputs are densified on the device;
// throws pagh::Error if they do not fit.
Eigen::MatrixXd exact_product(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, double* ms = nullptr, int device = 0);
Eigen::MatrixXd exact_product(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B,
                              double* ms = nullptr, int device = 0);

// pagh::verify's metrics computed on the device against the exact product C (m x p) computed there
// by cuBLAS from A and B; only the metrics are copied back.
Metrics verify(const DeviceProduct& product, const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, std::size_t k,
               int device = 0);

}  // namespace pagh::cuda
