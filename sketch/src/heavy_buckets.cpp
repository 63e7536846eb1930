// top_k and above of a CompressedProduct on the CPU: heavy-bucket recovery (sketch/recovery.hpp),
// with the exhaustive scan of compressed_product.cpp as the oracle and the fallback.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <string>

#include "entry_ranking.hpp"
#include "pagh/error.hpp"
#include "recovery_driver.hpp"
#include "sketch/compressed_product.hpp"

namespace pagh {
namespace {

using index = std::int64_t;

// One side's indices grouped by their bucket in one repetition: a counting sort by the top bits
// of the bucket (about one index per group), so memory stays O(n) whatever b is. Within a group
// indices are ascending.
class BucketIndex {
 public:
  BucketIndex(const std::uint32_t* hashes, index n, std::int64_t buckets) {
    const int log2b = std::countr_zero(static_cast<std::uint64_t>(buckets));
    int bits = 0;
    while (bits < log2b && (index{1} << bits) < n) ++bits;
    shift_ = log2b - bits;
    starts_.assign((std::size_t{1} << bits) + 1, 0);
    for (index i = 0; i < n; ++i) ++starts_[(hashes[i] >> shift_) + 1];
    for (std::size_t g = 1; g < starts_.size(); ++g) starts_[g] += starts_[g - 1];
    keys_.resize(static_cast<std::size_t>(n));
    ids_.resize(static_cast<std::size_t>(n));
    std::vector<index> fill(starts_.begin(), starts_.end() - 1);
    for (index i = 0; i < n; ++i) {
      const auto at = static_cast<std::size_t>(fill[hashes[i] >> shift_]++);
      keys_[at] = hashes[i];
      ids_[at] = i;
    }
  }

  // Calls f(i) for every index i whose bucket is `bucket`, in ascending order.
  template <class F>
  void for_each(std::uint32_t bucket, F&& f) const {
    const std::size_t group = bucket >> shift_;
    for (auto at = static_cast<std::size_t>(starts_[group]); at < static_cast<std::size_t>(starts_[group + 1]); ++at)
      if (keys_[at] == bucket) f(ids_[at]);
  }

 private:
  int shift_ = 0;
  std::vector<index> starts_;
  std::vector<std::uint32_t> keys_;
  std::vector<index> ids_;
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
// thread) and returns the number of pairs evaluated. For each repetition t of plan.reps, each
// index u of the shorter side and each heavy bucket h, the longer side's indices in bucket
// h XOR hash_t(u) pair with u; a pair heavy in an earlier repetition of plan.reps was taken there.
template <class Sink>
std::int64_t enumerate_heavy(const HashTables& tables, std::span<const double> sketches, double tau,
                             const recovery::RoundPlan& plan, std::vector<Sink>& sinks) {
  const recovery::Shape shape{tables.m, tables.p, tables.buckets, tables.repetitions};
  const bool rows_outer = shape.rows_outer();
  const index outer = rows_outer ? shape.rows : shape.cols, inner = rows_outer ? shape.cols : shape.rows;
  const int d = shape.repetitions;
  const auto b = static_cast<std::size_t>(shape.buckets);
  const std::size_t reps = plan.reps.size();
  std::vector<BucketIndex> lookup;
  std::vector<std::vector<std::uint32_t>> heavy(reps);
  for (std::size_t s = 0; s < reps; ++s) {
    const int t = plan.reps[s];
    const std::uint32_t* inner_hash = (rows_outer ? tables.bucket_b.data() : tables.bucket_a.data()) + t * inner;
    lookup.emplace_back(inner_hash, inner, shape.buckets);
    const double* ct = sketches.data() + t * b;
    for (std::size_t h = 0; h < b; ++h)
      if (std::fabs(ct[h]) >= tau) heavy[s].push_back(static_cast<std::uint32_t>(h));
  }
  auto bucket_of = [&](int t, index i, index j) { return tables.h1(t, i) ^ tables.h2(t, j); };
  std::atomic<std::int64_t> evaluated{0};
#pragma omp parallel num_threads(static_cast<int>(sinks.size()))
  {
    Sink& sink = sinks[static_cast<std::size_t>(omp_get_thread_num())];
    std::vector<double> single(static_cast<std::size_t>(d));
    std::int64_t mine = 0;
#pragma omp for schedule(dynamic, 64)
    for (index u = 0; u < outer; ++u) {
      if (sink.stopped()) continue;
      for (std::size_t s = 0; s < reps; ++s) {
        const int t = plan.reps[s];
        const std::uint32_t hu = rows_outer ? tables.h1(t, u) : tables.h2(t, u);
        for (std::uint32_t h : heavy[s]) {
          lookup[s].for_each(h ^ hu, [&](index v) {
            const index i = rows_outer ? u : v, j = rows_outer ? v : u;
            for (std::size_t e = 0; e < s; ++e)
              if (std::fabs(sketches[plan.reps[e] * b + bucket_of(plan.reps[e], i, j)]) >= tau) return;
            ++mine;
            for (int r = 0; r < d; ++r)
              single[static_cast<std::size_t>(r)] = tables.s1(r, i) * tables.s2(r, j) * sketches[r * b + bucket_of(r, i, j)];
            const Entry entry = detail::summarize(i, j, single);
            if (std::fabs(entry.value) >= tau) sink.take(entry);
          });
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
      pool_.resize(c_.sketches_.size());
      std::transform(c_.sketches_.begin(), c_.sketches_.end(), pool_.begin(), [](double v) { return std::fabs(v); });
    }
    return pooled_magnitude(pool_, ranked_, static_cast<std::size_t>(rank));
  }
  double smallest_positive() const {
    double smallest = INFINITY;
    for (double v : c_.sketches_)
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
      out.candidates = enumerate_heavy(c_.tables_, c_.sketches_, tau, plan, sinks);
      for (auto& sink : sinks) {
        out.qualified += sink.qualified;
        out.entries.insert(out.entries.end(), sink.best.kept().begin(), sink.best.kept().end());
      }
      return out;
    }
    std::atomic<std::size_t> total{0};
    std::atomic<bool> too_many{false};
    std::vector<CollectSink> sinks(threads, CollectSink{{}, &total, max_entries, &too_many});
    out.candidates = enumerate_heavy(c_.tables_, c_.sketches_, tau, plan, sinks);
    if (too_many)
      throw TooManyEntries("pagh::CompressedProduct::above", "more than " + std::to_string(max_entries) +
                                                                 " entries have |estimate| >= " + std::to_string(tau) +
                                                                 "; raise the threshold or use top_k");
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
  RecoveryStats local;
  Recoverer ops(*this);
  return recovery::recover_above(ops, {rows_, cols_, buckets(), repetitions()}, threshold, max_entries, how, stats ? *stats : local,
                                 "pagh::CompressedProduct::above");
}

std::vector<Entry> CompressedProduct::top_k(std::size_t k, Recovery how, RecoveryStats* stats) const {
  RecoveryStats local;
  Recoverer ops(*this);
  return recovery::recover_top_k(ops, {rows_, cols_, buckets(), repetitions()}, k, how, stats ? *stats : local);
}

}  // namespace pagh
