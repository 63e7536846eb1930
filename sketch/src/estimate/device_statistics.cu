// device_statistics.hpp: two passes over the d * b values. The first finds the largest |c|, the sum
// of squares and whether every value is finite; the second bins |c| below the largest (the bins of
// sketch_statistics.hpp). Fixed launch shapes (from the count alone) and fixed reduction orders make
// the result the same on every run and device.
#include <algorithm>
#include <cmath>
#include <vector>

#include "device_memory.hpp"
#include "estimate/device_statistics.hpp"

namespace pagh::cuda {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kBins = SketchStatistics::kBins;
constexpr int kShift = 52 - SketchStatistics::kMantissaBits;

// Blocks for `count` values: a function of the count alone, so that the sums' order is too.
unsigned blocks_of(std::int64_t count) {
  const std::int64_t per_block = std::int64_t{kThreads} * 16;
  return static_cast<unsigned>(std::clamp<std::int64_t>((count + per_block - 1) / per_block, 1, 2048));
}

// Block-wide sum in a fixed tree; every thread of the block must call it.
__device__ double block_sum(double v, double* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) shared[threadIdx.x] += shared[threadIdx.x + width];
    __syncthreads();
  }
  const double total = shared[0];
  __syncthreads();
  return total;
}

// Per block: the largest |c| (NaN ignored, as std::max(largest, NaN) keeps largest), the sum of c^2
// and how many values are not finite.
__global__ void __launch_bounds__(kThreads) first_pass(const double* __restrict__ x, std::int64_t n, double* largest,
                                                       double* energy, unsigned long long* not_finite) {
  __shared__ double shared[kThreads];
  double big = 0, sum = 0;
  unsigned long long bad = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t{kThreads} + threadIdx.x; i < n; i += std::int64_t{gridDim.x} * kThreads) {
    const double v = fabs(x[i]);
    big = fmax(big, v);
    sum += v * v;
    bad += isfinite(v) ? 0 : 1;
  }
  // The largest: max is exact in any order.
  shared[threadIdx.x] = big;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) shared[threadIdx.x] = fmax(shared[threadIdx.x], shared[threadIdx.x + width]);
    __syncthreads();
  }
  if (threadIdx.x == 0) largest[blockIdx.x] = shared[0];
  __syncthreads();
  const double total = block_sum(sum, shared);
  const double bad_total = block_sum(static_cast<double>(bad), shared);
  if (threadIdx.x == 0) energy[blockIdx.x] = total, not_finite[blockIdx.x] = static_cast<unsigned long long>(bad_total);
}

// Adds v to the 128-bit integer (lo, hi) (atomically: the carry of each addition is seen by the
// thread that made it, so the total is exact in any order).
__device__ void add_wide(unsigned long long* lo, unsigned long long* hi, unsigned long long v_lo, unsigned long long v_hi) {
  const unsigned long long old = atomicAdd(lo, v_lo);
  const unsigned long long carry = old + v_lo < old ? 1 : 0;
  if (v_hi + carry) atomicAdd(hi, v_hi + carry);
}

// The bins of |c| below the largest (key top): counts, and sums of squares as integers in units of
// 2^(2e - 52) for the bin's octave [2^e, 2^(e+1)), of which every c^2 rounded to double is a
// multiple below 2^54; per block the values below the bins (count and sum of squares, fixed order).
__global__ void __launch_bounds__(kThreads) second_pass(const double* __restrict__ x, std::int64_t n, std::int64_t top,
                                                        unsigned long long* counts, unsigned long long* lo,
                                                        unsigned long long* hi, double* below, double* below_energy) {
  __shared__ unsigned int s_counts[kBins];
  __shared__ unsigned long long s_lo[kBins], s_hi[kBins];
  __shared__ double shared[kThreads];
  for (std::int64_t b = threadIdx.x; b < kBins; b += kThreads) s_counts[b] = 0, s_lo[b] = 0, s_hi[b] = 0;
  __syncthreads();
  double under = 0, under_energy = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t{kThreads} + threadIdx.x; i < n; i += std::int64_t{gridDim.x} * kThreads) {
    const double c = x[i];
    const std::int64_t key = static_cast<std::int64_t>(__double_as_longlong(fabs(c)) >> kShift);
    const std::int64_t bin = top - key;
    const double square = c * c;
    if (bin >= kBins) {
      under += 1, under_energy += square;
      continue;
    }
    const int e = static_cast<int>(key >> SketchStatistics::kMantissaBits) - 1023;
    const unsigned long long units = static_cast<unsigned long long>(scalbn(square, 52 - 2 * e));
    atomicAdd(&s_counts[bin], 1u);
    add_wide(&s_lo[bin], &s_hi[bin], units, 0);
  }
  __syncthreads();
  for (std::int64_t b = threadIdx.x; b < kBins; b += kThreads) {
    if (s_counts[b] == 0) continue;
    atomicAdd(&counts[b], static_cast<unsigned long long>(s_counts[b]));
    add_wide(&lo[b], &hi[b], s_lo[b], s_hi[b]);
  }
  const double total = block_sum(under, shared);
  const double total_energy = block_sum(under_energy, shared);
  if (threadIdx.x == 0) below[blockIdx.x] = total, below_energy[blockIdx.x] = total_energy;
}

__global__ void gather(const double* __restrict__ x, const std::int64_t* __restrict__ at, std::int64_t n, double* __restrict__ out) {
  const std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (i < n) out[i] = x[at[i]];
}

template <class T>
std::vector<T> download(const DeviceArray<T>& a, cudaStream_t stream, const char* where) {
  std::vector<T> host(a.size());
  PAGH_CUDA_CHECK(cudaMemcpyAsync(host.data(), a.data(), a.bytes(), cudaMemcpyDeviceToHost, stream), where);
  PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), where);
  return host;
}

}  // namespace

SketchStatistics device_sketch_statistics(const double* values, std::int64_t count, cudaStream_t stream) {
  constexpr const char* kWhere = "pagh::cuda::DeviceProduct::statistics";
  SketchStatistics s;
  s.values = static_cast<double>(count);
  if (count <= 0) return s;
  const unsigned blocks = blocks_of(count);
  DeviceArray<double> largest(blocks, "statistics (largest)"), energy(blocks, "statistics (energy)");
  DeviceArray<unsigned long long> not_finite(blocks, "statistics (finite)");
  first_pass<<<blocks, kThreads, 0, stream>>>(values, count, largest.data(), energy.data(), not_finite.data());
  check_launch("first_pass", kWhere);
  const std::vector<double> big = download(largest, stream, kWhere), sums = download(energy, stream, kWhere);
  const std::vector<unsigned long long> bad = download(not_finite, stream, kWhere);
  for (unsigned b = 0; b < blocks; ++b) {  // in block order
    s.largest = std::max(s.largest, big[b]);
    s.energy += sums[b];
    if (bad[b]) s.finite = false;
  }
  if (!(s.largest > 0) || !std::isfinite(s.largest) || !s.finite || !std::isfinite(s.energy)) {
    // No bins: the host's are undefined for NaN values, and squares beyond the range of double
    // have no units here (CompressedProduct measures such values on the host).
    s.below = s.values;
    return s;
  }
  const std::int64_t top = magnitude_key(s.largest);
  DeviceArray<unsigned long long> counts(kBins, "statistics (counts)"), lo(kBins, "statistics (bins)"), hi(kBins, "statistics (bins)");
  DeviceArray<double> below(blocks, "statistics (below)"), below_energy(blocks, "statistics (below)");
  PAGH_CUDA_CHECK(cudaMemsetAsync(counts.data(), 0, counts.bytes(), stream), kWhere);
  PAGH_CUDA_CHECK(cudaMemsetAsync(lo.data(), 0, lo.bytes(), stream), kWhere);
  PAGH_CUDA_CHECK(cudaMemsetAsync(hi.data(), 0, hi.bytes(), stream), kWhere);
  second_pass<<<blocks, kThreads, 0, stream>>>(values, count, top, counts.data(), lo.data(), hi.data(), below.data(),
                                               below_energy.data());
  check_launch("second_pass", kWhere);
  const std::vector<unsigned long long> c = download(counts, stream, kWhere), l = download(lo, stream, kWhere),
                                        h = download(hi, stream, kWhere);
  const std::vector<double> u = download(below, stream, kWhere), ue = download(below_energy, stream, kWhere);
  s.counts.assign(kBins, 0.0), s.bin_energy.assign(kBins, 0.0);
  for (std::int64_t b = 0; b < kBins; ++b) {
    const std::size_t i = static_cast<std::size_t>(b);
    s.counts[i] = static_cast<double>(c[i]);
    const int e = static_cast<int>((top - b) >> SketchStatistics::kMantissaBits) - 1023;
    const unsigned __int128 units = (static_cast<unsigned __int128>(h[i]) << 64) | l[i];
    s.bin_energy[i] = std::ldexp(static_cast<double>(units), 2 * e - 52);  // one rounding
  }
  for (unsigned b = 0; b < blocks; ++b) s.below += u[b], s.below_energy += ue[b];
  return s;
}

void device_values_at(const double* values, std::span<const std::int64_t> positions, std::span<double> out, cudaStream_t stream) {
  constexpr const char* kWhere = "pagh::cuda::DeviceProduct::values_at";
  if (positions.empty()) return;
  if (positions.size() <= 64) {  // an entry's d values: copies, without allocations or a kernel
    for (std::size_t i = 0; i < positions.size(); ++i)
      PAGH_CUDA_CHECK(cudaMemcpyAsync(&out[i], values + positions[i], sizeof(double), cudaMemcpyDeviceToHost, stream), kWhere);
    PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);
    return;
  }
  const std::int64_t n = static_cast<std::int64_t>(positions.size());
  DeviceArray<std::int64_t> at(positions.size(), "positions");
  DeviceArray<double> got(positions.size(), "values");
  PAGH_CUDA_CHECK(cudaMemcpyAsync(at.data(), positions.data(), at.bytes(), cudaMemcpyHostToDevice, stream), kWhere);
  gather<<<static_cast<unsigned>((n + kThreads - 1) / kThreads), kThreads, 0, stream>>>(values, at.data(), n, got.data());
  check_launch("gather", kWhere);
  PAGH_CUDA_CHECK(cudaMemcpyAsync(out.data(), got.data(), got.bytes(), cudaMemcpyDeviceToHost, stream), kWhere);
  PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);
}

}  // namespace pagh::cuda
