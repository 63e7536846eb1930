// How many of the m * p estimates noise alone would put at a given size, so that a reported entry
// can be told apart from the largest of many pure-noise estimates (DESIGN.md §1, "Statistics").
//
// Model: an entry whose true value is 0 has single estimates with standard deviation at most
// sigma = ||AB||_F / sqrt(b), close to Gaussian when many entries share a bucket; its estimate is
// the median of d independent ones. P(|median| >= z sigma) is then the chance that at least
// ceil(d/2) of them lie beyond z sigma on the same side (for odd d exact, for even d, where the
// median is the mean of the middle two, an upper bound).
#pragma once

#include <cstdint>

namespace pagh {

// P(|median of d independent symmetric errors| >= q) when one error exceeds q on one side with
// probability `one_sided` (P(error >= q) = P(error <= -q) = one_sided).
double median_noise_tail(int repetitions, double one_sided);

// P(|median of d independent N(0,1)| >= z), z >= 0.
double noise_tail(int repetitions, double z);

// Expected number of pure-noise estimates with |estimate| >= z sigma among `entries` candidates.
double expected_noise_entries(double entries, int repetitions, double z);

// The z at which one pure-noise estimate is expected among `entries`: about the size of the
// largest noise estimate, in sigmas. Entries below it are not distinguishable from noise.
double noise_ceiling(double entries, int repetitions);

}  // namespace pagh
