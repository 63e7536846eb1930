// What the noise model (noise_model.hpp) and the overflow check read from a product's d * b sketch
// values, measured in one place so that a GPU backend can measure the same on its device and no
// host copy of the sketches is needed for them (CompressedProduct::statistics).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

namespace pagh {

struct SketchStatistics {
  // Magnitude bins: a double's sign-less bits shifted so that the key is (exponent, top kMantissaBits
  // of the mantissa): monotone in |c|, kBinsPerOctave bins per octave, each at most 1/16 of its
  // octave wide; kBins bins (64 octaves) below the largest value.
  static constexpr int kMantissaBits = 4;
  static constexpr std::int64_t kBinsPerOctave = std::int64_t{1} << kMantissaBits;
  static constexpr std::int64_t kBins = 64 * kBinsPerOctave;

  double values = 0;    // how many were measured (d * b)
  double largest = 0;   // the largest |c| (NaN values do not count)
  double energy = 0;    // the sum of c^2
  bool finite = true;   // no value is inf or NaN
  // Where 0 < largest < inf: counts[b] and bin_energy[b] (how many |c| in bin b and the sum of their
  // squares), bin b = key(largest) - key(|c|); the values below the last bin (zeros included) in
  // below and below_energy. Otherwise counts and bin_energy are empty and below = values.
  std::vector<double> counts, bin_energy;
  double below = 0, below_energy = 0;
};

// The key of |v| (see SketchStatistics), and the smallest value with a given key.
inline std::int64_t magnitude_key(double v) {
  return static_cast<std::int64_t>(std::bit_cast<std::uint64_t>(std::fabs(v)) >> (52 - SketchStatistics::kMantissaBits));
}
inline double magnitude_of_key(std::int64_t key) {
  return std::bit_cast<double>(static_cast<std::uint64_t>(key) << (52 - SketchStatistics::kMantissaBits));
}

// The statistics of host values (OpenMP threads; the sums over fixed pieces of the values, so the
// same bits on any number of threads).
SketchStatistics measure_sketch_values(std::span<const double> values);

}  // namespace pagh

