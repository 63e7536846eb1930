// What a transform computes: data type, normalization, stabilization, algorithm, layout.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "fwht/tuning.hpp"

namespace fwht {

// Storage type of the data. Host types: f64 = double, f32 = float, f16 = fwht::f16 (IEEE binary16),
// bf16 = fwht::bf16 (bfloat16), i32 = std::int32_t, i64 = std::int64_t.
enum class DType { f64, f32, f16, bf16, i32, i64 };

// none: y = H x.  orthonormal: y = H x / sqrt(n).  inverse: y = H x / n (so inverse(none(x)) == x).
// Integer types accept none and inverse (exact division; see Options::check_overflow).
enum class Normalization { none, orthonormal, inverse };

// Floating types only.
// kahan, neumaier: compensated butterflies (Andersson 2025). Each element carries an error term e
//   through all stages; the output is the value vector (as in Kahan summation, the last error terms
//   are dropped).
// wide_onchip: the stages are cut into groups (fwht::stage_groups(n): at most 13 stages, one group
//   up to n = 2^13, two up to 2^22, three up to 2^31); within a group every butterfly is computed in
//   a type twice as wide as the compute type (double for float, float for the 16-bit formats with
//   Compute::storage), and at the end of each group the value is rounded once to the compute type
//   (x = fl(x_hi + x_lo): the error term is the low half of the wide value). The error terms thus
//   live only inside a group, which the CUDA backend holds on chip, so they cost no memory traffic.
//   Not for f64 (no wider type on chip; use neumaier).
// wide_carry: wide_onchip, and at each group boundary the rounding residual of the wide value w
//   against x = fl(w) goes on as one signed byte per element: q = clamp(round((|w| - |x|) / u),
//   -128, 127) with u = 2^-8 ulp of the compute format in w's binade (0 for x zero, subnormal f32
//   or not finite; computed on the bit patterns,
//   detail::carry_residual_bits); the next group starts from x moved by q u, so a boundary costs
//   at most 2^-9 ulp (2^-8 where the clamp cuts) instead of 1/2 ulp. One byte of memory traffic per
//   element and boundary (device workspace on CUDA); identical to wide_onchip up to n = 2^13.
enum class Stabilization { none, kahan, neumaier, wide_onchip, wide_carry };
// The two modes that compute stage groups in the wide type.
inline constexpr bool is_wide(Stabilization s) { return s == Stabilization::wide_onchip || s == Stabilization::wide_carry; }

// folklore: log2(n) radix-2 stages.  alman_rao: (log2 n mod 3) radix-2 stages, an exact power-of-two
// prescale, then log2(n)/3 stages of a 23-operation H8 kernel (fewer additions, different rounding).
enum class Algorithm { folklore, alman_rao };

// For f16/bf16 only: storage = every operation rounded to the 16-bit format (what accuracy studies
// measure); f32 = load into float, transform and normalize in float, round once on store.
enum class Compute { storage, f32 };

enum class Backend { cpu, cuda };

struct Options {
  Normalization normalization = Normalization::none;
  Stabilization stabilization = Stabilization::none;
  Algorithm algorithm = Algorithm::folklore;
  Compute compute = Compute::f32;
  // Integer types: when true, any intermediate or final value outside the type's range, and an
  // inexact division by n (Normalization::inverse), throws pagh::Error instead of wrapping.
  bool check_overflow = false;
  // CPU worker threads; 0 means all hardware threads. Results do not depend on the thread count.
  int threads = 0;
  // Knobs of the CUDA planner (fwht/tuning.hpp); results do not depend on them.
  Tuning tuning = {};
};

// FFTW plan_many semantics. Element j of transform t lives at base + t*distance + j*stride
// (in elements). distance == 0 means n*stride (transforms back to back).
struct Shape {
  std::int64_t n = 0;
  std::int64_t batch = 1;
  std::int64_t stride = 1;
  std::int64_t distance = 0;
};

std::size_t size_of(DType t);
std::string_view to_string(DType t);
std::string_view to_string(Normalization v);
std::string_view to_string(Stabilization v);
std::string_view to_string(Algorithm v);
std::string_view to_string(Compute v);
std::string_view to_string(Backend v);
// Parse the names printed by to_string (e.g. "f32", "neumaier", "alman_rao"); throw pagh::Error on
// anything else, naming the accepted values.
DType parse_dtype(std::string_view s);
Normalization parse_normalization(std::string_view s);
Stabilization parse_stabilization(std::string_view s);
Algorithm parse_algorithm(std::string_view s);
Compute parse_compute(std::string_view s);
Backend parse_backend(std::string_view s);

inline bool is_integer(DType t) { return t == DType::i32 || t == DType::i64; }

// The stage groups of Stabilization::wide_onchip for n = 2^log2n, in order (their sizes sum to
// log2n; log2n = 0 gives one empty group): log2n <= 13: one group; otherwise a first group of
// log2n - r stages followed by the r = log2n - 13 remaining stages (at least 4) in balanced groups
// of at most 9. A pure function of n: every backend rounds at the same points, bit for bit.
std::vector<int> stage_groups(int log2n);
inline bool is_power_of_two(std::int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

}  // namespace fwht
