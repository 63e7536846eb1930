// How entries are summarized and ranked, shared by the exhaustive scan and heavy-bucket recovery
// so that both give the same entries in the same order.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "sketch/compressed_product.hpp"

namespace pagh::detail {

using pagh::ranks_before;  // sketch/entry.hpp

// The entry (i, j) from its d single estimates (reordered): median and half the range.
inline Entry summarize(std::int64_t i, std::int64_t j, std::span<double> single) {
  const auto [lo, hi] = std::minmax_element(single.begin(), single.end());
  Entry e{i, j, 0.0, 0.5 * (*hi - *lo)};
  e.value = median_of(single);  // may reorder `single`: after the range is taken
  return e;
}

// The best k entries offered so far (a heap whose front is the weakest kept).
class BestK {
 public:
  explicit BestK(std::size_t k) : k_(k) {}
  void offer(const Entry& e) {
    if (heap_.size() < k_) {
      heap_.push_back(e);
      std::push_heap(heap_.begin(), heap_.end(), ranks_before);
    } else if (k_ > 0 && ranks_before(e, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), ranks_before);
      heap_.back() = e;
      std::push_heap(heap_.begin(), heap_.end(), ranks_before);
    }
  }
  const std::vector<Entry>& kept() const { return heap_; }
  bool full() const { return !heap_.empty() && heap_.size() >= k_; }
  // |value| of the weakest kept entry (when full): an entry with a smaller |value| is not kept.
  double weakest() const { return std::fabs(heap_.front().value); }

 private:
  std::size_t k_;
  std::vector<Entry> heap_;
};

// The best k entries that several threads find: each thread collects what reaches the floor into a
// batch and hands batches over to one heap, so the floor is the k-th best of everything handed over
// (a heap per thread keeps k of its own and raises the floor only to one thread's k-th best, so that
// T threads offer and merge up to T times as many entries).
class SharedBestK {
 public:
  static constexpr std::size_t kBatch = 128;

  explicit SharedBestK(std::size_t k) : best_(k) {}
  // An entry with a smaller |value| is not among the k best (0 until k entries were handed over).
  double floor() const { return floor_.load(std::memory_order_relaxed); }
  // Adds `e` to the thread's batch; hands the batch over when it is full.
  void offer(const Entry& e, std::vector<Entry>& batch) {
    batch.push_back(e);
    if (batch.size() >= kBatch) hand_over(batch);
  }
  void hand_over(std::vector<Entry>& batch) {
    if (batch.empty()) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const Entry& e : batch) best_.offer(e);
    batch.clear();
    // The floor only rises (false for NaN).
    if (best_.full() && best_.weakest() > floor_.load(std::memory_order_relaxed))
      floor_.store(best_.weakest(), std::memory_order_relaxed);
  }
  // The kept entries, ranked (after every thread has handed its last batch over).
  std::vector<Entry> ranked() const {
    std::vector<Entry> out = best_.kept();
    std::sort(out.begin(), out.end(), ranks_before);
    return out;
  }

 private:
  BestK best_;
  std::mutex mutex_;
  std::atomic<double> floor_{0.0};
};

// The k best of `all`, ranked.
inline std::vector<Entry> best_of(std::vector<Entry> all, std::size_t k) {
  std::sort(all.begin(), all.end(), ranks_before);
  if (all.size() > k) all.resize(k);
  return all;
}

}  // namespace pagh::detail
