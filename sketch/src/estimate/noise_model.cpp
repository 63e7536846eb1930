#include "sketch/noise_model.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "sketch/compressed_product.hpp"
#include "sketch/significance.hpp"

namespace pagh {
namespace {

constexpr std::int64_t kBins = SketchStatistics::kBins;

// The unit roundoff of the storage precision (the transforms' arithmetic is at least as wide).
double unit_roundoff(fwht::DType precision) {
  switch (precision) {
    case fwht::DType::f64: return 0x1p-53;
    case fwht::DType::f16: return 0x1p-11;
    case fwht::DType::bf16: return 0x1p-8;
    default: return 0x1p-24;
  }
}

std::int64_t key_of(double v) { return magnitude_key(v); }
double value_of(std::int64_t key) { return magnitude_of_key(key); }

}  // namespace

SketchStatistics measure_sketch_values(std::span<const double> sketches) {
  SketchStatistics s;
  const std::int64_t n = static_cast<std::int64_t>(sketches.size());
  s.values = static_cast<double>(n);
  // The sums go over fixed pieces (their bounds depend on n alone), each in order, and then over the
  // pieces in order: the same bits on any number of threads.
  const std::int64_t pieces = std::clamp<std::int64_t>(n >> 15, 1, 64);
  const auto piece = [&](std::int64_t p) { return std::pair{n * p / pieces, n * (p + 1) / pieces}; };
  std::vector<double> largest(static_cast<std::size_t>(pieces), 0.0), energy(static_cast<std::size_t>(pieces), 0.0);
  std::vector<char> finite(static_cast<std::size_t>(pieces), 1);
#pragma omp parallel for schedule(static) if (pieces > 1)
  for (std::int64_t p = 0; p < pieces; ++p) {
    const auto [from, to] = piece(p);
    double top = 0, sum = 0;
    bool all_finite = true;
    for (std::int64_t i = from; i < to; ++i) {
      const double v = std::fabs(sketches[i]);
      top = std::max(top, v);  // NaN does not count
      sum += v * v;
      all_finite = all_finite && std::isfinite(v);
    }
    largest[static_cast<std::size_t>(p)] = top, energy[static_cast<std::size_t>(p)] = sum, finite[static_cast<std::size_t>(p)] = all_finite;
  }
  for (std::int64_t p = 0; p < pieces; ++p) {
    s.largest = std::max(s.largest, largest[static_cast<std::size_t>(p)]);
    s.energy += energy[static_cast<std::size_t>(p)];
    s.finite = s.finite && finite[static_cast<std::size_t>(p)];
  }
  if (!(s.largest > 0) || !std::isfinite(s.largest)) {
    s.below = s.values;
    return s;
  }
  s.counts.assign(kBins, 0.0), s.bin_energy.assign(kBins, 0.0);
  const std::int64_t top = key_of(s.largest);
  // Per piece: counts in [0, kBins], squares in [kBins + 1, 2 kBins + 1]; slot kBins (and
  // 2 kBins + 1) for the values below the bins. NaN values are in no bin (as on a device).
  std::vector<std::vector<double>> partial(static_cast<std::size_t>(pieces));
#pragma omp parallel for schedule(static) if (pieces > 1)
  for (std::int64_t p = 0; p < pieces; ++p) {
    std::vector<double>& mine = partial[static_cast<std::size_t>(p)];
    mine.assign(2 * (kBins + 1), 0.0);
    const auto [from, to] = piece(p);
    for (std::int64_t i = from; i < to; ++i) {
      if (std::isnan(sketches[i])) continue;
      const std::size_t bin = static_cast<std::size_t>(std::min(top - key_of(sketches[i]), kBins));
      ++mine[bin];
      mine[kBins + 1 + bin] += sketches[i] * sketches[i];
    }
  }
  for (const auto& mine : partial) {
    for (std::int64_t b = 0; b < kBins; ++b) {
      s.counts[static_cast<std::size_t>(b)] += mine[static_cast<std::size_t>(b)];
      s.bin_energy[static_cast<std::size_t>(b)] += mine[static_cast<std::size_t>(kBins + 1 + b)];
    }
    s.below += mine[kBins], s.below_energy += mine[2 * kBins + 1];
  }
  return s;
}

NoiseModel::NoiseModel(const CompressedProduct& product)
    : NoiseModel(product.statistics(), product.repetitions(), static_cast<double>(product.rows()) * static_cast<double>(product.cols()),
                 unit_roundoff(product.params().precision)) {}

NoiseModel::NoiseModel(std::span<const double> sketches, int repetitions, double candidates, double unit_roundoff)
    : NoiseModel(measure_sketch_values(sketches), repetitions, candidates, unit_roundoff) {}

NoiseModel::NoiseModel(const SketchStatistics& s, int repetitions, double candidates, double unit_roundoff)
    : repetitions_(std::max(repetitions, 1)),
      buckets_(static_cast<std::int64_t>(s.values) / std::max(repetitions, 1)),
      candidates_(candidates),
      pooled_(s.values),
      counts_(kBins, 0.0),
      energy_(kBins, 0.0) {
  largest_ = s.largest;
  rounding_ = 16 * unit_roundoff * s.largest;
  sigma_ = s.values > 0 ? std::sqrt(s.energy / s.values) : 0.0;
  if (!(largest_ > 0) || !std::isfinite(largest_) || s.counts.size() != static_cast<std::size_t>(kBins) ||
      s.bin_energy.size() != static_cast<std::size_t>(kBins)) {
    below_ = pooled_;
    return;
  }
  counts_ = s.counts, energy_ = s.bin_energy;
  below_ = s.below, below_energy_ = s.below_energy;
  above_.assign(kBins + 1, 0.0);
  for (std::int64_t b = 0; b < kBins; ++b) above_[static_cast<std::size_t>(b + 1)] = above_[static_cast<std::size_t>(b)] + counts_[static_cast<std::size_t>(b)];
  half_width_95_ = half_width(0.95);
  agreement_95_ = agreement_threshold(0.05);
}

double NoiseModel::single_tail(double q) const {
  if (!(q > 0)) return 1.0;
  if (!(q <= largest_) || pooled_ <= 0) return 0.0;
  const std::int64_t top = key_of(largest_);
  const std::int64_t bin = top - key_of(q);
  if (bin >= kBins) return (pooled_ - below_) / pooled_;  // below every bin: the values below the bins count as zeros
  double count = above_[static_cast<std::size_t>(bin)];
  // The values in q's bin are taken as spread evenly over the bin (the largest bin ends at largest_).
  const double lo = value_of(top - bin), hi = bin == 0 ? largest_ : value_of(top - bin + 1);
  const double above = hi > lo ? std::clamp((hi - q) / (hi - lo), 0.0, 1.0) : 1.0;
  count += above * counts_[static_cast<std::size_t>(bin)];
  return std::min(1.0, count / pooled_);
}

double NoiseModel::median_tail(double one_sided) const { return median_noise_tail(repetitions_, one_sided); }

double NoiseModel::tail(double q) const { return median_tail(0.5 * single_tail(q)); }

double NoiseModel::far_single_tail(double q) const {
  const double gaussian = sigma_ > 0 ? std::erfc(q / (sigma_ * std::sqrt(2.0))) : (q > 0 ? 0.0 : 1.0);
  return std::max(single_tail(q), gaussian);
}

double NoiseModel::far_tail(double q) const { return median_tail(0.5 * far_single_tail(q)); }

double NoiseModel::agreement_tail(double q) const {
  if (!(q > 0)) return 1.0;
  return std::min(1.0, 2 * std::pow(0.5 * far_single_tail(q), repetitions_));
}

namespace {
// The smallest q in [0, hi] with f(q) <= target for a nonincreasing f (to a relative 1e-9).
template <class F>
double smallest_with(F f, double target, double hi) {
  if (f(0.0) <= target) return 0.0;
  double lo = 0;
  while (f(hi) > target) hi *= 2;
  for (int step = 0; step < 200 && hi - lo > 1e-9 * hi; ++step) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) <= target ? hi : lo) = mid;
  }
  return hi;
}
}  // namespace

double NoiseModel::half_width(double coverage) const {
  if (coverage == 0.95 && half_width_95_ > 0) return half_width_95_;
  if (!(coverage > 0 && coverage < 1)) return coverage >= 1 ? INFINITY : 0.0;
  if (!(largest_ > 0)) return 0.0;
  return std::max(rounding_, smallest_with([&](double q) { return tail(q); }, 1 - coverage, largest_));
}

double NoiseModel::upper_tail(double t, bool below_agreement) const {
  const double q = std::fabs(t);
  double single = single_tail(q);
  if (below_agreement) {  // the values at or beyond the threshold removed from the pool
    const double beyond = single_tail(agreement_95_);
    single = beyond < 1 ? std::max(0.0, single - beyond) / (1 - beyond) : 0.0;
  }
  const double half = 0.5 * median_tail(0.5 * single);
  return t > 0 ? half : (t < 0 ? 1 - half : 0.5);
}

Interval NoiseModel::selected_interval(double estimate, double cutoff, double coverage, bool agreed) const {
  const double e = std::fabs(estimate), c = std::min(std::fabs(cutoff), e);
  Interval v;
  if (!(coverage > 0 && coverage < 1) || !(largest_ > 0)) {
    const double w = half_width(coverage);
    v = {e - w, e + w};
  } else {
    // P(estimate >= e | |estimate| >= c) when the exact value is mu; it grows with mu. Where both
    // tails are beyond every measured error the estimate's own tail is the smaller: 0.
    const auto chance = [&](double mu) {
      const double selected = upper_tail(c - mu, agreed) + upper_tail(c + mu, agreed);
      return selected > 0 ? upper_tail(e - mu, agreed) / selected : 0.0;
    };
    const auto solve = [&](double target) {  // the mu at which chance(mu) crosses target
      double lo = -(c + 2 * largest_), hi = e + 2 * largest_;
      for (int step = 0; step < 200 && hi - lo > 1e-12 * (std::fabs(lo) + std::fabs(hi)); ++step) {
        const double mid = 0.5 * (lo + hi);
        (chance(mid) < target ? lo : hi) = mid;
      }
      return 0.5 * (lo + hi);
    };
    const double alpha = 1 - coverage;
    v = {solve(0.5 * alpha), solve(1 - 0.5 * alpha)};
  }
  v.low = std::min(v.low, e - rounding_), v.high = std::max(v.high, e + rounding_);
  if (estimate < 0) v = {-v.high, -v.low};
  return v;
}

double keep_top(std::vector<Entry>& leading, std::size_t k) {
  if (leading.size() <= k) return 0.0;
  const double cutoff = std::fabs(leading[k].value);
  leading.resize(k);
  return cutoff;
}

double NoiseModel::single_quantile(double p) const {
  if (!(largest_ > 0)) return 0.0;
  return smallest_with([&](double q) { return single_tail(q); }, p, largest_);
}

std::int64_t NoiseModel::buckets_to_resolve(double target, double power, double false_positive_rate) const {
  if (!(target > 0) || buckets_ <= 0) return buckets_;
  // All d errors within w (on the side that lowers the agreement) with probability `power`:
  // (1 - P(error <= -w))^d = power, P(error <= -w) = single_tail(w) / 2.
  const double one_sided = 1 - std::pow(power, 1.0 / repetitions_);
  const double w = single_quantile(2 * one_sided);
  const double ratio = (w + agreement_threshold(false_positive_rate)) / target;
  const double wanted = static_cast<double>(buckets_) * ratio * ratio;
  if (!(wanted > static_cast<double>(buckets_))) return buckets_;
  if (wanted > 0x1p62) return std::int64_t{1} << 62;
  return static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(std::ceil(wanted))));
}

double NoiseModel::significance_threshold(double false_positive_rate) const {
  if (!(sigma_ > 0)) return 0.0;
  const double target = false_positive_rate / std::max(candidates_, 1.0);
  return smallest_with([&](double q) { return far_tail(q); }, target, std::max(largest_, 8 * sigma_));
}

double NoiseModel::agreement_threshold(double false_positive_rate) const {
  if (!(sigma_ > 0)) return 0.0;
  const double target = false_positive_rate / std::max(candidates_, 1.0);
  return std::max(rounding_, smallest_with([&](double q) { return agreement_tail(q); }, target, std::max(largest_, 8 * sigma_)));
}

EntryAssessment NoiseModel::assess(const CompressedProduct& product, const Entry& entry, double coverage,
                                   double false_positive_rate, double cutoff) const {
  EntryAssessment a;
  a.half_width = half_width(coverage);
  const double direction = entry.value >= 0 ? 1.0 : -1.0;
  a.agreement = INFINITY;
  for (double single : product.estimates_of(entry.row, entry.col)) a.agreement = std::min(a.agreement, direction * single);
  a.expected_noise = candidates_ * agreement_tail(a.agreement);
  a.significant = a.agreement > 0 && a.expected_noise <= false_positive_rate;
  a.interval = cutoff > 0 ? selected_interval(entry.value, cutoff, coverage, a.agreement > 0 && a.agreement >= agreement_95_)
                          : Interval{entry.value - a.half_width, entry.value + a.half_width};
  return a;
}

double NoiseModel::tail_sigma() const {
  if (!(largest_ > 0) || !std::isfinite(largest_)) return sigma_;
  const double threshold = agreement_threshold();
  const std::int64_t top = key_of(largest_);
  double count = below_, energy = below_energy_;
  for (std::int64_t b = kBins - 1; b >= 0; --b) {
    const double upper = b == 0 ? largest_ : value_of(top - b + 1);
    if (upper > threshold) break;
    count += counts_[static_cast<std::size_t>(b)], energy += energy_[static_cast<std::size_t>(b)];
  }
  return count > 0 ? std::sqrt(energy / count) : 0.0;
}

}  // namespace pagh
