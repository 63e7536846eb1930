// The exact product with cuBLAS DGEMM on the device, and pagh::verify's metrics computed there
// against it (exact_device.hpp). Only results (C, or a handful of numbers) are copied back.
#include <cublas_v2.h>
#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "device_memory.hpp"
#include "estimate/estimator.cuh"
#include "exact/cublas_library.hpp"
#include "exact/exact_device.hpp"
#include "estimate/streaming_top_k.cuh"

namespace pagh::cuda {
namespace {

constexpr const char* kExactWhere = "pagh::cuda::exact_product";
constexpr const char* kVerifyWhere = "pagh::cuda::verify";
constexpr int kThreads = 256;

void check_cublas(cublasStatus_t status, const char* call, const char* where) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(where, std::string(call) + " failed: " + cublas_library().status_name(status) + " (" +
                           cublas_library().status_string(status) + ")");
}
#define PAGH_CUBLAS_CHECK(call, where) check_cublas((call), #call, (where))

class CublasHandle {
 public:
  explicit CublasHandle(const char* where) { PAGH_CUBLAS_CHECK(cublas_library().create(&handle_), where); }
  ~CublasHandle() { cublas_library().destroy(handle_); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

// Elapsed device time between two events recorded on the default stream.
class EventTimer {
 public:
  explicit EventTimer(const char* where) : where_(where) {
    PAGH_CUDA_CHECK(cudaEventCreate(&start_), where_);
    PAGH_CUDA_CHECK(cudaEventCreate(&stop_), where_);
  }
  ~EventTimer() { cudaEventDestroy(start_), cudaEventDestroy(stop_); }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start() { PAGH_CUDA_CHECK(cudaEventRecord(start_, nullptr), where_); }
  double stop() {
    PAGH_CUDA_CHECK(cudaEventRecord(stop_, nullptr), where_);
    PAGH_CUDA_CHECK(cudaEventSynchronize(stop_), where_);
    float ms = 0;
    PAGH_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_), where_);
    return ms;
  }

 private:
  const char* where_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// A clear refusal before allocating when the dense operands and product cannot fit.
void require_fits(double bytes, const char* what, const char* where) {
  std::size_t free = 0, total = 0;
  PAGH_CUDA_CHECK(cudaMemGetInfo(&free, &total), where);
  if (bytes > static_cast<double>(free))
    throw Error(where, std::string(what) + " need " + std::to_string(bytes / 1e9) + " GB of device memory; " +
                           std::to_string(static_cast<double>(free) / 1e9) + " GB are free");
}

double dense_bytes(std::int64_t m, std::int64_t k, std::int64_t p) {
  return 8.0 * (static_cast<double>(m) * static_cast<double>(k) + static_cast<double>(k) * static_cast<double>(p) +
                static_cast<double>(m) * static_cast<double>(p));
}

DeviceArray<double> upload_dense(const DenseOperand& x, const char* what, const char* where) {
  DeviceArray<double> d(static_cast<std::size_t>(x.rows * x.cols), what);
  if (d.size()) PAGH_CUDA_CHECK(cudaMemcpy(d.data(), x.data, d.bytes(), cudaMemcpyHostToDevice), where);
  return d;
}

template <class T>
DeviceArray<T> upload_raw(const T* host, std::int64_t count, const char* what, const char* where) {
  DeviceArray<T> d(static_cast<std::size_t>(count), what);
  if (count) PAGH_CUDA_CHECK(cudaMemcpy(d.data(), host, d.bytes(), cudaMemcpyHostToDevice), where);
  return d;
}

// C (m x p, ldc) = op(X) op(Y) with K inner; zero when K = 0 (cuBLAS would leave beta * C = 0 too,
// but an empty product should not depend on that).
void gemm(cublasHandle_t handle, cublasOperation_t op, std::int64_t m, std::int64_t p, std::int64_t K, const double* x,
          std::int64_t ldx, const double* y, std::int64_t ldy, double* c, const char* where) {
  if (m == 0 || p == 0) return;
  if (K == 0) {
    PAGH_CUDA_CHECK(cudaMemsetAsync(c, 0, static_cast<std::size_t>(m * p) * sizeof(double), nullptr), where);
    return;
  }
  const double one = 1, zero = 0;
  PAGH_CUBLAS_CHECK(cublas_library().dgemm(handle, op, op, m, p, K, &one, x, ldx, y, ldy, &zero, c, m), where);
}

// Scatters CSC columns into a zeroed dense column-major matrix: one block per column (entries of a
// column have distinct rows, so no two threads write the same element).
__global__ void densify_csc(std::int64_t rows, std::int64_t cols, const int* outer, const int* inner, const double* values,
                            double* dense) {
  for (std::int64_t c = blockIdx.x; c < cols; c += gridDim.x)
    for (int e = outer[c] + static_cast<int>(threadIdx.x); e < outer[c + 1]; e += blockDim.x)
      dense[c * rows + inner[e]] = values[e];
}

// A CSC operand on the device (uploaded before the timed part).
struct DeviceCsc {
  std::int64_t rows, cols;
  DeviceArray<int> outer, inner;
  DeviceArray<double> values;
};

DeviceCsc upload_csc(const SparseOperand& x, const char* where) {
  return {x.rows, x.cols, upload_raw(x.outer, x.cols + 1, "CSC column offsets", where),
          upload_raw(x.inner, x.nonzeros, "CSC row indices", where), upload_raw(x.values, x.nonzeros, "CSC values", where)};
}

// Into `dense`, rows * cols doubles already allocated (so that allocation is not timed).
void densify(const DeviceCsc& x, const DeviceArray<double>& dense, const char* where) {
  if (dense.size() == 0) return;
  PAGH_CUDA_CHECK(cudaMemsetAsync(dense.data(), 0, dense.bytes(), nullptr), where);
  densify_csc<<<detail::blocks_for(x.cols, 1), kThreads>>>(x.rows, x.cols, x.outer.data(), x.inner.data(), x.values.data(),
                                                            dense.data());
  check_launch("densify_csc", where);
}

// ---- verification -------------------------------------------------------------------------------

// Sums of squared errors and of squared exact values, and the largest |error|, over the grid: a
// fixed number of blocks and a fixed assignment of entries to threads, so the floating-point sums
// are the same on every run and every device (no atomics).
struct ErrorSums {
  double error2, exact2, max_abs;
};
constexpr int kReduceBlocks = 1024;

__device__ ErrorSums combine(ErrorSums x, ErrorSums y) {
  return {x.error2 + y.error2, x.exact2 + y.exact2, fmax(x.max_abs, y.max_abs)};
}

template <int D>
__global__ void __launch_bounds__(kThreads) error_partials(ProductView v, const double* exact_row_major, ErrorSums* partials) {
  ErrorSums mine{0, 0, 0};
  const std::int64_t total = v.rows * v.cols;
  for (std::int64_t idx = blockIdx.x * std::int64_t{kThreads} + threadIdx.x; idx < total;
       idx += std::int64_t{kReduceBlocks} * kThreads) {
    const double exact = exact_row_major[idx];
    const double error = detail::estimate_entry<D>(v, idx / v.cols, idx % v.cols).value - exact;
    mine = combine(mine, {error * error, exact * exact, fabs(error)});
  }
  using Reduce = cub::BlockReduce<ErrorSums, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  const ErrorSums block = Reduce(storage).Reduce(mine, [](ErrorSums x, ErrorSums y) { return combine(x, y); });
  if (threadIdx.x == 0) partials[blockIdx.x] = block;
}

__global__ void __launch_bounds__(kThreads) error_total(const ErrorSums* partials, ErrorSums* total) {
  ErrorSums mine{0, 0, 0};
  for (int b = threadIdx.x; b < kReduceBlocks; b += kThreads) mine = combine(mine, partials[b]);
  using Reduce = cub::BlockReduce<ErrorSums, kThreads>;
  __shared__ typename Reduce::TempStorage storage;
  const ErrorSums sum = Reduce(storage).Reduce(mine, [](ErrorSums x, ErrorSums y) { return combine(x, y); });
  if (threadIdx.x == 0) *total = sum;
}

// The ranking key of the exact product's entry idx (row-major), for its top-k.
struct ExactKey {
  const double* exact_row_major;
  __device__ std::uint64_t operator()(std::int64_t idx) const { return detail::magnitude_key(exact_row_major[idx]); }
};

// |C| at the given row-major indices.
__global__ void gather_magnitudes(const std::int64_t* indices, std::int64_t n, const double* exact_row_major, double* out) {
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < n; t += std::int64_t{gridDim.x} * blockDim.x)
    out[t] = fabs(exact_row_major[indices[t]]);
}

// How many of `found` have |C| >= threshold: an integer atomic sum, whose result does not depend on
// the order.
__global__ void count_hits(const std::int64_t* found, std::int64_t n, const double* exact_row_major, double threshold,
                           unsigned long long* hits) {
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < n; t += std::int64_t{gridDim.x} * blockDim.x)
    if (fabs(exact_row_major[found[t]]) >= threshold) atomicAdd(hits, 1ull);
}

// A found entry is a hit when its exact magnitude reaches the k-th largest one, ties within
// rounding included (1e-9 of it), as pagh::verify counts them.
std::size_t top_k_hits(const ProductView& view, const double* exact_row_major, std::size_t k, std::size_t* found_count) {
  const std::int64_t total = view.rows * view.cols;
  TopIndices truth = detail::streaming_top_k(ExactKey{exact_row_major}, total, k, nullptr, kVerifyWhere);
  const TopIndices found = device_top_k_indices(view, k, nullptr);
  *found_count = found.count;
  const std::int64_t n_truth = static_cast<std::int64_t>(truth.count);
  if (n_truth == 0) return 0;
  DeviceArray<double> magnitudes(truth.count, "exact top-k magnitudes");
  gather_magnitudes<<<detail::blocks_for(n_truth, kThreads), kThreads>>>(truth.indices.data(), n_truth, exact_row_major,
                                                                         magnitudes.data());
  check_launch("gather_magnitudes", kVerifyWhere);
  std::vector<double> host(truth.count);
  PAGH_CUDA_CHECK(cudaMemcpy(host.data(), magnitudes.data(), host.size() * sizeof(double), cudaMemcpyDeviceToHost), kVerifyWhere);
  const double kth = *std::min_element(host.begin(), host.end());
  DeviceArray<unsigned long long> hits(1, "top-k hit count");
  PAGH_CUDA_CHECK(cudaMemsetAsync(hits.data(), 0, sizeof(unsigned long long), nullptr), kVerifyWhere);
  const std::int64_t n_found = static_cast<std::int64_t>(found.count);
  if (n_found > 0) {
    count_hits<<<detail::blocks_for(n_found, kThreads), kThreads>>>(found.indices.data(), n_found, exact_row_major,
                                                                     kth * (1 - 1e-9), hits.data());
    check_launch("count_hits", kVerifyWhere);
  }
  unsigned long long h = 0;
  PAGH_CUDA_CHECK(cudaMemcpy(&h, hits.data(), sizeof h, cudaMemcpyDeviceToHost), kVerifyWhere);
  return static_cast<std::size_t>(h);
}

}  // namespace

double device_exact_product(const DenseOperand& a, const DenseOperand& b, double* host_out, int device) {
  if (a.cols != b.rows) throw Error(kExactWhere, "dimension mismatch: cols(A) != rows(B)");
  DeviceScope scope(device);
  require_fits(dense_bytes(a.rows, a.cols, b.cols), "A, B and the product A*B", kExactWhere);
  const DeviceArray<double> da = upload_dense(a, "A", kExactWhere), db = upload_dense(b, "B", kExactWhere);
  DeviceArray<double> dc(static_cast<std::size_t>(a.rows * b.cols), "the exact product");
  CublasHandle handle(kExactWhere);
  EventTimer timer(kExactWhere);
  timer.start();
  gemm(handle.get(), CUBLAS_OP_N, a.rows, b.cols, a.cols, da.data(), a.rows, db.data(), b.rows, dc.data(), kExactWhere);
  const double ms = timer.stop();
  if (dc.size()) PAGH_CUDA_CHECK(cudaMemcpy(host_out, dc.data(), dc.bytes(), cudaMemcpyDeviceToHost), kExactWhere);
  return ms;
}

double device_exact_product(const SparseOperand& a, const SparseOperand& b, double* host_out, int device) {
  if (a.cols != b.rows) throw Error(kExactWhere, "dimension mismatch: cols(A) != rows(B)");
  DeviceScope scope(device);
  const double csc_bytes = 12.0 * static_cast<double>(a.nonzeros + b.nonzeros) + 4.0 * static_cast<double>(a.cols + b.cols + 2);
  require_fits(dense_bytes(a.rows, a.cols, b.cols) + csc_bytes, "the densified A and B and the product A*B", kExactWhere);
  const DeviceCsc ca = upload_csc(a, kExactWhere), cb = upload_csc(b, kExactWhere);
  const DeviceArray<double> da(static_cast<std::size_t>(a.rows * a.cols), "densified A");
  const DeviceArray<double> db(static_cast<std::size_t>(b.rows * b.cols), "densified B");
  DeviceArray<double> dc(static_cast<std::size_t>(a.rows * b.cols), "the exact product");
  CublasHandle handle(kExactWhere);
  EventTimer timer(kExactWhere);
  timer.start();
  densify(ca, da, kExactWhere);
  densify(cb, db, kExactWhere);
  gemm(handle.get(), CUBLAS_OP_N, a.rows, b.cols, a.cols, da.data(), a.rows, db.data(), b.rows, dc.data(), kExactWhere);
  const double ms = timer.stop();
  if (dc.size()) PAGH_CUDA_CHECK(cudaMemcpy(host_out, dc.data(), dc.bytes(), cudaMemcpyDeviceToHost), kExactWhere);
  return ms;
}

DeviceMetrics device_verify(const ProductView& view, const DenseOperand& a, const DenseOperand& b, std::size_t k, int device) {
  if (a.cols != b.rows) throw Error(kVerifyWhere, "dimension mismatch: cols(A) != rows(B)");
  if (a.rows != view.rows || b.cols != view.cols) throw Error(kVerifyWhere, "the exact product's shape differs from the sketch's");
  check_device_repetitions(view.repetitions, kVerifyWhere);
  DeviceScope scope(device);
  const std::int64_t m = view.rows, p = view.cols, total = m * p;
  require_fits(dense_bytes(a.rows, a.cols, b.cols), "A, B and the product A*B", kVerifyWhere);
  DeviceMetrics metrics;
  // C^T = B^T A^T, p x m column-major, is C in row-major order: the order of the sketch's indices.
  DeviceArray<double> exact(static_cast<std::size_t>(total), "the exact product");
  {
    const DeviceArray<double> da = upload_dense(a, "A", kVerifyWhere), db = upload_dense(b, "B", kVerifyWhere);
    CublasHandle handle(kVerifyWhere);
    EventTimer timer(kVerifyWhere);
    timer.start();
    gemm(handle.get(), CUBLAS_OP_T, p, m, a.cols, db.data(), b.rows, da.data(), a.rows, exact.data(), kVerifyWhere);
    metrics.exact_ms = timer.stop();
  }  // A and B are freed here: only C is needed from now on

  ErrorSums sums{0, 0, 0};
  if (total > 0) {
    DeviceArray<ErrorSums> partials(kReduceBlocks, "error partial sums"), sum(1, "error sums");
    detail::with_repetitions(view.repetitions, [&](auto d) {
      error_partials<decltype(d)::value><<<kReduceBlocks, kThreads>>>(view, exact.data(), partials.data());
    });
    check_launch("error_partials", kVerifyWhere);
    error_total<<<1, kThreads>>>(partials.data(), sum.data());
    check_launch("error_total", kVerifyWhere);
    PAGH_CUDA_CHECK(cudaMemcpy(&sums, sum.data(), sizeof sums, cudaMemcpyDeviceToHost), kVerifyWhere);
  }
  // The definitions of pagh::verify (sketch/src/exact/verify.cpp).
  metrics.frobenius_exact = std::sqrt(sums.exact2);
  const double error = std::sqrt(sums.error2);
  metrics.relative_frobenius_error =
      metrics.frobenius_exact > 0 ? error / metrics.frobenius_exact : (error > 0 ? INFINITY : 0.0);
  metrics.max_abs_error = sums.max_abs;
  const double sigma = metrics.frobenius_exact / std::sqrt(static_cast<double>(view.buckets));
  metrics.max_error_in_sigmas = sigma > 0 ? metrics.max_abs_error / sigma : 0.0;

  metrics.top_k = std::min<std::size_t>(k, static_cast<std::size_t>(total));
  if (metrics.top_k == 0) return metrics;
  std::size_t found = 0;
  const std::size_t hits = top_k_hits(view, exact.data(), metrics.top_k, &found);
  metrics.top_k_recall = static_cast<double>(std::min(hits, metrics.top_k)) / static_cast<double>(metrics.top_k);
  metrics.top_k_precision = found == 0 ? 0.0 : static_cast<double>(hits) / static_cast<double>(found);
  return metrics;
}

}  // namespace pagh::cuda
