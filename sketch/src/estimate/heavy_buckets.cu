// top_k and above of a DeviceProduct with heavy-bucket recovery on the device (sketch/recovery.hpp;
// the control flow is recovery_driver.hpp's, shared with the CPU). Nothing here touches all m * p
// entries: heavy buckets are counted and selected over d * b values, the longer side's hashes are
// indexed by bucket (a radix sort), and one thread per (heavy bucket, shorter-side index) pair
// looks up the pairs that land in that bucket. Qualifying entries are appended through an atomic
// counter and then sorted by row-major index, so the answer is deterministic.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "estimate/device_queries.hpp"
#include "estimate/estimator.cuh"
#include "estimate/recovery_driver.hpp"
#include "estimate/streaming_top_k.cuh"

namespace pagh::cuda {
namespace {

using detail::blocks_for;
constexpr int kThreads = 256;
constexpr const char* kWhere = "pagh::cuda::DeviceProduct recovery";
// Repetitions enumerated at most: d - ceil(d/2) + 1 for d <= kMaxDeviceRepetitions.
constexpr int kMaxEnumerated = kMaxDeviceRepetitions / 2 + 1;

struct RepList {
  int count = 0;
  int t[kMaxEnumerated] = {};
};

// The longer side's indices sorted by their bucket in one repetition, with the start of each group
// of buckets sharing their top bits (about one index per group).
struct InnerIndexView {
  const std::uint32_t* keys;
  const std::int64_t* ids;
  const std::int64_t* starts;
  const std::uint32_t* occupied;  // bit h: some index has bucket h (most buckets are empty)
  int shift;
};

__device__ __forceinline__ bool bit(const std::uint32_t* bits, std::int64_t h) { return (bits[h / 32] >> (h % 32)) & 1u; }

// heavy bit of (t, h): |c_t[h]| >= tau, in d * words words (blockIdx.y = t).
__global__ void mark_heavy(const double* sketches, std::int64_t b, std::int64_t words, double tau, std::uint32_t* bits) {
  const double* c = sketches + blockIdx.y * b;
  for (std::int64_t h = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; h < b; h += std::int64_t{gridDim.x} * blockDim.x)
    if (fabs(c[h]) >= tau) atomicOr(bits + blockIdx.y * words + h / 32, 1u << (h % 32));
}

__global__ void mark_occupied(const std::uint32_t* hashes, std::int64_t n, std::uint32_t* bits) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n; i += std::int64_t{gridDim.x} * blockDim.x)
    atomicOr(bits + hashes[i] / 32, 1u << (hashes[i] % 32));
}

// counts[t] += #{h : |c_t[h]| >= tau} (blockIdx.y = t); nonfinite += #{non-finite values}.
__global__ void count_heavy(const double* sketches, std::int64_t b, double tau, unsigned long long* counts,
                            unsigned long long* nonfinite) {
  const double* c = sketches + blockIdx.y * b;
  unsigned long long heavy = 0, bad = 0;
  for (std::int64_t base = blockIdx.x * std::int64_t{blockDim.x}; base < b; base += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t h = base + threadIdx.x;
    const double v = h < b ? c[h] : 0.0;
    heavy += __syncthreads_count(h < b && fabs(v) >= tau);
    bad += __syncthreads_count(h < b && !isfinite(v));
  }
  if (threadIdx.x == 0) {
    atomicAdd(counts + blockIdx.y, heavy);
    atomicAdd(nonfinite, bad);
  }
}

__global__ void magnitude_keys(const double* sketches, std::int64_t n, std::uint64_t* keys) {
  for (std::int64_t x = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; x < n; x += std::int64_t{gridDim.x} * blockDim.x)
    keys[x] = detail::magnitude_key(sketches[x]);
}

__global__ void iota(std::int64_t n, std::int64_t* out) {
  for (std::int64_t x = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; x < n; x += std::int64_t{gridDim.x} * blockDim.x)
    out[x] = x;
}

// starts[g] = first position whose key's group (key >> shift) is >= g.
__global__ void group_starts(const std::uint32_t* keys, std::int64_t n, int shift, std::int64_t groups, std::int64_t* starts) {
  for (std::int64_t g = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; g <= groups; g += std::int64_t{gridDim.x} * blockDim.x) {
    std::int64_t lo = 0, hi = n;
    while (lo < hi) {
      const std::int64_t mid = (lo + hi) / 2;
      if (static_cast<std::int64_t>(keys[mid] >> shift) < g) lo = mid + 1;
      else hi = mid;
    }
    starts[g] = lo;
  }
}

struct IsHeavy {
  const double* c;
  double tau;
  __device__ bool operator()(std::uint32_t h) const { return fabs(c[h]) >= tau; }
};

// One thread per (heavy bucket, shorter-side index u): the longer side's indices w in bucket
// heavy XOR hash_t(u) pair with u. Pairs heavy in an earlier enumerated repetition were taken
// there; pairs heavy in fewer than `needed` repetitions cannot qualify and are dropped on their
// heavy bits (heavy_bits: d * words words) before any sketch value is read; qualifying row-major
// indices are appended to out (while below capacity).
template <int D>
__global__ void enumerate_pairs(ProductView v, double tau, RepList reps, int s, InnerIndexView index, const std::uint32_t* heavy,
                                std::int64_t heavy_count, const std::uint32_t* heavy_bits, std::int64_t words, int needed,
                                bool rows_outer, std::int64_t outer, unsigned long long* found, std::int64_t* out,
                                std::int64_t capacity) {
  const int t = reps.t[s];
  const std::int64_t items = outer * heavy_count;
  for (std::int64_t item = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; item < items;
       item += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t u = item % outer;
    const std::uint32_t hu = rows_outer ? v.bucket_a[t * v.rows + u] : v.bucket_b[t * v.cols + u];
    const std::uint32_t bucket = heavy[item / outer] ^ hu;
    if (!bit(index.occupied, bucket)) continue;
    const std::int64_t group = bucket >> index.shift;
    for (std::int64_t at = index.starts[group], end = index.starts[group + 1]; at < end; ++at) {
      if (index.keys[at] != bucket) continue;
      const std::int64_t w = index.ids[at];
      const std::int64_t i = rows_outer ? u : w, j = rows_outer ? w : u;
      auto heavy_in = [&](int r) { return bit(heavy_bits + r * words, v.bucket_a[r * v.rows + i] ^ v.bucket_b[r * v.cols + j]); };
      bool earlier = false;
      for (int e = 0; e < s && !earlier; ++e) earlier = heavy_in(reps.t[e]);
      if (earlier) continue;
      int count = 0;
      for (int r = 0; r < v.repetitions && count < needed; ++r) count += heavy_in(r);
      if (count < needed) continue;
      if (fabs(detail::estimate_entry<D>(v, i, j).value) >= tau) {
        const unsigned long long pos = atomicAdd(found, 1ull);
        if (pos < static_cast<unsigned long long>(capacity)) out[pos] = i * v.cols + j;
      }
    }
  }
}

template <class T>
T read_back(const T* device, cudaStream_t stream) {
  T host{};
  PAGH_CUDA_CHECK(cudaMemcpyAsync(&host, device, sizeof(T), cudaMemcpyDeviceToHost, stream), kWhere);
  PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);
  return host;
}

struct InnerIndex {
  DeviceArray<std::uint32_t> keys, occupied;
  DeviceArray<std::int64_t> ids, starts;
  int shift = 0;
  InnerIndexView view() const { return {keys.data(), ids.data(), starts.data(), occupied.data(), shift}; }
};

// The recovery driver's operations on the device (recovery_driver.hpp).
class DeviceRecoverer {
 public:
  DeviceRecoverer(const ProductView& view, cudaStream_t stream) : v_(view), stream_(stream) {}

  bool finite() {
    heavy_counts(INFINITY);
    return nonfinite_ == 0;
  }

  std::vector<std::int64_t> heavy_counts(double tau) {
    const int d = v_.repetitions;
    DeviceArray<unsigned long long> counts(static_cast<std::size_t>(d) + 1, "heavy bucket counts");
    PAGH_CUDA_CHECK(cudaMemsetAsync(counts.data(), 0, counts.bytes(), stream_), kWhere);
    const dim3 grid(std::min<unsigned>(blocks_for(v_.buckets, kThreads), 1024u), static_cast<unsigned>(d));
    count_heavy<<<grid, kThreads, 0, stream_>>>(v_.sketches, v_.buckets, tau, counts.data(), counts.data() + d);
    check_launch("count_heavy", kWhere);
    std::vector<unsigned long long> host(static_cast<std::size_t>(d) + 1);
    PAGH_CUDA_CHECK(cudaMemcpyAsync(host.data(), counts.data(), counts.bytes(), cudaMemcpyDeviceToHost, stream_), kWhere);
    PAGH_CUDA_CHECK(cudaStreamSynchronize(stream_), kWhere);
    nonfinite_ = host[static_cast<std::size_t>(d)];
    return std::vector<std::int64_t>(host.begin(), host.end() - 1);
  }

  double pooled(std::int64_t rank) {
    sort_magnitudes();
    return std::bit_cast<double>(read_back(sorted_.data() + (rank - 1), stream_));
  }

  double smallest_positive() {
    std::int64_t positive = 0;
    for (std::int64_t c : heavy_counts(std::numeric_limits<double>::denorm_min())) positive += c;
    return positive == 0 ? INFINITY : pooled(positive);
  }

  std::vector<Entry> scan_top_k(std::size_t k) { return device_top_k(v_, k, stream_); }
  std::vector<Entry> scan_above(double tau, std::size_t max_entries) { return device_above(v_, tau, max_entries, stream_); }
  std::vector<Entry> entries_at(const std::vector<std::int64_t>& indices) {
    DeviceArray<std::int64_t> idx(indices.size(), "zero-estimate indices");
    if (!indices.empty())
      PAGH_CUDA_CHECK(cudaMemcpy(idx.data(), indices.data(), idx.bytes(), cudaMemcpyHostToDevice), kWhere);
    return device_entries_at(v_, idx.data(), static_cast<std::int64_t>(indices.size()), stream_);
  }

  recovery::Enumerated enumerate(double tau, const recovery::RoundPlan& plan, std::size_t keep_best, std::size_t max_entries) {
    std::int64_t capacity = keep_best ? std::max<std::int64_t>(4 * static_cast<std::int64_t>(keep_best), 1 << 16)
                                      : static_cast<std::int64_t>(std::min<std::size_t>(max_entries + 1, 1 << 20));
    std::int64_t found = run(tau, plan, capacity);
    if (!keep_best && found > static_cast<std::int64_t>(max_entries))
      throw TooManyEntries("pagh::cuda::DeviceProduct::above", "more than " + std::to_string(max_entries) +
                                                                   " entries have |estimate| >= " + std::to_string(tau) +
                                                                   "; raise the threshold or use top_k");
    if (found > capacity) found = run(tau, plan, capacity = found);

    recovery::Enumerated out;
    out.qualified = found;
    std::int64_t* idx = sort_found(found);
    std::int64_t keep = found;
    if (keep_best && found > static_cast<std::int64_t>(keep_best)) {
      idx = rank_found(found);
      keep = static_cast<std::int64_t>(keep_best);
    }
    out.entries = device_entries_at(v_, idx, keep, stream_);
    return out;
  }

 private:
  // Enumerates every repetition of the plan into found_ (up to capacity); returns the count.
  std::int64_t run(double tau, const recovery::RoundPlan& plan, std::int64_t capacity) {
    const bool rows_outer = recovery::Shape{v_.rows, v_.cols, v_.buckets, v_.repetitions}.rows_outer();
    const std::int64_t outer = rows_outer ? v_.rows : v_.cols;
    RepList reps;
    reps.count = static_cast<int>(plan.reps.size());
    std::copy(plan.reps.begin(), plan.reps.end(), reps.t);
    if (found_.size() < static_cast<std::size_t>(capacity)) found_ = DeviceArray<std::int64_t>(static_cast<std::size_t>(capacity), "recovered indices");
    DeviceArray<unsigned long long> count(1, "recovered count");
    PAGH_CUDA_CHECK(cudaMemsetAsync(count.data(), 0, sizeof(unsigned long long), stream_), kWhere);
    const std::int64_t words = (v_.buckets + 31) / 32;
    DeviceArray<std::uint32_t> heavy_bits(static_cast<std::size_t>(words * v_.repetitions), "heavy bucket bits");
    PAGH_CUDA_CHECK(cudaMemsetAsync(heavy_bits.data(), 0, heavy_bits.bytes(), stream_), kWhere);
    const dim3 grid(std::min<unsigned>(blocks_for(v_.buckets, kThreads), 4096u), static_cast<unsigned>(v_.repetitions));
    mark_heavy<<<grid, kThreads, 0, stream_>>>(v_.sketches, v_.buckets, words, tau, heavy_bits.data());
    check_launch("mark_heavy", kWhere);
    const int needed = recovery::heavy_needed(v_.repetitions);
    for (int s = 0; s < reps.count; ++s) {
      const int t = reps.t[s];
      const InnerIndex& index = inner_index(t, rows_outer);
      const double* c = v_.sketches + t * v_.buckets;
      DeviceArray<std::uint32_t> heavy(static_cast<std::size_t>(v_.buckets), "heavy buckets");
      DeviceArray<std::int64_t> heavy_count(1, "heavy bucket count");
      const thrust::counting_iterator<std::uint32_t> first(0);
      std::size_t bytes = 0;
      PAGH_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, first, heavy.data(), heavy_count.data(), v_.buckets, IsHeavy{c, tau}, stream_), kWhere);
      PAGH_CUDA_CHECK(cub::DeviceSelect::If(temp_.get(bytes), bytes, first, heavy.data(), heavy_count.data(), v_.buckets, IsHeavy{c, tau}, stream_), kWhere);
      const std::int64_t n_heavy = read_back(heavy_count.data(), stream_);
      const std::int64_t items = outer * n_heavy;
      if (items == 0) continue;
      detail::with_repetitions(v_.repetitions, [&](auto d) {
        enumerate_pairs<decltype(d)::value><<<blocks_for(items, kThreads), kThreads, 0, stream_>>>(
            v_, tau, reps, s, index.view(), heavy.data(), n_heavy, heavy_bits.data(), words, needed, rows_outer, outer, count.data(),
            found_.data(), capacity);
      });
      check_launch("enumerate_pairs", kWhere);
    }
    return static_cast<std::int64_t>(read_back(count.data(), stream_));
  }

  const InnerIndex& inner_index(int t, bool rows_outer) {
    auto it = index_.find(t);
    if (it != index_.end()) return it->second;
    const std::int64_t n = rows_outer ? v_.cols : v_.rows;
    const std::uint32_t* hashes = rows_outer ? v_.bucket_b + t * v_.cols : v_.bucket_a + t * v_.rows;
    const int log2b = std::countr_zero(static_cast<std::uint64_t>(v_.buckets));
    int bits = 0;
    while (bits < log2b && (std::int64_t{1} << bits) < n) ++bits;
    InnerIndex index;
    index.shift = log2b - bits;
    index.keys = DeviceArray<std::uint32_t>(static_cast<std::size_t>(n), "bucket index keys");
    index.ids = DeviceArray<std::int64_t>(static_cast<std::size_t>(n), "bucket index ids");
    index.starts = DeviceArray<std::int64_t>((std::size_t{1} << bits) + 1, "bucket index groups");
    index.occupied = DeviceArray<std::uint32_t>(static_cast<std::size_t>((v_.buckets + 31) / 32), "occupied buckets");
    PAGH_CUDA_CHECK(cudaMemsetAsync(index.occupied.data(), 0, index.occupied.bytes(), stream_), kWhere);
    if (n > 0) {
      mark_occupied<<<blocks_for(n, kThreads), kThreads, 0, stream_>>>(hashes, n, index.occupied.data());
      check_launch("mark_occupied", kWhere);
    }
    DeviceArray<std::int64_t> sequence(static_cast<std::size_t>(n), "bucket index sequence");
    if (n > 0) {
      iota<<<blocks_for(n, kThreads), kThreads, 0, stream_>>>(n, sequence.data());
      check_launch("iota", kWhere);
      std::size_t bytes = 0;
      PAGH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, hashes, index.keys.data(), sequence.data(), index.ids.data(), n, 0,
                                                      std::max(log2b, 1), stream_), kWhere);
      PAGH_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp_.get(bytes), bytes, hashes, index.keys.data(), sequence.data(),
                                                      index.ids.data(), n, 0, std::max(log2b, 1), stream_), kWhere);
    }
    const std::int64_t groups = std::int64_t{1} << bits;
    group_starts<<<blocks_for(groups + 1, kThreads), kThreads, 0, stream_>>>(index.keys.data(), n, index.shift, groups, index.starts.data());
    check_launch("group_starts", kWhere);
    PAGH_CUDA_CHECK(cudaStreamSynchronize(stream_), kWhere);  // `sequence` is freed on return
    return index_.emplace(t, std::move(index)).first->second;
  }

  void sort_magnitudes() {
    if (sorted_.size()) return;
    const std::int64_t n = v_.buckets * v_.repetitions;
    DeviceArray<std::uint64_t> keys(static_cast<std::size_t>(n), "bucket magnitudes");
    sorted_ = DeviceArray<std::uint64_t>(static_cast<std::size_t>(n), "sorted bucket magnitudes");
    magnitude_keys<<<blocks_for(n, kThreads), kThreads, 0, stream_>>>(v_.sketches, n, keys.data());
    check_launch("magnitude_keys", kWhere);
    std::size_t bytes = 0;
    PAGH_CUDA_CHECK(cub::DeviceRadixSort::SortKeysDescending(nullptr, bytes, keys.data(), sorted_.data(), n, 0, detail::kMagnitudeKeyBits,
                                                             stream_), kWhere);
    PAGH_CUDA_CHECK(cub::DeviceRadixSort::SortKeysDescending(temp_.get(bytes), bytes, keys.data(), sorted_.data(), n, 0,
                                                             detail::kMagnitudeKeyBits, stream_), kWhere);
    PAGH_CUDA_CHECK(cudaStreamSynchronize(stream_), kWhere);
  }

  // found_'s first n indices in ascending (row-major) order, in sorted_idx_.
  std::int64_t* sort_found(std::int64_t n) {
    sorted_idx_ = DeviceArray<std::int64_t>(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)), "sorted recovered indices");
    if (n == 0) return sorted_idx_.data();
    std::size_t bytes = 0;
    PAGH_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, found_.data(), sorted_idx_.data(), n, 0, 64, stream_), kWhere);
    PAGH_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp_.get(bytes), bytes, found_.data(), sorted_idx_.data(), n, 0, 64, stream_), kWhere);
    return sorted_idx_.data();
  }

  // sorted_idx_'s n indices in rank order (|estimate| descending; the stable sort keeps ties in
  // index order), into found_.
  std::int64_t* rank_found(std::int64_t n) {
    DeviceArray<std::uint64_t> keys(static_cast<std::size_t>(n), "recovered keys"), ranked(static_cast<std::size_t>(n), "ranked keys");
    detail::with_repetitions(v_.repetitions, [&](auto d) {
      detail::key_selected<<<blocks_for(n, kThreads), kThreads, 0, stream_>>>(detail::SketchKey<decltype(d)::value>{v_}, n,
                                                                             sorted_idx_.data(), keys.data());
    });
    check_launch("key_selected", kWhere);
    std::size_t bytes = 0;
    PAGH_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, bytes, keys.data(), ranked.data(), sorted_idx_.data(), found_.data(),
                                                              n, 0, detail::kMagnitudeKeyBits, stream_), kWhere);
    PAGH_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(temp_.get(bytes), bytes, keys.data(), ranked.data(), sorted_idx_.data(),
                                                              found_.data(), n, 0, detail::kMagnitudeKeyBits, stream_), kWhere);
    PAGH_CUDA_CHECK(cudaStreamSynchronize(stream_), kWhere);
    return found_.data();
  }

  ProductView v_;
  cudaStream_t stream_;
  unsigned long long nonfinite_ = 0;
  DeviceArray<std::uint64_t> sorted_;
  DeviceArray<std::int64_t> found_, sorted_idx_;
  std::map<int, InnerIndex> index_;
  detail::TempStorage temp_;
};

}  // namespace

std::vector<Entry> device_recover_top_k(const ProductView& view, std::size_t k, Recovery how, RecoveryStats& stats,
                                        cudaStream_t stream) {
  check_device_repetitions(view.repetitions, "pagh::cuda::DeviceProduct::top_k");
  DeviceRecoverer ops(view, stream);
  return recovery::recover_top_k(ops, {view.rows, view.cols, view.buckets, view.repetitions}, k, how, stats);
}

std::vector<Entry> device_recover_above(const ProductView& view, double threshold, std::size_t max_entries, Recovery how,
                                        RecoveryStats& stats, cudaStream_t stream) {
  check_device_repetitions(view.repetitions, "pagh::cuda::DeviceProduct::above");
  DeviceRecoverer ops(view, stream);
  return recovery::recover_above(ops, {view.rows, view.cols, view.buckets, view.repetitions}, threshold, max_entries, how, stats,
                                 "pagh::cuda::DeviceProduct::above");
}

}  // namespace pagh::cuda
