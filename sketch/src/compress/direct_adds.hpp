// The direct path's adds c[h] += v (cpu_engine.hpp: a thin k's outer product, term by term), in
// cache-sized bins of buckets. Added one by one, the terms of a long sketch land on random cache
// lines of a d x b buffer far larger than the caches: every add waits for memory (and a page walk).
// Here the terms are kept in arrival order in a staging buffer and, when it is full or the target
// changes, sorted by bin (a stable counting sort on the bucket's high bits) and added bin by bin.
//
// A target is a span that is all zeros when it is set (the engine's range sums are). A bin of it
// that no sort has touched yet and that receives many terms is summed in a zeroed scratch span that
// stays in L2 and then stored whole, with streaming stores: the bin's lines are written once and
// never read from memory. Later sorts, and bins that receive few terms, add in place.
//
// Same bits as adding them one by one: the counting sort is stable and every bucket lies in one
// bin, so each bucket receives its terms in their arrival order; a scratch bucket starts at +0.0 as
// the untouched target bucket does, and the adds are the same roundings in the same order. Short
// sketches (a few bins) are added one by one, as before.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "compress/huge_pages.hpp"

namespace pagh::cpu_sketch {

class DirectAdds {
 public:
  // A bin spans 2^kBinLog doubles (128 KiB); at most 2^kMaxBinsLog bins (wider bins beyond).
  static constexpr int kBinLog = 14, kMaxBinsLog = 12, kMinBinsLog = 2;
  // An untouched bin is summed in the scratch and stored where a sort gives it at least one term per
  // kStoreDensity buckets (about one per two cache lines: writing every line beats reading and
  // writing back the lines the terms touch); fewer are added in place.
  static constexpr std::size_t kStoreDensity = 16;

  // Terms staged before a sort: enough for one sort per target where a range's terms of one
  // repetition are about a quarter of the buckets or fewer (a rank's share of a long sparse product),
  // bounded at 48 MiB per thread. Only the staged part is ever touched.
  static std::int64_t capacity_for(std::int64_t buckets) { return std::clamp<std::int64_t>(buckets / 4, 1 << 16, 1 << 21); }
  // Whether sketches of this length are binned (else added one by one, nothing staged).
  static bool binned(std::int64_t buckets) {
    return buckets > 0 && std::countr_zero(static_cast<std::uint64_t>(buckets)) >= kBinLog + kMinBinsLog;
  }
  // What the staging and the scratch of one DirectAdds may allocate (compress_memory's plan).
  static double staging_bytes(std::int64_t buckets) {
    if (!binned(buckets)) return 0.0;
    return 2.0 * static_cast<double>(capacity_for(buckets)) * (sizeof(std::uint32_t) + sizeof(double)) +
           static_cast<double>(std::size_t{1} << shift_for(buckets)) * sizeof(double);
  }

  // capacity: terms staged per sort (0: capacity_for(buckets)).
  explicit DirectAdds(std::int64_t buckets, std::int64_t capacity = 0) : binned_(binned(buckets)) {
    if (!binned_) return;
    shift_ = shift_for(buckets);
    bins_ = static_cast<std::size_t>(buckets) >> shift_;
    capacity_ = static_cast<std::size_t>(capacity > 0 ? capacity : capacity_for(buckets));
    written_.assign(bins_, false);
  }
  DirectAdds(const DirectAdds&) = delete;
  DirectAdds& operator=(const DirectAdds&) = delete;
  ~DirectAdds() = default;  // unflushed terms are dropped: flush() before reading a target

  // The span the next terms go to (adds the staged terms to the previous one first): b doubles, all
  // zero now, that nothing but these adds writes until the next target.
  void target(double* c) {
    if (c == c_) return;
    flush();
    c_ = c;
    std::fill(written_.begin(), written_.end(), false);
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
    // start_[q] is now where bin q ends.
    const std::size_t span = std::size_t{1} << shift_;
    double* c = c_;
    bool streamed = false;
    for (std::size_t q = 0, begin = 0; q < bins_; begin = start_[q++]) {
      const std::size_t end = start_[q];
      if (end == begin) continue;
      if (!written_[q] && (end - begin) * kStoreDensity >= span) {
        if (!scratch_) scratch_ = zeroed_scratch(span);
        double* s = scratch_.get();
        for (std::size_t e = begin; e < end; ++e) s[sorted_bucket_[e] & (span - 1)] += sorted_value_[e];
        streamed |= store_and_clear(c + (q << shift_), s, span);
      } else {
        for (std::size_t e = begin; e < end; ++e) c[sorted_bucket_[e]] += sorted_value_[e];
      }
      written_[q] = true;
    }
#if defined(__SSE2__)
    if (streamed) _mm_sfence();  // the streamed bins are visible before the target is read or handed on
#endif
    staged_ = 0;
  }

 private:
  static int shift_for(std::int64_t buckets) {
    return std::max(kBinLog, std::countr_zero(static_cast<std::uint64_t>(buckets)) - kMaxBinsLog);
  }
  template <class T>
  static std::unique_ptr<T[]> fresh(std::size_t n) {
    std::unique_ptr<T[]> buffer(new T[n]);
    advise_huge_pages(buffer.get(), n * sizeof(T));
    return buffer;
  }
  static std::unique_ptr<double[]> zeroed_scratch(std::size_t n) {
    std::unique_ptr<double[]> buffer(new double[n]);
    std::fill(buffer.get(), buffer.get() + n, 0.0);
    return buffer;
  }
  // bin = s (span doubles), s = 0; streaming stores where the bin is 16-byte aligned (returns whether).
  static bool store_and_clear(double* bin, double* s, std::size_t span) {
#if defined(__SSE2__)
    if (reinterpret_cast<std::uintptr_t>(bin) % 16 == 0 && reinterpret_cast<std::uintptr_t>(s) % 16 == 0) {
      const __m128d zero = _mm_setzero_pd();
      for (std::size_t i = 0; i < span; i += 2) {
        _mm_stream_pd(bin + i, _mm_load_pd(s + i));
        _mm_store_pd(s + i, zero);
      }
      return true;
    }
#endif
    std::memcpy(bin, s, span * sizeof(double));
    std::fill(s, s + span, 0.0);
    return false;
  }

  bool binned_;
  int shift_ = 0;
  std::size_t bins_ = 1, capacity_ = 0, staged_ = 0;
  double* c_ = nullptr;
  // Allocated on first use (on huge pages where the kernel grants them), never cleared.
  std::unique_ptr<std::uint32_t[]> bucket_, sorted_bucket_;
  std::unique_ptr<double[]> value_, sorted_value_;
  std::unique_ptr<double[]> scratch_;  // one bin, zero between sorts
  std::vector<std::size_t> start_;
  std::vector<bool> written_;  // per bin of the target: touched by a sort since the target was set
};

}  // namespace pagh::cpu_sketch
