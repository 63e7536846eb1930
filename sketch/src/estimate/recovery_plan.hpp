// The planner of heavy-bucket recovery (sketch/recovery.hpp), shared by the CPU and CUDA queries:
// which repetitions to enumerate for a threshold tau, what that costs against the exhaustive scan,
// and the ladder of thresholds top_k descends. Pure functions of counts; no sketch data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sketch/recovery.hpp"

namespace pagh::recovery {

// An entry with |median| >= tau has at least ceil(d/2) single estimates with |c_t[bucket]| >= tau
// (for even d the median is the mean of the two middle values, each at least as large in the
// direction of the median; rounding is monotone).
inline int heavy_needed(int d) { return (d + 1) / 2; }
// Any set of this many repetitions meets every set of ceil(d/2) of them.
inline int reps_to_enumerate(int d) { return d - heavy_needed(d) + 1; }

struct Shape {
  std::int64_t rows = 0, cols = 0, buckets = 0;
  int repetitions = 0;
  // What one probe of the exhaustive scan costs against one probe of enumeration, which reads a
  // random record and the sketches where they lie (scans that read a rounded copy in cache: < 1).
  double scan_cost = 1;
  double entries() const { return static_cast<double>(rows) * static_cast<double>(cols); }
  // Enumeration walks the shorter side and looks the longer one up by bucket.
  bool rows_outer() const { return rows <= cols; }
};

struct RoundPlan {
  bool scan = false;       // the exhaustive scan is cheaper (or was asked for)
  std::vector<int> reps;   // repetitions to enumerate, fewest heavy buckets first
  std::int64_t heavy = 0;  // heavy buckets over those repetitions
  double probes = 0;       // estimated cost of enumerating them
  double scan_probes = 0;  // the scan's probes: m * p * d
  double scan_cost = 1;    // Shape::scan_cost: what each of them costs
};

// heavy_counts[t] = #{h : |c_t[h]| >= tau} for every repetition t.
RoundPlan plan_round(const Shape& shape, std::span<const std::int64_t> heavy_counts, Recovery how);

// top_k's ladder: the first threshold is the first_pooled_rank(k)-th largest bucket magnitude over
// all repetitions; each further round takes kLadderFactor times as many.
std::int64_t first_pooled_rank(std::size_t k);
inline constexpr std::int64_t kLadderFactor = 4;

// "heavy buckets: tau = 3.2, 2 of 3 repetitions, 41 buckets, ~2.1e+07 probes (scan: 3e+12)"
std::string describe(const RoundPlan& plan, double tau);

}  // namespace pagh::recovery
