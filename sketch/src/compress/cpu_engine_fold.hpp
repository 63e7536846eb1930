// The CPU engine's sum over its ranges of inner indices (cpu_engine.hpp), folded in range order as
// the ranges finish rather than after all of them.
//
// Each range s sums its own spectrum P_s (d x b, Acc) and time-domain direct part D_s (d x b,
// double) from zero; the result is T = ((0 + P_0) + P_1) + ... and C = ((0 + D_0) + D_1) + ...,
// element by element, over the ranges that used them (the determinism contract in cpu_engine.hpp).
// Threads claim ranges here in order. Whichever thread finishes the range that is next in that
// order adds it, and every later range already finished, to T and C while the other threads go on
// sketching; a range that finishes early waits in a queue (nothing blocks). The fold writes zeros
// back to P_s and D_s as it reads them, and the buffers go back to a pool for the next range: a
// range's buffers are ones a previous range left in the cache, not fresh pages to fault in and
// clear, and there are about as many live as threads instead of one per range. Once every range
// is claimed (the last wave, which no sketching overlaps) the ranges still to fold wait for
// fold_rest, which adds them with all threads, each taking a share of the elements.
// The first range folded into T (or C) is moved in, not added to zeros: 0 + P_s is P_s bit for bit,
// since a sum that starts at +0.0 and only adds never holds -0.0 (round to nearest gives +0.0 for an
// exact zero sum). With one range (a rank's share, one thread) that saves a d x b buffer to fault in
// and clear and a pass reading two of them.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include "compress/huge_pages.hpp"

// Sums round one operation at a time, as everywhere in the engine.
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")

namespace pagh::cpu_sketch {

// Cache-line aligned storage for the per-range spectra P_t: the transform product's full-width loads
// and stores of P would otherwise straddle two cache lines at every other (AVX2) or every (AVX-512)
// vector where malloc's 16-byte alignment leaves them.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{64}); }
  friend bool operator==(const CacheLineAllocator&, const CacheLineAllocator&) { return true; }
};

// One range's sums while it is sketched: allocated at first use, zero when handed out.
template <class Acc>
struct RangeSums {
  std::vector<Acc, CacheLineAllocator<Acc>> spectrum;  // d x b
  std::vector<double> direct;                          // d x b
  bool spectrum_used = false, direct_used = false;     // by the range holding them now

  Acc* spectrum_at(std::size_t offset, std::size_t size) {
    if (spectrum.empty()) assign_zeroed(spectrum, size);
    spectrum_used = true;
    return spectrum.data() + offset;
  }
  double* direct_at(std::size_t offset, std::size_t size) {
    if (direct.empty()) assign_zeroed(direct, size);
    direct_used = true;
    return direct.data() + offset;
  }
};

template <class Acc>
class OrderedFold {
 public:
  OrderedFold(std::int64_t ranges, std::size_t size) : size_(size), ranges_(ranges), pending_(static_cast<std::size_t>(ranges)) {}

  // The next range to sketch, in order; -1 when all are claimed.
  std::int64_t claim() {
    const std::int64_t s = claimed_.fetch_add(1, std::memory_order_relaxed);
    return s < ranges_ ? s : -1;
  }

  // Zero sums for a range (from the pool where one is free).
  RangeSums<Acc> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pool_.empty()) return {};
    RangeSums<Acc> sums = std::move(pool_.back());
    pool_.pop_back();
    return sums;
  }

  // Range s is done: its sums join the queue, and where s is next in order and no thread is
  // folding, this thread folds it and every consecutive range finished meanwhile, up to the last
  // wave (left to fold_rest).
  void finished(std::int64_t s, RangeSums<Acc> sums) {
    std::unique_lock<std::mutex> lock(mutex_);
    pending_[static_cast<std::size_t>(s)] = std::move(sums);
    if (folding_ || s != next_) return;
    folding_ = true;
    while (next_ < ranges_ && pending_[static_cast<std::size_t>(next_)] && claimed_.load(std::memory_order_relaxed) < ranges_) {
      RangeSums<Acc> range = std::move(*pending_[static_cast<std::size_t>(next_)]);
      pending_[static_cast<std::size_t>(next_)].reset();
      lock.unlock();
      fold(range);  // T and C are this thread's alone while folding_ is set
      lock.lock();
      pool_.push_back(std::move(range));
      ++next_;
    }
    folding_ = false;
  }

  // After every range has finished (outside the threads' parallel region): the ranges not folded
  // yet, in order, each of `threads` threads adding them over its share of the elements.
  void fold_rest(int threads) {
    std::vector<const Acc*> spectra;
    std::vector<const double*> directs;
    for (std::int64_t s = next_; s < ranges_; ++s) {
      RangeSums<Acc>& range = *pending_[static_cast<std::size_t>(s)];
      if (range.spectrum_used && !take_first(spectrum_, range.spectrum)) spectra.push_back(range.spectrum.data());
      if (range.direct_used && !take_first(direct_, range.direct)) directs.push_back(range.direct.data());
    }
    next_ = ranges_;
    if (spectra.empty() && directs.empty()) return;
    constexpr std::int64_t kChunk = 4096;
    const auto chunks = static_cast<std::int64_t>((size_ + kChunk - 1) / kChunk);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && chunks >= 16)
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::size_t begin = static_cast<std::size_t>(c * kChunk), end = std::min(size_, begin + kChunk);
      for (const Acc* p : spectra)
        for (std::size_t h = begin; h < end; ++h) spectrum_[h] += p[h];
      for (const double* q : directs)
        for (std::size_t h = begin; h < end; ++h) direct_[h] += q[h];
    }
  }

  // After fold_rest: whether any range transformed a k, T, and C (empty: no direct k).
  bool transformed() const { return !spectrum_.empty(); }
  std::vector<Acc, CacheLineAllocator<Acc>>& spectrum() { return spectrum_; }
  std::vector<double>& direct() { return direct_; }

 private:
  // The first sum folded into an empty total becomes the total (the header: the same bits as adding
  // it to zeros); the range leaves with no buffer and allocates a zeroed one if it is used again.
  template <class Buffer>
  static bool take_first(Buffer& total, Buffer& range) {
    if (!total.empty()) return false;
    total.swap(range);
    return true;
  }

  void fold(RangeSums<Acc>& range) {
    if (range.spectrum_used && !take_first(spectrum_, range.spectrum)) {
      Acc* t = spectrum_.data();
      Acc* p = range.spectrum.data();
      for (std::size_t h = 0; h < size_; ++h) t[h] += p[h], p[h] = Acc{0};
    }
    if (range.direct_used && !take_first(direct_, range.direct)) {
      double* c = direct_.data();
      double* q = range.direct.data();
      for (std::size_t h = 0; h < size_; ++h) c[h] += q[h], q[h] = 0.0;
    }
    range.spectrum_used = range.direct_used = false;
  }

  std::size_t size_;
  std::int64_t ranges_;
  std::atomic<std::int64_t> claimed_{0};
  std::mutex mutex_;
  std::vector<std::optional<RangeSums<Acc>>> pending_;
  std::int64_t next_ = 0;
  bool folding_ = false;
  std::vector<RangeSums<Acc>> pool_;
  std::vector<Acc, CacheLineAllocator<Acc>> spectrum_;
  std::vector<double> direct_;
};

}  // namespace pagh::cpu_sketch

#pragma GCC pop_options
