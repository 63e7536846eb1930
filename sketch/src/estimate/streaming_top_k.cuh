// Top-k of an implicit m x p matrix on the device, streaming over slabs of its row-major linear
// index, with O(k + kSlabEntries) device memory whatever m x p is (m = p = 16384 is 268M entries).
//
// Rank order (CompressedProduct::top_k): |value| descending, then row, then column ascending, that
// is row-major index ascending. Keys are the bits of |value| (estimator.cuh), values the row-major
// indices, and every sort is CUB's stable descending radix sort over input kept in index order
// among equal keys, so ties come out by index without a second key:
//   - until k candidates exist, every entry of a slab is appended (in index order);
//   - once the best k are known (sorted, the k-th key tau), a slab contributes only entries with
//     key > tau, selected by cub::DeviceSelect::If, which keeps index order: an entry equal to tau
//     ranks after the current k-th, since all earlier slabs have smaller indices;
//   - candidates = [best k (rank order) | new ones (index order)]; a stable sort keeps equal keys
//     in index order because every best index is smaller than every new one; keep the first k.
// Deterministic: no atomics, radix sort and selection are deterministic.
#pragma once

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "device_memory.hpp"
#include "estimate/device_queries.hpp"
#include "estimate/estimator.cuh"

namespace pagh::cuda::detail {

// Whether an entry can enter the current best k: key strictly above the k-th key (read on the
// device, so no host round trip is needed for tau).
template <class KeyOf>
struct BeatsKth {
  KeyOf key_of;
  const std::uint64_t* kth;
  __device__ bool operator()(std::int64_t idx) const { return key_of(idx) > *kth; }
};

template <class KeyOf>
__global__ void append_all(KeyOf key_of, std::int64_t lo, std::int64_t n, std::uint64_t* keys, std::int64_t* idx) {
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < n; t += std::int64_t{gridDim.x} * blockDim.x) {
    keys[t] = key_of(lo + t);
    idx[t] = lo + t;
  }
}

template <class KeyOf>
__global__ void key_selected(KeyOf key_of, std::int64_t n, const std::int64_t* idx, std::uint64_t* keys) {
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < n; t += std::int64_t{gridDim.x} * blockDim.x)
    keys[t] = key_of(idx[t]);
}

// Grows temporary storage on demand (CUB's two-phase size query).
class TempStorage {
 public:
  void* get(std::size_t bytes) {
    if (bytes > buffer_.size()) buffer_ = DeviceArray<unsigned char>(bytes, "CUB temporary storage");
    return buffer_.data();
  }

 private:
  DeviceArray<unsigned char> buffer_;
};

// Row-major indices of the min(k, total) top entries in rank order (the first `count` of indices).
template <class KeyOf>
TopIndices streaming_top_k(KeyOf key_of, std::int64_t total, std::size_t k_requested, cudaStream_t stream,
                           const char* where) {
  TopIndices out;
  const std::int64_t k = static_cast<std::int64_t>(std::min<std::size_t>(k_requested, static_cast<std::size_t>(total)));
  if (k <= 0) return out;
  const std::int64_t slab = std::min(total, kSlabEntries);
  const std::size_t capacity = static_cast<std::size_t>(k + slab);
  DeviceArray<std::uint64_t> keys_a(capacity, "top-k keys"), keys_b(capacity, "top-k keys");
  DeviceArray<std::int64_t> idx_a(capacity, "top-k indices"), idx_b(capacity, "top-k indices");
  DeviceArray<std::int64_t> selected(1, "top-k selection count");
  cub::DoubleBuffer<std::uint64_t> keys(keys_a.data(), keys_b.data());
  cub::DoubleBuffer<std::int64_t> idx(idx_a.data(), idx_b.data());
  TempStorage temp;
  constexpr int kThreads = 256;

  std::int64_t count = 0;  // candidates at the front of the current buffers
  bool ranked = false;     // true once the front holds exactly the best k, in rank order
  auto rank_and_trim = [&] {
    std::size_t bytes = 0;
    PAGH_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, bytes, keys, idx, count, 0, kMagnitudeKeyBits, stream),
                    where);
    PAGH_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(temp.get(bytes), bytes, keys, idx, count, 0, kMagnitudeKeyBits,
                                                              stream),
                    where);
    count = std::min(count, k);
    ranked = count == k;
  };

  for (std::int64_t lo = 0; lo < total; lo += slab) {
    const std::int64_t n = std::min(slab, total - lo);
    if (!ranked) {
      append_all<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(key_of, lo, n, keys.Current() + count, idx.Current() + count);
      check_launch("append_all", where);
      count += n;
      if (count >= k) rank_and_trim();
      continue;
    }
    const BeatsKth<KeyOf> beats{key_of, keys.Current() + (k - 1)};
    const thrust::counting_iterator<std::int64_t> first(lo);
    std::size_t bytes = 0;
    PAGH_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, first, idx.Current() + k, selected.data(), n, beats, stream), where);
    PAGH_CUDA_CHECK(cub::DeviceSelect::If(temp.get(bytes), bytes, first, idx.Current() + k, selected.data(), n, beats, stream),
                    where);
    std::int64_t found = 0;
    PAGH_CUDA_CHECK(cudaMemcpyAsync(&found, selected.data(), sizeof found, cudaMemcpyDeviceToHost, stream), where);
    PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), where);
    if (found == 0) continue;
    key_selected<<<blocks_for(found, kThreads), kThreads, 0, stream>>>(key_of, found, idx.Current() + k, keys.Current() + k);
    check_launch("key_selected", where);
    count = k + found;
    rank_and_trim();
  }
  if (!ranked) rank_and_trim();  // fewer than k entries in all: rank what there is
  PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), where);
  out.count = static_cast<std::size_t>(count);
  out.indices = std::move(idx.selector == 0 ? idx_a : idx_b);
  return out;
}

}  // namespace pagh::cuda::detail
