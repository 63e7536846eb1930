// The reference backend: simple, obviously right, slow. It is the oracle that every fast path is
// tested against, and the ground truth of accuracy studies.
//
// - sylvester: the dense O(n^2) product with the Sylvester-Hadamard matrix, (Hx)_f =
//   sum_i (-1)^popcount(f & i) x_i, accumulated in long double (or exactly, for integers); n <= 4096.
// - transform: scalar O(n log n), one loop per stage (strides 1, 2, 4, ...), every option of
//   fwht::Options, each butterfly written exactly as specified. The CPU backend must agree with it
//   bit for bit, because both apply the same operations in the same order.
// - transform_quad: the same in IEEE binary128 (__float128), used as ground truth for accuracy.
#pragma once

#include <cstdint>
#include <span>

#include "fwht/half.hpp"
#include "fwht/options.hpp"

namespace fwht::reference {

inline constexpr std::int64_t kSylvesterMaxN = 4096;

void sylvester(std::span<const double> in, std::span<double> out);
// Exact integer product; throws pagh::Error if a result does not fit in int64.
void sylvester(std::span<const std::int64_t> in, std::span<std::int64_t> out);

// In place on a contiguous vector whose size is a power of two. Options::threads is ignored.
void transform(std::span<double> x, const Options& options = {});
void transform(std::span<float> x, const Options& options = {});
void transform(std::span<f16> x, const Options& options = {});
void transform(std::span<bf16> x, const Options& options = {});
void transform(std::span<std::int32_t> x, const Options& options = {});
void transform(std::span<std::int64_t> x, const Options& options = {});

// Unnormalized stabilized folklore transform that also returns the error terms left after the last
// stage (x - e is the compensated estimate). Tests use it to check the CPU kernels' error terms.
void transform_with_errors(std::span<double> x, std::span<double> e, Stabilization stabilization);
void transform_with_errors(std::span<float> x, std::span<float> e, Stabilization stabilization);

// Folklore or Alman-Rao in binary128 with the given normalization (stabilization is pointless here).
void transform_quad(std::span<__float128> x, Normalization normalization = Normalization::none,
                    Algorithm algorithm = Algorithm::folklore);

}  // namespace fwht::reference
