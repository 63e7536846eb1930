// The control flow of top_k and above with heavy-bucket recovery (sketch/recovery.hpp), shared by
// the CPU (heavy_buckets.cpp) and the device (heavy_buckets.cu). A backend supplies Ops:
//   bool finite()                                every sketch value finite
//   std::vector<std::int64_t> heavy_counts(tau)  #{h : |c_t[h]| >= tau} per repetition
//   double pooled(rank)                          the rank-th largest |c_t[h]| over all t (1-based)
//   double smallest_positive()                   the smallest nonzero |c_t[h]|, INFINITY if none
//   std::vector<Entry> scan_top_k(k), scan_above(tau, max_entries)      the exhaustive oracle
//   Enumerated enumerate(tau, plan, keep_best)   entries with |median| >= tau, each once: all of
//        them (keep_best = 0; throwing TooManyEntries past max_entries) or the keep_best best
//   std::vector<Entry> entries_at(indices)       entries at row-major indices
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "estimate/entry_ranking.hpp"
#include "estimate/recovery_plan.hpp"
#include "sketch/too_many_entries.hpp"

namespace pagh::recovery {

struct Enumerated {
  std::vector<Entry> entries;    // all qualifying entries, or the keep_best best of them
  std::int64_t qualified = 0;    // how many had |median| >= tau
  std::int64_t candidates = 0;   // pairs evaluated (0 where the backend does not count them)
};

inline bool row_major_before(const Entry& x, const Entry& y) { return x.row != y.row ? x.row < y.row : x.col < y.col; }

template <class Ops>
std::vector<Entry> recover_above(Ops& ops, const Shape& shape, double tau, std::size_t max_entries, Recovery how,
                                 RecoveryStats& st, const char* where) {
  if (!(tau >= 0)) throw Error(where, "threshold must be a non-negative number");
  st = RecoveryStats{};
  st.scan_probes = shape.entries() * shape.repetitions;
  st.threshold = tau;
  st.rounds = 1;
  if (shape.rows == 0 || shape.cols == 0) return {};
  auto scan = [&](std::string why) {
    st.exhaustive = true;
    st.probes = st.scan_probes;
    st.reason = std::move(why);
    return ops.scan_above(tau, max_entries);
  };
  if (how == Recovery::exhaustive) return scan("exhaustive scan (asked for)");
  if (!ops.finite()) return scan("exhaustive scan (the sketch holds non-finite values)");
  if (tau == 0) {  // every entry qualifies
    if (shape.entries() > static_cast<double>(max_entries))
      throw TooManyEntries(where, "all " + std::to_string(shape.entries()) + " entries have |estimate| >= 0; raise the threshold or use top_k");
    return scan("exhaustive scan (threshold 0 selects every entry)");
  }
  const RoundPlan plan = plan_round(shape, ops.heavy_counts(tau), how);
  if (plan.scan) return scan(describe(plan, tau));
  st.reason = describe(plan, tau);
  st.heavy_buckets = plan.heavy;
  st.probes = plan.probes;
  Enumerated found = ops.enumerate(tau, plan, 0, max_entries);
  st.candidates = found.candidates;
  st.qualified = found.qualified;
  std::sort(found.entries.begin(), found.entries.end(), row_major_before);
  return std::move(found.entries);
}

template <class Ops>
std::vector<Entry> recover_top_k(Ops& ops, const Shape& shape, std::size_t k, Recovery how, RecoveryStats& st) {
  st = RecoveryStats{};
  st.scan_probes = shape.entries() * shape.repetitions;
  if (k == 0 || shape.rows == 0 || shape.cols == 0) return {};
  auto scan = [&](std::string why) {
    st.exhaustive = true;
    st.probes += st.scan_probes;
    st.reason = std::move(why);
    return ops.scan_top_k(k);
  };
  if (how == Recovery::exhaustive) return scan("exhaustive scan (asked for)");
  if (!ops.finite()) return scan("exhaustive scan (the sketch holds non-finite values)");
  if (static_cast<double>(k) >= shape.entries()) return scan("exhaustive scan (k covers every entry)");
  const double smallest_positive = ops.smallest_positive();
  if (!std::isfinite(smallest_positive)) {  // every estimate is exactly 0: the first k in row-major order
    std::vector<std::int64_t> first(k);
    for (std::size_t n = 0; n < k; ++n) first[n] = static_cast<std::int64_t>(n);
    st.reason = "every bucket is zero: the first k entries in row-major order";
    return ops.entries_at(first);
  }

  const double pool = static_cast<double>(shape.buckets) * shape.repetitions;
  for (std::int64_t rank = first_pooled_rank(k);; rank *= kLadderFactor) {
    ++st.rounds;
    double tau = ops.pooled(static_cast<std::int64_t>(std::min(static_cast<double>(rank), pool)));
    const bool lowest = tau <= smallest_positive;
    if (lowest) tau = smallest_positive;  // tau = 0 would select every entry
    const RoundPlan plan = plan_round(shape, ops.heavy_counts(tau), how);
    if (plan.scan) return scan(describe(plan, tau));
    st.threshold = tau;
    st.heavy_buckets = plan.heavy;
    st.probes += plan.probes;
    st.reason = describe(plan, tau);
    Enumerated found = ops.enumerate(tau, plan, k, 0);
    st.candidates = found.candidates;
    st.qualified = found.qualified;
    // Every entry outside has |median| < tau <= |median| of each one inside: the k best are here.
    if (static_cast<std::size_t>(found.qualified) >= k) return detail::best_of(std::move(found.entries), k);
    if (!lowest) continue;
    // Fewer than k entries reach the smallest nonzero magnitude. With odd d every other median is
    // one of the single estimates, all below it in magnitude: exactly 0, ranked by row, then column.
    if (shape.repetitions % 2 == 0) return scan("exhaustive scan (fewer than k nonzero estimates; even d)");
    std::unordered_set<std::int64_t> taken;
    for (const Entry& e : found.entries) taken.insert(e.row * shape.cols + e.col);
    std::vector<std::int64_t> zeros;
    const std::size_t missing = k - found.entries.size();
    for (std::int64_t idx = 0; zeros.size() < missing && static_cast<double>(idx) < shape.entries(); ++idx)
      if (!taken.count(idx)) zeros.push_back(idx);
    std::vector<Entry> out = detail::best_of(std::move(found.entries), k);
    for (const Entry& e : ops.entries_at(zeros)) out.push_back(e);
    st.reason += "; then zero estimates in row-major order";
    return out;
  }
}

}  // namespace pagh::recovery
