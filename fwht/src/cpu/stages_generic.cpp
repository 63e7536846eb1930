// Stage kernels for baseline x86-64 (or any target), plus the one-lane kernels of the emulated
// 16-bit formats (Compute::storage) and of checked integers (__int128).
#define FWHT_ISA generic
#define FWHT_VECTOR_BYTES 16  // SSE2, the baseline of x86-64
#include "common/arithmetic.hpp"
#include "cpu/stages.hpp"

namespace fwht::cpu::generic {

template <class F>
struct ScalarMath<detail::Rounded<F>> {
  using R = detail::Rounded<F>;
  static R abs(R x) { return detail::abs_value(x); }
  static R halve(R x) { return detail::halve(x); }
  static R times_pow2(R x, int k) { return detail::times_pow2(x, k); }
};
template <>
struct ScalarMath<detail::int128> {
  static detail::int128 halve(detail::int128 x) { return detail::halve(x); }
  static detail::int128 times_pow2(detail::int128 x, int k) { return detail::times_pow2(x, k); }
};

FWHT_INSTANTIATE_NATIVE
FWHT_INSTANTIATE_FLOATING(detail::Rounded<f16>)
FWHT_INSTANTIATE_FLOATING(detail::Rounded<bf16>)
FWHT_INSTANTIATE_INTEGER(detail::int128)

}  // namespace fwht::cpu::generic
