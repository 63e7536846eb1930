// The queries of a DeviceProduct computed on the device (device_queries.hpp): top-k, threshold and
// decompression read the d sketches and hash tables where they live; only answers come back.
// Every query streams over slabs of at most kSlabEntries entries of the m x p estimate.
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "estimate/device_queries.hpp"
#include "sketch/too_many_entries.hpp"
#include "estimate/estimator.cuh"
#include "estimate/streaming_top_k.cuh"

namespace pagh::cuda {
namespace {

using detail::blocks_for;
using detail::estimate_entry;
constexpr int kThreads = 256;

// The entries (value and error bar) of the given row-major indices.
template <int D>
__global__ void entries_at(ProductView v, std::int64_t n, const std::int64_t* idx, Entry* out) {
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < n; t += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t i = idx[t] / v.cols, j = idx[t] % v.cols;
    const detail::Estimate e = estimate_entry<D>(v, i, j);
    out[t] = Entry{i, j, e.value, e.spread};
  }
}

// Column-major slab [lo, lo + n) of the estimate (Eigen's layout, so it is copied back as is).
template <int D>
__global__ void estimate_column_major(ProductView v, std::int64_t lo, std::int64_t n, double* out) {
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < n; t += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t cm = lo + t;
    out[t] = estimate_entry<D>(v, cm % v.rows, cm / v.rows).value;
  }
}

__global__ void probe_kernel(int* flag) { *flag = 1; }

template <int D>
struct AtLeast {
  ProductView view;
  double threshold;
  // The host's test, std::fabs(value) >= threshold: false for NaN, as there.
  __device__ bool operator()(std::int64_t idx) const {
    return fabs(estimate_entry<D>(view, idx / view.cols, idx % view.cols).value) >= threshold;
  }
};

// Computes the entries at n device indices and copies them to the end of `out`.
void append_entries(const ProductView& view, const std::int64_t* idx, std::int64_t n, std::vector<Entry>& out,
                    cudaStream_t stream, const char* where) {
  if (n == 0) return;
  DeviceArray<Entry> entries(static_cast<std::size_t>(n), "entries");
  detail::with_repetitions(view.repetitions, [&](auto d) {
    entries_at<decltype(d)::value><<<blocks_for(n, kThreads), kThreads, 0, stream>>>(view, n, idx, entries.data());
  });
  check_launch("entries_at", where);
  const std::size_t old = out.size();
  out.resize(old + static_cast<std::size_t>(n));
  PAGH_CUDA_CHECK(cudaMemcpyAsync(out.data() + old, entries.data(), entries.bytes(), cudaMemcpyDeviceToHost, stream), where);
  PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), where);
}

}  // namespace

void check_device_repetitions(int repetitions, const char* where) {
  if (repetitions < 1 || repetitions > kMaxDeviceRepetitions)
    throw Error(where, "device queries support 1 to " + std::to_string(kMaxDeviceRepetitions) + " repetitions, this product has " +
                           std::to_string(repetitions) + " (use to_host() and query the host object)");
}

std::vector<Entry> device_entries_at(const ProductView& view, const std::int64_t* idx, std::int64_t n, cudaStream_t stream) {
  std::vector<Entry> out;
  out.reserve(static_cast<std::size_t>(n));
  append_entries(view, idx, n, out, stream, "pagh::cuda::DeviceProduct entries");
  return out;
}

TopIndices device_top_k_indices(const ProductView& view, std::size_t k, cudaStream_t stream) {
  constexpr const char* kWhere = "pagh::cuda::DeviceProduct::top_k";
  check_device_repetitions(view.repetitions, kWhere);
  TopIndices top;
  detail::with_repetitions(view.repetitions, [&](auto d) {
    top = detail::streaming_top_k(detail::SketchKey<decltype(d)::value>{view}, view.rows * view.cols, k, stream, kWhere);
  });
  return top;
}

std::vector<Entry> device_top_k(const ProductView& view, std::size_t k, cudaStream_t stream) {
  std::vector<Entry> out;
  if (k == 0 || view.rows == 0 || view.cols == 0) return out;
  const TopIndices top = device_top_k_indices(view, k, stream);
  out.reserve(top.count);
  append_entries(view, top.indices.data(), static_cast<std::int64_t>(top.count), out, stream,
                 "pagh::cuda::DeviceProduct::top_k");
  return out;
}

std::vector<Entry> device_above(const ProductView& view, double threshold, std::size_t max_entries,
                                      cudaStream_t stream) {
  constexpr const char* kWhere = "pagh::cuda::DeviceProduct::above";
  if (!(threshold >= 0)) throw Error(kWhere, "threshold must be a non-negative number");
  std::vector<Entry> out;
  const std::int64_t total = view.rows * view.cols;
  if (total == 0) return out;
  check_device_repetitions(view.repetitions, kWhere);
  const std::int64_t slab = std::min(total, kSlabEntries);
  DeviceArray<std::int64_t> selected_idx(static_cast<std::size_t>(slab), "selected indices");
  DeviceArray<std::int64_t> selected(1, "selection count");
  detail::TempStorage temp;
  std::size_t found_total = 0;
  // Slabs in row-major order and a selection that keeps order: the answer is in row-major order.
  for (std::int64_t lo = 0; lo < total; lo += slab) {
    const std::int64_t n = std::min(slab, total - lo);
    const thrust::counting_iterator<std::int64_t> first(lo);
    detail::with_repetitions(view.repetitions, [&](auto d) {
      const AtLeast<decltype(d)::value> pred{view, threshold};
      std::size_t bytes = 0;
      PAGH_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, first, selected_idx.data(), selected.data(), n, pred, stream), kWhere);
      PAGH_CUDA_CHECK(cub::DeviceSelect::If(temp.get(bytes), bytes, first, selected_idx.data(), selected.data(), n, pred, stream),
                      kWhere);
    });
    std::int64_t found = 0;
    PAGH_CUDA_CHECK(cudaMemcpyAsync(&found, selected.data(), sizeof found, cudaMemcpyDeviceToHost, stream), kWhere);
    PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);
    found_total += static_cast<std::size_t>(found);
    if (found_total > max_entries)
      throw TooManyEntries(kWhere, "more than " + std::to_string(max_entries) + " entries have |estimate| >= " +
                                       std::to_string(threshold) + "; raise the threshold or use top_k");
    append_entries(view, selected_idx.data(), found, out, stream, kWhere);
  }
  return out;
}

void device_decompress(const ProductView& view, double* host_out, cudaStream_t stream) {
  constexpr const char* kWhere = "pagh::cuda::DeviceProduct::decompress";
  const std::int64_t total = view.rows * view.cols;
  if (total == 0) return;
  check_device_repetitions(view.repetitions, kWhere);
  const std::int64_t slab = std::min(total, kSlabEntries);
  DeviceArray<double> buffer(static_cast<std::size_t>(slab), "decompression slab");
  for (std::int64_t lo = 0; lo < total; lo += slab) {
    const std::int64_t n = std::min(slab, total - lo);
    detail::with_repetitions(view.repetitions, [&](auto d) {
      estimate_column_major<decltype(d)::value><<<blocks_for(n, kThreads), kThreads, 0, stream>>>(view, lo, n, buffer.data());
    });
    check_launch("estimate_column_major", kWhere);
    // To pageable host memory: returns once the slab is out of `buffer`, which the next reuses.
    PAGH_CUDA_CHECK(cudaMemcpyAsync(host_out + lo, buffer.data(), static_cast<std::size_t>(n) * sizeof(double),
                                    cudaMemcpyDeviceToHost, stream),
                    kWhere);
  }
  PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);
}

bool device_kernels_usable(int device, std::string* reason) {
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess) previous = 0;
  cudaError_t status = cudaSetDevice(device);
  cudaFuncAttributes attributes{};
  if (status == cudaSuccess) status = cudaFuncGetAttributes(&attributes, probe_kernel);
  cudaSetDevice(previous);
  if (status == cudaSuccess) return true;
  (void)cudaGetLastError();
  if (reason)
    *reason = "device " + std::to_string(device) + " cannot run this build's kernels: " + cudaGetErrorName(status) + ": " +
              cudaGetErrorString(status);
  return false;
}

}  // namespace pagh::cuda
