// The direct path's adds c[h] += v (cpu_engine.hpp: a thin k's outer product, term by term), in
// cache-sized bins of buckets. Added one by one, the terms of a long sketch land on random cache
// lines of a d x b buffer far larger than the caches: every add waits for memory (and a page walk).
// Here the terms are kept in arrival order in a staging buffer and, when it is full or the target
// changes, sorted by bin (a stable counting sort on the bucket's high bits) and added bin by bin,
// each bin's buckets a span that stays in L2.
//
// Same bits as adding them one by one: the counting sort is stable and every bucket lies in one
// bin, so each bucket receives its terms in their arrival order; the adds are the same roundings in
// the same order. Short sketches (a few bins) are added one by one, as before.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <vector>

#include "compress/huge_pages.hpp"

namespace pagh::cpu_sketch {

class DirectAdds {
 public:
  // A bin spans 2^kBinLog doubles (128 KiB); at most 2^kMaxBinsLog bins (wider bins beyond).
  static constexpr int kBinLog = 14, kMaxBinsLog = 12, kMinBinsLog = 2;

  // Terms staged before a sort: enough to touch a good share of a long sketch's lines per sort,
  // bounded (24 MiB per thread) so that the staging stays small next to the d x b buffers.
  static std::int64_t capacity_for(std::int64_t buckets) { return std::clamp<std::int64_t>(buckets / 8, 1 << 16, 1 << 20); }
  // Whether sketches of this length are binned (else added one by one, nothing staged).
  static bool binned(std::int64_t buckets) {
    return buckets > 0 && std::countr_zero(static_cast<std::uint64_t>(buckets)) >= kBinLog + kMinBinsLog;
  }
  // What the staging of one DirectAdds may allocate (compress_memory's plan).
  static double staging_bytes(std::int64_t buckets) {
    return binned(buckets) ? 2.0 * static_cast<double>(capacity_for(buckets)) * (sizeof(std::uint32_t) + sizeof(double)) : 0.0;
  }

  explicit DirectAdds(std::int64_t buckets) : binned_(binned(buckets)) {
    if (!binned_) return;
    const int log2b = std::countr_zero(static_cast<std::uint64_t>(buckets));
    shift_ = std::max(kBinLog, log2b - kMaxBinsLog);
    bins_ = std::size_t{1} << (log2b - shift_);
    capacity_ = static_cast<std::size_t>(capacity_for(buckets));
  }
  DirectAdds(const DirectAdds&) = delete;
  DirectAdds& operator=(const DirectAdds&) = delete;
  ~DirectAdds() = default;  // unflushed terms are dropped: flush() before reading a target

  // The buffer the next terms go to (adds the staged terms to the previous one first).
  void target(double* c) {
    if (c == c_) return;
    flush();
    c_ = c;
  }
  void add(std::uint32_t h, double v) {
    if (!binned_) {
      c_[h] += v;
      return;
    }
    if (staged_ == capacity_) flush();
    if (!bucket_) bucket_ = fresh<std::uint32_t>(capacity_), value_ = fresh<double>(capacity_);
    bucket_[staged_] = h, value_[staged_] = v;
    ++staged_;
  }
  // Adds every staged term to the target.
  void flush() {
    if (staged_ == 0) return;
    if (!sorted_bucket_) sorted_bucket_ = fresh<std::uint32_t>(capacity_), sorted_value_ = fresh<double>(capacity_);
    start_.assign(bins_ + 1, 0);
    for (std::size_t e = 0; e < staged_; ++e) ++start_[(bucket_[e] >> shift_) + 1];
    for (std::size_t q = 1; q <= bins_; ++q) start_[q] += start_[q - 1];
    for (std::size_t e = 0; e < staged_; ++e) {
      const std::size_t at = start_[bucket_[e] >> shift_]++;
      sorted_bucket_[at] = bucket_[e], sorted_value_[at] = value_[e];
    }
    double* c = c_;
    for (std::size_t e = 0; e < staged_; ++e) c[sorted_bucket_[e]] += sorted_value_[e];
    staged_ = 0;
  }

 private:
  template <class T>
  static std::unique_ptr<T[]> fresh(std::size_t n) {
    std::unique_ptr<T[]> buffer(new T[n]);
    advise_huge_pages(buffer.get(), n * sizeof(T));
    return buffer;
  }

  bool binned_;
  int shift_ = 0;
  std::size_t bins_ = 1, capacity_ = 0, staged_ = 0;
  double* c_ = nullptr;
  // Allocated on first use (on huge pages where the kernel grants them), never cleared.
  std::unique_ptr<std::uint32_t[]> bucket_, sorted_bucket_;
  std::unique_ptr<double[]> value_, sorted_value_;
  std::vector<std::size_t> start_;
};

}  // namespace pagh::cpu_sketch
