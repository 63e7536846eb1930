// What a transform computes: data type, normalization, stabilization, algorithm, layout.
#pragma once

#include <cstdint>
#include <string_view>

namespace fwht {

// Storage type of the data. Host types: f64 = double, f32 = float, f16 = fwht::f16 (IEEE binary16),
// bf16 = fwht::bf16 (bfloat16), i32 = std::int32_t, i64 = std::int64_t.
enum class DType { f64, f32, f16, bf16, i32, i64 };

// none: y = H x.  orthonormal: y = H x / sqrt(n).  inverse: y = H x / n (so inverse(none(x)) == x).
// Integer types accept none and inverse (exact division; see Options::check_overflow).
enum class Normalization { none, orthonormal, inverse };

// Compensated butterflies (Andersson 2025), floating types only. Each element carries an error term
// e; the output is the value vector (as in Kahan summation, the last error terms are dropped).
enum class Stabilization { none, kahan, neumaier };

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
inline bool is_power_of_two(std::int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

}  // namespace fwht
