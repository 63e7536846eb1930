// Helpers of the sketch-cuda tests (cuda_compress_test.cpp, cuda_wide_test.cpp): the run's seed,
// inputs whose sums are exact in float, and the sketches of a device or host product as one vector.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "device_memory.hpp"
#include "sketch/compressed_product.hpp"
#include "sketch/cuda.hpp"

namespace pagh::cuda_test {

using Dense = Eigen::MatrixXd;

inline std::uint64_t run_seed() {
  static const std::uint64_t seed = []() -> std::uint64_t {
    if (const char* s = std::getenv("PAGH_TEST_SEED")) return std::strtoull(s, nullptr, 10);
    return (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  }();
  return seed;
}
#define TRACE_SEED() SCOPED_TRACE("random seed " + std::to_string(run_seed()) + " (rerun with PAGH_TEST_SEED=<seed>)")

#define SKIP_WITHOUT_GPU()                                           \
  do {                                                               \
    std::string why;                                                 \
    if (!pagh::cuda::available(&why)) GTEST_SKIP() << "no usable CUDA device: " << why; \
  } while (0)

// Entries in {-1, 0, 1} with the given density: every sum the sketch forms is a small integer,
// exact in float, so any summation order gives the same bits.
inline Dense small_integers(std::int64_t rows, std::int64_t cols, double density, std::mt19937_64& rng) {
  std::bernoulli_distribution keep(density), negative(0.5);
  Dense m(rows, cols);
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i) m(i, j) = keep(rng) ? (negative(rng) ? -1.0 : 1.0) : 0.0;
  return m;
}

inline Dense gaussian(std::int64_t rows, std::int64_t cols, std::mt19937_64& rng) {
  std::normal_distribution<double> d(0.0, 1.0);
  Dense m(rows, cols);
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i) m(i, j) = d(rng);
  return m;
}

inline std::vector<double> device_sketches(const pagh::cuda::DeviceProduct& product) {
  std::vector<double> out(static_cast<std::size_t>(product.repetitions() * product.buckets()));
  EXPECT_EQ(cudaMemcpy(out.data(), product.device_sketches(), out.size() * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

inline std::vector<double> host_sketches(const pagh::CompressedProduct& product) {
  std::vector<double> out;
  for (int t = 0; t < product.repetitions(); ++t)
    for (double c : product.sketch(t)) out.push_back(c);
  return out;
}

// Index of the first difference, or -1.
inline std::int64_t first_difference(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) return 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (std::memcmp(&x[i], &y[i], sizeof(double)) != 0) return static_cast<std::int64_t>(i);
  return -1;
}

template <class T>
std::vector<T> copy_back(const pagh::cuda::DeviceArray<T>& a) {
  std::vector<T> out(a.size());
  if (!out.empty()) EXPECT_EQ(cudaMemcpy(out.data(), a.data(), a.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

}  // namespace pagh::cuda_test
