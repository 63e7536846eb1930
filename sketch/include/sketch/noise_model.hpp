// The distribution of a reported estimate's error, measured from the sketch itself, and what it
// says about each reported entry: an interval with a stated coverage and whether the entry stands
// out from the largest of the m * p pure-noise estimates.
//
// Why empirical: the error of one single estimate of (i, j) is the signed sum of the other entries
// of C that share its bucket, which has the same distribution as the content of a random bucket.
// The d * b bucket values are therefore d * b draws of that error, heavy tails and all (a few large
// entries of C make rare large errors, and so ghosts, that a Gaussian model with sigma =
// ||C||_F / sqrt(b) does not predict; a product with empty buckets has mostly exact estimates,
// which the Gaussian model over-states). The estimate is the median of d independent single
// estimates, so its error is the median of d independent draws: P(|median| >= q) follows from
// the one-sided tail s(q) = P(|error| >= q) / 2 (the error is symmetric: every entry enters a
// bucket with a random sign) as the chance that ceil(d/2) of d draws lie beyond q on one side.
//
// Intervals and thresholds never fall below the rounding of the transforms (16 unit roundoffs of
// the largest bucket): a sketch with mostly empty buckets measures mostly exact zeros.
//
// Beyond the largest bucket the data say nothing; there the tail is taken as the larger of the
// measured one and a Gaussian one of the buckets' own variance, so that significance, which lives
// in that far tail when m * p is large, errs on the side of "noise".
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sketch/entry.hpp"
#include "sketch/sketch_statistics.hpp"

namespace pagh {

class CompressedProduct;

// An interval [low, high] for an entry's exact value.
struct Interval {
  double low = 0, high = 0;
};

// What the model says about one reported entry (assess()).
struct EntryAssessment {
  double half_width = 0;      // of the interval with the model's coverage, for an entry chosen before sketching
  Interval interval;          // with that coverage for an entry reported because its estimate was large
  double agreement = 0;       // the smallest single estimate in the direction of the median
  double expected_noise = 0;  // noise entries expected with at least this agreement among m * p
  bool significant = false;   // expected_noise <= the false-positive rate
};

// Cuts `leading` (the k + 1 largest estimates, or all there are) to the k of a top-k answer and
// returns the cutoff of their intervals (NoiseModel::selected_interval): the largest |estimate|
// left out, 0 when none is.
double keep_top(std::vector<Entry>& leading, std::size_t k);

class NoiseModel {
 public:
  // From the product's d sketches (bucket values pooled over the repetitions).
  explicit NoiseModel(const CompressedProduct& product);
  // From raw sketches: d = repetitions vectors of b values at [t * b, (t + 1) * b); candidates = m * p;
  // unit_roundoff: that of the precision the sketch was computed in (the floor of every error).
  NoiseModel(std::span<const double> sketches, int repetitions, double candidates, double unit_roundoff = 0x1p-53);
  // From the statistics of such sketches (measure_sketch_values, or a device's measure of them).
  NoiseModel(const SketchStatistics& statistics, int repetitions, double candidates, double unit_roundoff = 0x1p-53);

  // P(|error of a reported estimate| >= q), measured (no Gaussian extension): what intervals use.
  double tail(double q) const;
  // The same with the Gaussian extension beyond the measured buckets: what significance uses.
  double far_tail(double q) const;

  // The smallest q with P(|single error| >= q) <= p: a quantile of one repetition's error.
  double single_quantile(double p) const;

  // The sketch length at which an entry of magnitude `target` is significant with probability
  // `power`: its agreement (target minus the worst of its d errors) must reach the agreement
  // threshold. Both scale as 1 / sqrt(b) with ||C||_F fixed, so from this sketch (of length b)
  // b' = b ((w + T) / target)^2, w the error quantile that all d errors stay within with
  // probability `power`, T the threshold; rounded up to a power of two, never below b. Where the
  // noise is heavy-tailed (a few large entries of C) its large values fall faster than 1 / sqrt(b),
  // so b' is then an upper bound.
  std::int64_t buckets_to_resolve(double target, double power = 0.95, double false_positive_rate = 0.05) const;

  // The half-width w of the interval estimate +- w that covers the exact value with probability
  // `coverage` (in (0, 1)) for an entry whose estimate is not selected by its own noise.
  double half_width(double coverage = 0.95) const;

  // The interval that covers the exact value with probability `coverage` for an entry reported
  // because its |estimate| exceeded `cutoff`: for top-k answers the largest |estimate| left out
  // (the (k+1)-th), for threshold answers the threshold; cutoff 0 gives estimate +- half_width.
  // The entries ranked first are those whose noise lifted them (the winner's curse), so the interval
  // comes from the error's distribution conditional on that selection, |estimate| > cutoff, as in
  // Reid, Taylor & Tibshirani (2017), "Post-selection point and interval estimation of signal sizes
  // in Gaussian samples", with the measured error distribution in place of the Gaussian. It is
  // wide, and may contain 0, for an entry barely above the cutoff; an entry far above it gets
  // estimate +- half_width. `agreed`: the entry is significant by agreement (assess()); its error
  // is then drawn from the buckets below the agreement threshold, since a collision with a large
  // entry of C in ceil(d/2) repetitions would have made its repetitions disagree.
  Interval selected_interval(double estimate, double cutoff, double coverage = 0.95, bool agreed = false) const;

  // Pure-noise estimates expected with |estimate| >= magnitude among the m * p candidates.
  double expected_noise(double magnitude) const { return candidates_ * far_tail(magnitude); }
  // The smallest |estimate| at which noise alone is expected to reach it no more often than
  // `false_positive_rate` times among the m * p candidates (a family-wise rate: an entry at or above
  // it is "significant").
  double significance_threshold(double false_positive_rate = 0.05) const;
  bool significant(double magnitude, double false_positive_rate = 0.05) const {
    return magnitude > 0 && magnitude >= significance_threshold(false_positive_rate);
  }
  // The magnitude the largest of the m * p noise estimates is expected to reach (one expected).
  double noise_ceiling() const { return significance_threshold(1.0); }

  // Significance by agreement: an entry's agreement is the smallest of its d single estimates in
  // the direction of their median (negative when one has the other sign). Noise alone reaches
  // agreement q only when all d single errors lie beyond q on one side, 2 s(q)^d, so a ghost (an
  // entry whose median is lifted by large entries of C sharing its buckets in ceil(d/2)
  // repetitions) is told from a real entry by the repetitions that disagree with it.
  double agreement_tail(double q) const;  // with the Gaussian extension, as far_tail
  // The smallest agreement that noise reaches with probability <= false_positive_rate over the m * p
  // candidates; an entry whose agreement reaches it is significant.
  double agreement_threshold(double false_positive_rate = 0.05) const;

  // sqrt(mean over buckets of c^2): the standard deviation of one single estimate, ||C||_F / sqrt(b).
  double sigma() const { return sigma_; }
  // The same over the buckets below the agreement threshold (5 %): without the buckets that hold
  // significant entries, the noise the rest of C makes (the tail norm of Pagh's bound, from the
  // sketch alone, so that every query of one sketch reports the same z for an entry).
  double tail_sigma() const;

  // The entry's d single estimates read from the product's sketches, and the verdicts above.
  // `cutoff`: that of selected_interval (0: the entry was chosen before sketching).
  EntryAssessment assess(const CompressedProduct& product, const Entry& entry, double coverage = 0.95,
                         double false_positive_rate = 0.05, double cutoff = 0) const;

  int repetitions() const { return repetitions_; }
  double candidates() const { return candidates_; }
  std::int64_t buckets() const { return buckets_; }

 private:
  // P(|single error| >= q), from the histogram.
  double single_tail(double q) const;
  // P(error of a reported estimate >= t), t of either sign, measured (the error is symmetric);
  // below_agreement: from the buckets below the agreement threshold only.
  double upper_tail(double t, bool below_agreement) const;
  double median_tail(double one_sided) const;
  double far_single_tail(double q) const;  // the measured single tail, extended by the Gaussian

  int repetitions_ = 1;
  std::int64_t buckets_ = 0;
  double candidates_ = 0, sigma_ = 0, largest_ = 0, pooled_ = 0;
  // Rounding: where most buckets are empty the measured errors are mostly 0, yet the transforms
  // round every estimate; intervals and thresholds are never below 16 unit roundoffs of the
  // largest bucket.
  double rounding_ = 0;
  double half_width_95_ = 0;  // half_width(0.95), asked for every reported entry: computed once
  double agreement_95_ = 0;   // agreement_threshold(0.05), likewise
  // Counts of |c| in geometric bins below largest_ (kBinsPerOctave per octave), bin 0 = the largest
  // octave's top bin; values below the last bin (or zero) are counted in below_.
  std::vector<double> counts_, energy_;  // per bin: how many values, the sum of their squares
  std::vector<double> above_;            // above_[b]: the values in the bins before b
  double below_ = 0, below_energy_ = 0;
};

}  // namespace pagh
