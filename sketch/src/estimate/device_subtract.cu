// device_subtract.hpp: per repetition, the entries' buckets sorted with their positions (a stable
// radix sort keeps the order of `known` within a bucket); one thread per bucket run then subtracts
// its entries in that order, as the host's loop does.
#include <cub/device/device_radix_sort.cuh>

#include <vector>

#include "estimate/device_subtract.hpp"

namespace pagh::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void buckets_of(const std::int64_t* __restrict__ rows, const std::int64_t* __restrict__ cols, std::int64_t n,
                           const std::uint32_t* __restrict__ h1, const std::uint32_t* __restrict__ h2,
                           std::uint32_t* __restrict__ keys, std::int64_t* __restrict__ order) {
  const std::int64_t e = blockIdx.x * std::int64_t{kThreads} + threadIdx.x;
  if (e >= n) return;
  keys[e] = h1[rows[e]] ^ h2[cols[e]];
  order[e] = e;
}

// The thread at the start of a run of equal buckets subtracts the run's entries in order.
__global__ void subtract_runs(double* __restrict__ c, const std::uint32_t* __restrict__ keys, const std::int64_t* __restrict__ order,
                              std::int64_t n, const std::int64_t* __restrict__ rows, const std::int64_t* __restrict__ cols,
                              const double* __restrict__ values, const std::int8_t* __restrict__ s1, const std::int8_t* __restrict__ s2) {
  const std::int64_t q = blockIdx.x * std::int64_t{kThreads} + threadIdx.x;
  if (q >= n || (q > 0 && keys[q - 1] == keys[q])) return;
  const std::uint32_t bucket = keys[q];
  double v = c[bucket];
  for (std::int64_t r = q; r < n && keys[r] == bucket; ++r) {
    const std::int64_t e = order[r];
    v -= double(int(s1[rows[e]]) * int(s2[cols[e]])) * values[e];
  }
  c[bucket] = v;
}

template <class T>
DeviceArray<T> upload(const std::vector<T>& host, const char* what, cudaStream_t stream, const char* where) {
  DeviceArray<T> a(host.size(), what);
  if (!host.empty()) PAGH_CUDA_CHECK(cudaMemcpyAsync(a.data(), host.data(), a.bytes(), cudaMemcpyHostToDevice, stream), where);
  return a;
}

}  // namespace

void device_subtract(double* sketches, const DeviceTables& tables, std::span<const Entry> known, cudaStream_t stream) {
  constexpr const char* kWhere = "pagh::cuda::DeviceProduct::subtract";
  const std::int64_t n = static_cast<std::int64_t>(known.size());
  if (n == 0) return;
  std::vector<std::int64_t> row(known.size()), col(known.size());
  std::vector<double> value(known.size());
  for (std::size_t e = 0; e < known.size(); ++e) row[e] = known[e].row, col[e] = known[e].col, value[e] = known[e].value;
  const DeviceArray<std::int64_t> rows = upload(row, "known entries", stream, kWhere), cols = upload(col, "known entries", stream, kWhere);
  const DeviceArray<double> values = upload(value, "known entries", stream, kWhere);
  DeviceArray<std::uint32_t> keys(known.size(), "known entries' buckets"), sorted_keys(known.size(), "known entries' buckets");
  DeviceArray<std::int64_t> order(known.size(), "known entries' order"), sorted_order(known.size(), "known entries' order");
  int bits = 1;
  while (bits < 32 && (std::int64_t{1} << bits) < tables.buckets) ++bits;
  std::size_t temp_bytes = 0;
  PAGH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys.data(), sorted_keys.data(), order.data(), sorted_order.data(),
                                                  n, 0, bits, stream), kWhere);
  DeviceArray<unsigned char> temp(temp_bytes, "radix sort workspace");
  const unsigned blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
  for (int t = 0; t < tables.repetitions; ++t) {
    const std::uint32_t* h1 = tables.bucket_a.data() + t * tables.m;
    const std::uint32_t* h2 = tables.bucket_b.data() + t * tables.p;
    buckets_of<<<blocks, kThreads, 0, stream>>>(rows.data(), cols.data(), n, h1, h2, keys.data(), order.data());
    check_launch("buckets_of", kWhere);
    PAGH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), temp_bytes, keys.data(), sorted_keys.data(), order.data(),
                                                    sorted_order.data(), n, 0, bits, stream), kWhere);
    subtract_runs<<<blocks, kThreads, 0, stream>>>(sketches + t * tables.buckets, sorted_keys.data(), sorted_order.data(), n, rows.data(),
                                                   cols.data(), values.data(), tables.sign_a.data() + t * tables.m,
                                                   tables.sign_b.data() + t * tables.p);
    check_launch("subtract_runs", kWhere);
  }
  PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);
}

}  // namespace pagh::cuda
