// The device queries of a compressed product (top-k, threshold, decompression) on raw device
// pointers: the boundary between DeviceProduct (device_product_host.cpp, which sees Eigen) and the
// kernels (device_product.cu, which must not: nvcc 13 warns heavily on Eigen, DESIGN.md §2).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "device_memory.hpp"
#include "sketch/entry.hpp"
#include "sketch/recovery.hpp"

namespace pagh::cuda {

// A compressed product as the kernels read it; layouts as in hashing.hpp (repetition-major).
struct ProductView {
  std::int64_t rows = 0, cols = 0, buckets = 0;
  int repetitions = 0;
  const double* sketches = nullptr;  // repetitions * buckets
  const std::uint32_t* bucket_a = nullptr;  // repetitions * rows
  const std::uint32_t* bucket_b = nullptr;  // repetitions * cols
  const std::int8_t* sign_a = nullptr;
  const std::int8_t* sign_b = nullptr;
};

// The medians are computed in registers by kernels specialized for each d up to this bound; a
// larger d is refused with a pagh::Error (the CPU object has no such limit).
inline constexpr int kMaxDeviceRepetitions = 64;

// Entries of the m x p estimate are streamed in slabs of at most this many (row-major linear
// indices), so no query ever holds more than a slab of the product on the device.
inline constexpr std::int64_t kSlabEntries = std::int64_t{1} << 23;

// The min(k, m*p) entries of largest |estimate|, ties by row then column (CompressedProduct::top_k),
// evaluating every entry.
std::vector<Entry> device_top_k(const ProductView& view, std::size_t k, cudaStream_t stream);
// Row-major indices (i * cols + j) of the same entries, in the same order, left on the device:
// the first `count` elements of `indices`. Device memory: O(k + kSlabEntries) entries.
struct TopIndices {
  DeviceArray<std::int64_t> indices;
  std::size_t count = 0;
};
TopIndices device_top_k_indices(const ProductView& view, std::size_t k, cudaStream_t stream);
// The entries at n row-major indices (device memory), in that order.
std::vector<Entry> device_entries_at(const ProductView& view, const std::int64_t* idx, std::int64_t n, cudaStream_t stream);
// top_k and above with heavy-bucket recovery (heavy_buckets.cu; the exhaustive versions here are
// its oracle and fallback).
std::vector<Entry> device_recover_top_k(const ProductView& view, std::size_t k, Recovery how, RecoveryStats& stats,
                                        cudaStream_t stream);
std::vector<Entry> device_recover_above(const ProductView& view, double threshold, std::size_t max_entries, Recovery how,
                                        RecoveryStats& stats, cudaStream_t stream);
// Entries with |estimate| >= threshold in row-major order, evaluating every entry; throws
// pagh::Error when more than max_entries qualify.
std::vector<Entry> device_above(const ProductView& view, double threshold, std::size_t max_entries,
                                      cudaStream_t stream);
// The whole estimate, column-major (Eigen's layout), into rows * cols host doubles.
void device_decompress(const ProductView& view, double* host_out, cudaStream_t stream);

// Whether `device` can run this build's kernels (compiled for its architecture); reason if not.
bool device_kernels_usable(int device, std::string* reason);

// Throws pagh::Error naming `where` when d is outside [1, kMaxDeviceRepetitions].
void check_device_repetitions(int repetitions, const char* where);

}  // namespace pagh::cuda
