// The exhaustive scans' first look at a row: every estimate's |median| rounded to float, from a float
// copy of the sketches (half the bytes, so the d sketches of a default-sized product stay in L2)
// and AVX2 gathers where the CPU has them. Rounding to nearest is monotone and odd, so it commutes
// with min, max and |.|: the rounded |median| is the rounding of the exact one, and an entry whose
// rounded |median| is below rounded(bound) has an exact |median| below the bound. The scans reject
// those and decide every other entry on the exact estimates, so their answers keep every bit.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sketch/hashing.hpp"

namespace pagh::detail {

class FloatMedians {
 public:
  // usable() is false (and reaching() must not be called) unless applies() (d is 1 or 3: odd, so the
  // median is one of the values, which rounding preserves) and every sketch value is finite.
  FloatMedians(const HashTables& tables, std::span<const double> sketches, bool finite);
  bool usable() const { return usable_; }

  // The columns j, ascending, of row i whose rounded |median| (of the d values
  // s1_t(i) s2_t(j) c_t[h1_t(i) ^ h2_t(j)]) is at least `bound`; replaces out's contents.
  void reaching(std::int64_t i, float bound, std::vector<std::int64_t>& out) const;

  // Whether a product of d repetitions, b buckets and `entries` estimates is scanned through
  // rounded medians (when its sketch values are finite): the copy is made only where it costs less
  // than the scan reads (b <= entries) and stays within 2^26 values (256 MiB). And what a probe of
  // that scan costs against one of heavy-bucket enumeration (recovery_plan.hpp's Shape::scan_cost):
  // it reads 4-byte values from a copy that stays in cache, 8 at a time, where enumeration reads a
  // random record and a double.
  static bool applies(int d, std::int64_t b, double entries) {
    return (d == 1 || d == 3) && static_cast<double>(b) <= entries && static_cast<std::int64_t>(d) * b <= (std::int64_t{1} << 26);
  }
  static constexpr double kScanCost = 0.25;

  // The bound an entry's rounded |median| is compared with: below it, the exact |median| is below v.
  static float bound(double v) { return static_cast<float>(v); }

 private:
  const HashTables& tables_;
  int d_ = 0;
  std::int64_t cols_ = 0;
  bool usable_ = false;
  std::vector<float> sketches_;       // d x b, rounded
  std::vector<std::uint32_t> words_;  // d x cols: h2_t(j) | (s2_t(j) < 0) << 31
};

}  // namespace pagh::detail
