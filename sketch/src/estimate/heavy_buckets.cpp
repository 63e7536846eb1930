// top_k and above of a CompressedProduct on the CPU: heavy-bucket recovery (sketch/recovery.hpp),
// with the exhaustive scan of compressed_product.cpp as the oracle and the fallback.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <string>

#include "estimate/entry_ranking.hpp"
#include "estimate/float_medians.hpp"
#include "pagh/error.hpp"
#include "estimate/recovery_driver.hpp"
#include "sketch/compressed_product.hpp"

namespace pagh {
namespace {

using index = std::int64_t;

// One side's indices grouped by their bucket in one repetition t: a counting sort by the top bits
// of the bucket (about one index per group), so memory stays O(n d) whatever b is. Each record
// keeps the index's buckets in every repetition, so that a candidate pair's other buckets are read
// from the record's cache line, not from d scattered tables. Within a group indices ascend.
class BucketIndex {
 public:
  BucketIndex(const HashTables& tables, bool rows, int t) : d_(tables.repetitions), t_(t) {
    const index n = rows ? tables.m : tables.p;
    const auto hash = [&](int r, index i) { return rows ? tables.h1(r, i) : tables.h2(r, i); };
    const int log2b = std::countr_zero(static_cast<std::uint64_t>(tables.buckets));
    int bits = 0;
    while (bits < log2b && (index{1} << bits) < n) ++bits;
    shift_ = log2b - bits;
    occupied_.assign((static_cast<std::size_t>(tables.buckets) + 63) / 64, 0);
    starts_.assign((std::size_t{1} << bits) + 1, 0);
    for (index i = 0; i < n; ++i) {
      const std::uint32_t h = hash(t, i);
      occupied_[h / 64] |= std::uint64_t{1} << (h % 64);
      ++starts_[(h >> shift_) + 1];
    }
    for (std::size_t g = 1; g < starts_.size(); ++g) starts_[g] += starts_[g - 1];
    keys_.resize(static_cast<std::size_t>(n));
    hashes_.resize(static_cast<std::size_t>(n) * d_);
    ids_.resize(static_cast<std::size_t>(n));
    std::vector<index> fill(starts_.begin(), starts_.end() - 1);
    for (index i = 0; i < n; ++i) {
      const auto at = static_cast<std::size_t>(fill[hash(t, i) >> shift_]++);
      keys_[at] = hash(t, i);
      for (int r = 0; r < d_; ++r) hashes_[at * d_ + r] = hash(r, i);
      ids_[at] = i;
    }
  }

  // Calls f(i, buckets) for every index i whose bucket in repetition t is `bucket`, in ascending
  // order; buckets[r] is its bucket in repetition r. Most buckets are empty (b exceeds the side by
  // the padding): one bit, in cache, says so.
  template <class F>
  void for_each(std::uint32_t bucket, F&& f) const {
    if (!((occupied_[bucket / 64] >> (bucket % 64)) & 1)) return;
    const std::size_t group = bucket >> shift_;
    for (auto at = static_cast<std::size_t>(starts_[group]); at < static_cast<std::size_t>(starts_[group + 1]); ++at)
      if (keys_[at] == bucket) f(ids_[at], hashes_.data() + at * d_);
  }

  // The records in their stored order (by group of their bucket in repetition t).
  std::size_t size() const { return ids_.size(); }
  std::uint32_t key(std::size_t at) const { return keys_[at]; }
  const std::uint32_t* hashes(std::size_t at) const { return hashes_.data() + at * d_; }
  index id(std::size_t at) const { return ids_[at]; }

 private:
  int d_, t_, shift_ = 0;
  std::vector<std::uint64_t> occupied_;  // bit h: some index has bucket h in repetition t
  std::vector<index> starts_;            // group g (buckets sharing their top bits) at [starts_[g], starts_[g + 1])
  std::vector<std::uint32_t> keys_;      // bucket in repetition t
  std::vector<std::uint32_t> hashes_;    // buckets in every repetition, d per index
  std::vector<index> ids_;
};

// Which buckets are heavy (|c_t[h]| >= tau), one bit each per repetition: small enough to stay in
// cache where the sketches are not.
class HeavyBits {
 public:
  HeavyBits(std::span<const double> sketches, std::int64_t buckets, int repetitions, double tau)
      : words_((static_cast<std::size_t>(buckets) + 63) / 64), bits_(words_ * repetitions, 0) {
    for (int t = 0; t < repetitions; ++t)
      for (std::size_t h = 0; h < static_cast<std::size_t>(buckets); ++h)
        if (std::fabs(sketches[t * static_cast<std::size_t>(buckets) + h]) >= tau) bits_[t * words_ + h / 64] |= std::uint64_t{1} << (h % 64);
  }
  bool heavy(int t, std::uint32_t h) const { return (bits_[t * words_ + h / 64] >> (h % 64)) & 1; }

 private:
  std::size_t words_;
  std::vector<std::uint64_t> bits_;
};

// The k-th largest |c_t[h]| over all repetitions (k >= 1), selected in `pool`, a copy of every
// magnitude whose first `ranked` elements are already the `ranked` largest.
double pooled_magnitude(std::vector<double>& pool, std::size_t& ranked, std::size_t k) {
  k = std::min(k, pool.size());
  if (k <= ranked) ranked = 0;  // not reached by the ladder, which only descends
  std::nth_element(pool.begin() + static_cast<std::ptrdiff_t>(ranked), pool.begin() + static_cast<std::ptrdiff_t>(k - 1), pool.end(),
                   std::greater<>());
  ranked = k;
  return pool[k - 1];
}

// Calls sink.take(entry) for every entry with |median| >= tau exactly once (sinks: one per
// thread) and returns the number of pairs whose median was evaluated. For each repetition t of
// plan.reps, each index u of the shorter side and each heavy bucket h, the longer side's indices in
// bucket h XOR hash_t(u) pair with u. A pair heavy in an earlier repetition of plan.reps was taken
// there; a pair heavy in fewer than ceil(d/2) repetitions cannot reach tau and is skipped unread.
// The shorter side is visited in the order of its buckets in t (its own BucketIndex), a block of
// kBlock indices per heavy bucket at a time: for one h, h XOR hash_t(u) then runs through a few
// contiguous stretches of the longer side's index, read in order rather than at random (one cache
// miss per probe when every u took every h in turn).
template <class Sink>
std::int64_t enumerate_heavy(const HashTables& tables, std::span<const double> sketches, double tau,
                             const recovery::RoundPlan& plan, std::vector<Sink>& sinks) {
  const recovery::Shape shape{tables.m, tables.p, tables.buckets, tables.repetitions};
  const bool rows_outer = shape.rows_outer();
  const int d = shape.repetitions, needed = recovery::heavy_needed(d);
  const auto b = static_cast<std::size_t>(shape.buckets);
  const std::size_t reps = plan.reps.size();
  const HeavyBits heavy_bits(sketches, shape.buckets, d, tau);
  std::vector<BucketIndex> lookup, outer;
  std::vector<std::vector<std::uint32_t>> heavy(reps);
  for (std::size_t s = 0; s < reps; ++s) {
    const int t = plan.reps[s];
    lookup.emplace_back(tables, !rows_outer, t);
    outer.emplace_back(tables, rows_outer, t);
    for (std::size_t h = 0; h < b; ++h)
      if (heavy_bits.heavy(t, static_cast<std::uint32_t>(h))) heavy[s].push_back(static_cast<std::uint32_t>(h));
  }
  constexpr std::size_t kBlock = 1024;
  const std::size_t n = outer.empty() ? 0 : outer[0].size(), blocks = (n + kBlock - 1) / kBlock;
  std::atomic<std::int64_t> evaluated{0};
#pragma omp parallel num_threads(static_cast<int>(sinks.size()))
  {
    Sink& sink = sinks[static_cast<std::size_t>(omp_get_thread_num())];
    std::vector<double> single(static_cast<std::size_t>(d));
    std::int64_t mine = 0;
#pragma omp for schedule(dynamic, 1) collapse(2)
    for (std::size_t s = 0; s < reps; ++s) {
      for (std::size_t q = 0; q < blocks; ++q) {
        if (sink.stopped()) continue;
        const BucketIndex& us = outer[s];
        const std::size_t first = q * kBlock, last = std::min(n, first + kBlock);
        for (std::uint32_t h : heavy[s]) {
          for (std::size_t at = first; at < last; ++at) {
            const std::uint32_t* hu = us.hashes(at);
            lookup[s].for_each(h ^ us.key(at), [&](index v, const std::uint32_t* hv) {
              for (std::size_t e = 0; e < s; ++e)
                if (heavy_bits.heavy(plan.reps[e], hu[plan.reps[e]] ^ hv[plan.reps[e]])) return;
              int count = 0;
              for (int r = 0; r < d; ++r) count += heavy_bits.heavy(r, hu[r] ^ hv[r]);
              if (count < needed) return;
              ++mine;
              const index u = us.id(at);
              const index i = rows_outer ? u : v, j = rows_outer ? v : u;
              for (int r = 0; r < d; ++r)
                single[static_cast<std::size_t>(r)] = tables.s1(r, i) * tables.s2(r, j) * sketches[r * b + (hu[r] ^ hv[r])];
              const Entry entry = detail::summarize(i, j, single);
              if (std::fabs(entry.value) >= tau) sink.take(entry);
            });
          }
        }
      }
    }
    evaluated += mine;
  }
  return evaluated;
}

struct CollectSink {  // above(): every qualifying entry, up to a shared limit
  std::vector<Entry> found;
  std::atomic<std::size_t>* total;
  std::size_t limit;
  std::atomic<bool>* too_many;
  bool stopped() const { return too_many->load(std::memory_order_relaxed); }
  void take(const Entry& e) {
    found.push_back(e);
    if (++*total > limit) *too_many = true;
  }
};

struct BestSink {  // top_k(): the best k, and how many qualified
  detail::BestK best;
  std::int64_t qualified = 0;
  bool stopped() const { return false; }
  void take(const Entry& e) {
    ++qualified;
    best.offer(e);
  }
};

// The planner's view of a product: its scans prefilter through rounded medians where they can.
recovery::Shape shape_of(const CompressedProduct& c) {
  const recovery::Shape shape{c.rows(), c.cols(), c.buckets(), c.repetitions()};
  const bool prefiltered = detail::FloatMedians::applies(shape.repetitions, shape.buckets, shape.entries());
  return {shape.rows, shape.cols, shape.buckets, shape.repetitions, prefiltered ? detail::FloatMedians::kScanCost : 1.0};
}

}  // namespace

// The recovery driver's operations on the host object (recovery_driver.hpp).
class CompressedProduct::Recoverer {
 public:
  explicit Recoverer(const CompressedProduct& c) : c_(c) {}

  bool finite() const { return c_.finite_; }
  std::vector<std::int64_t> heavy_counts(double tau) const {
    std::vector<std::int64_t> counts(static_cast<std::size_t>(c_.repetitions()));
    for (int t = 0; t < c_.repetitions(); ++t)
      for (double v : c_.sketch(t)) counts[static_cast<std::size_t>(t)] += std::fabs(v) >= tau;
    return counts;
  }
  double pooled(std::int64_t rank) {
    if (pool_.empty()) {
      const std::vector<double>& values = c_.host_values();
      pool_.resize(values.size());
      std::transform(values.begin(), values.end(), pool_.begin(), [](double v) { return std::fabs(v); });
    }
    return pooled_magnitude(pool_, ranked_, static_cast<std::size_t>(rank));
  }
  double smallest_positive() const {
    double smallest = INFINITY;
    for (double v : c_.host_values())
      if (v != 0 && std::fabs(v) < smallest) smallest = std::fabs(v);
    return smallest;
  }
  std::vector<Entry> scan_top_k(std::size_t k) const { return c_.top_k_exhaustive(k); }
  std::vector<Entry> scan_above(double tau, std::size_t max_entries) const { return c_.above_exhaustive(tau, max_entries); }
  std::vector<Entry> entries_at(const std::vector<std::int64_t>& indices) const {
    std::vector<Entry> out;
    for (std::int64_t idx : indices) out.push_back(c_.entry(idx / c_.cols(), idx % c_.cols()));
    return out;
  }

  recovery::Enumerated enumerate(double tau, const recovery::RoundPlan& plan, std::size_t keep_best, std::size_t max_entries) const {
    recovery::Enumerated out;
    const auto threads = static_cast<std::size_t>(std::min(c_.rows(), c_.cols()) >= 1024 ? omp_get_max_threads() : 1);
    if (keep_best > 0) {
      std::vector<BestSink> sinks(threads, BestSink{detail::BestK(keep_best), 0});
      out.candidates = enumerate_heavy(c_.tables_, c_.host_values(), tau, plan, sinks);
      for (auto& sink : sinks) {
        out.qualified += sink.qualified;
        out.entries.insert(out.entries.end(), sink.best.kept().begin(), sink.best.kept().end());
      }
      return out;
    }
    std::atomic<std::size_t> total{0};
    std::atomic<bool> too_many{false};
    std::vector<CollectSink> sinks(threads, CollectSink{{}, &total, max_entries, &too_many});
    out.candidates = enumerate_heavy(c_.tables_, c_.host_values(), tau, plan, sinks);
    if (too_many)
      throw too_many_entries("pagh::CompressedProduct::above", max_entries, tau);
    for (auto& sink : sinks) out.entries.insert(out.entries.end(), sink.found.begin(), sink.found.end());
    out.qualified = static_cast<std::int64_t>(out.entries.size());
    return out;
  }

 private:
  const CompressedProduct& c_;
  std::vector<double> pool_;
  std::size_t ranked_ = 0;
};

std::vector<Entry> CompressedProduct::above(double threshold, std::size_t max_entries, Recovery how, RecoveryStats* stats) const {
  if (device_) return device_->above(threshold, max_entries, how, stats);
  RecoveryStats local;
  Recoverer ops(*this);
  return recovery::recover_above(ops, shape_of(*this), threshold, max_entries, how, stats ? *stats : local,
                                 "pagh::CompressedProduct::above");
}

std::vector<Entry> CompressedProduct::top_k(std::size_t k, Recovery how, RecoveryStats* stats) const {
  if (device_) return device_->top_k(k, how, stats);
  RecoveryStats local;
  Recoverer ops(*this);
  return recovery::recover_top_k(ops, shape_of(*this), k, how, stats ? *stats : local);
}

}  // namespace pagh
