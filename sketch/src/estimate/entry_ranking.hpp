// How entries are summarized and ranked, shared by the exhaustive scan and heavy-bucket recovery
// so that both give the same entries in the same order.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
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

// The k best of `all`, ranked.
inline std::vector<Entry> best_of(std::vector<Entry> all, std::size_t k) {
  std::sort(all.begin(), all.end(), ranks_before);
  if (all.size() > k) all.resize(k);
  return all;
}

}  // namespace pagh::detail
