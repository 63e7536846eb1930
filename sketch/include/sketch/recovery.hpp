// How the large entries of a compressed product are found without evaluating all m * p estimates.
//
// An entry's estimate is the median of its d single estimates +-c_t[h1_t(i) XOR h2_t(j)], so
// |median| >= tau implies that at least ceil(d/2) of them have |c_t[bucket]| >= tau: the entry sits
// in a *heavy bucket* (|c_t[h]| >= tau) in at least ceil(d/2) repetitions. Any set S of
// d - ceil(d/2) + 1 repetitions therefore contains one of them. Heavy-bucket recovery enumerates,
// for each t in S, the pairs (i, j) with h1_t(i) XOR h2_t(j) heavy (through an index of the longer
// side's hashes by bucket: for each index of the shorter side and each heavy bucket, a lookup),
// evaluates their medians and keeps those with |median| >= tau. The result is *exactly* the set the
// exhaustive scan finds, with the same values, spreads and order — not an approximation — at a cost
// of about sum_{t in S} (min(m, p) * L_t + L_t * m * p / b * d) probes for L_t heavy buckets,
// against m * p * d for the scan (on the CPU, for d = 1 or 3, the scan first reads a float copy of
// the sketches and decides on the exact values only where the rounded |median| reaches the bound:
// the same answer, a quarter of the cost per probe in the planner). top_k(k) lowers tau from the largest bucket magnitudes until at
// least k entries qualify (the k largest are then among them), each round costing about 4x the
// previous one.
//
// What the sketch guarantees statistically is unchanged by the recovery: each single estimate is
// unbiased with variance <= ||AB||_F^2 / b, so an entry with |C_ij| >= z * sigma has its median
// within the reported threshold with the probability the estimator gives (recovery misses nothing
// the scan would report).
#pragma once

#include <cstdint>
#include <string>

namespace pagh {

enum class Recovery {
  automatic,      // heavy buckets when the cost model says they are cheaper than the scan
  exhaustive,     // evaluate every one of the m * p estimates (the reference oracle)
  heavy_buckets,  // always enumerate heavy buckets (tests; falls back to the scan only where
                  // enumeration cannot answer: tau = 0 with even d, or non-finite sketch values)
};

// What a query did, for reports (-v) and benchmarks.
struct RecoveryStats {
  bool exhaustive = false;        // the scan ran (by choice or as a fallback)
  int rounds = 0;                 // thresholds tried (top_k lowers tau until k entries qualify)
  double threshold = 0;           // the last tau enumerated
  std::int64_t heavy_buckets = 0; // heavy buckets enumerated in the last round (over the reps in S)
  std::int64_t candidates = 0;    // pairs whose median was evaluated in the last round
  std::int64_t qualified = 0;     // entries with |median| >= tau in the last round
  double probes = 0;              // the cost model's estimate for the work done (all rounds)
  double scan_probes = 0;         // the same for the exhaustive scan: m * p * d
  std::string reason;             // one line: which method ran and why
};

}  // namespace pagh
