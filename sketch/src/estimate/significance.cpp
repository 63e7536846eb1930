#include "sketch/significance.hpp"

#include <algorithm>
#include <cmath>

namespace pagh {

double noise_tail(int repetitions, double z) {
  return median_noise_tail(repetitions, 0.5 * std::erfc(std::max(z, 0.0) / std::sqrt(2.0)));  // P(N(0,1) >= z)
}

double median_noise_tail(int repetitions, double q) {
  const int d = std::max(repetitions, 1);
  const int needed = (d + 1) / 2;
  if (!(q > 0)) return 0.0;
  if (q >= 0.5) return 1.0;
  // Sum of binomial terms in logs (q can be ~1e-300 for large z).
  double one_side = 0;
  for (int k = needed; k <= d; ++k)
    one_side += std::exp(std::lgamma(d + 1.0) - std::lgamma(k + 1.0) - std::lgamma(d - k + 1.0) + k * std::log(q) +
                         (d - k) * std::log1p(-q));
  return std::min(1.0, 2 * one_side);
}

double expected_noise_entries(double entries, int repetitions, double z) { return entries * noise_tail(repetitions, z); }

double noise_ceiling(double entries, int repetitions) {
  if (!(entries > 1)) return 0.0;
  double lo = 0, hi = 40;  // expected_noise_entries decreases in z; at 40 it is below 1e-300 * entries
  for (int step = 0; step < 100; ++step) {
    const double mid = 0.5 * (lo + hi);
    (expected_noise_entries(entries, repetitions, mid) >= 1 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace pagh
