#include "estimate/recovery_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace pagh::recovery {

RoundPlan plan_round(const Shape& shape, std::span<const std::int64_t> heavy_counts, Recovery how) {
  RoundPlan plan;
  const int d = shape.repetitions;
  plan.scan_probes = shape.entries() * d;
  plan.scan_cost = shape.scan_cost;
  std::vector<int> order(static_cast<std::size_t>(d));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return heavy_counts[x] < heavy_counts[y]; });
  order.resize(static_cast<std::size_t>(reps_to_enumerate(d)));
  plan.reps = order;
  const double shorter = static_cast<double>(std::min(shape.rows, shape.cols));
  const double longer = static_cast<double>(std::max(shape.rows, shape.cols));
  const double pairs_per_bucket = shape.entries() / static_cast<double>(shape.buckets);
  for (int t : plan.reps) {
    const double heavy = static_cast<double>(heavy_counts[t]);
    plan.heavy += heavy_counts[t];
    // Indexing the longer side (a counting sort), one lookup per (shorter index, heavy bucket),
    // and the medians of the pairs found (d reads each, plus the earlier repetitions' checks).
    plan.probes += 4 * longer + shorter * heavy + heavy * pairs_per_bucket * (d + 1);
  }
  plan.scan = how == Recovery::exhaustive || (how == Recovery::automatic && plan.scan_probes * shape.scan_cost <= plan.probes);
  return plan;
}

std::int64_t first_pooled_rank(std::size_t k) {
  const std::size_t rank = std::max<std::size_t>(256, 4 * k);
  return rank > (std::size_t{1} << 62) ? std::int64_t{1} << 62 : static_cast<std::int64_t>(rank);
}

std::string describe(const RoundPlan& plan, double tau) {
  char text[240];
  if (plan.scan && plan.scan_cost != 1)
    std::snprintf(text, sizeof text, "exhaustive scan (%.3g probes at %.2g of an enumeration probe's cost; heavy buckets at tau = %.6g would take %.3g)",
                  plan.scan_probes, plan.scan_cost, tau, plan.probes);
  else if (plan.scan)
    std::snprintf(text, sizeof text, "exhaustive scan (%.3g probes; heavy buckets at tau = %.6g would take %.3g)", plan.scan_probes,
                  tau, plan.probes);
  else
    std::snprintf(text, sizeof text, "heavy buckets: tau = %.6g, %zu repetition(s), %lld buckets, ~%.3g probes (scan: %.3g)", tau,
                  plan.reps.size(), static_cast<long long>(plan.heavy), plan.probes, plan.scan_probes);
  return text;
}

}  // namespace pagh::recovery
