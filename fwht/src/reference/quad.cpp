// Binary128 (__float128) transform: the ground truth of accuracy studies. Arithmetic only (+, -, *),
// so no libquadmath is needed; 1/sqrt(n) is built from powers of two and sqrt(2) by Newton steps.
#include <bit>
#include <string>
#include <vector>

#include "fwht/reference.hpp"
#include "pagh/error.hpp"

namespace fwht::reference {
namespace {

using quad = __float128;

quad pow2(int k) {  // 2^k for |k| < 16000, exact
  quad r = 1;
  const quad step = k >= 0 ? quad(2) : quad(0.5);
  for (int i = 0; i < (k >= 0 ? k : -k); ++i) r *= step;
  return r;
}

}  // namespace

void transform_quad(std::span<quad> x, Normalization normalization, Algorithm algorithm) {
  const auto n = static_cast<std::int64_t>(x.size());
  if (!is_power_of_two(n))
    throw pagh::Error("fwht::reference::transform_quad", "n = " + std::to_string(n) + " is not a power of two");
  const int L = std::countr_zero(static_cast<std::uint64_t>(n));
  const std::size_t un = x.size();
  if (algorithm == Algorithm::folklore) {
    for (std::size_t h = 1; h < un; h *= 2)
      for (std::size_t i = 0; i < un; i += 2 * h)
        for (std::size_t j = i; j < i + h; ++j) {
          const quad a = x[j], b = x[j + h];
          x[j] = a + b;
          x[j + h] = a - b;
        }
  } else {
    // Alman-Rao in binary128: used only to study that algorithm's own rounding; see reference.cpp.
    const int r = L % 3;
    for (std::size_t h = 1; h < (std::size_t{1} << r); h *= 2)
      for (std::size_t i = 0; i < un; i += 2 * h)
        for (std::size_t j = i; j < i + h; ++j) {
          const quad a = x[j], b = x[j + h];
          x[j] = a + b;
          x[j + h] = a - b;
        }
    for (std::size_t i = 0; i < un; ++i) {
      int digits = 0;
      for (std::size_t v = i >> r; v != 0; v >>= 3) digits += (v & 7u) != 0;
      x[i] *= pow2(digits);
    }
    for (std::size_t m = std::size_t{1} << r; m < un; m *= 8)
      for (std::size_t base = 0; base < un; base += 8 * m)
        for (std::size_t j = base; j < base + m; ++j) {
          quad* p = &x[j];
          const quad a = p[0], b = p[m], c = p[2 * m], d = p[3 * m], e = p[4 * m], f = p[5 * m], g = p[6 * m],
                     h = p[7 * m];
          const quad B1 = b + c, B2 = d + h, B3 = f + g;
          const quad tot = (((B1 + B2) + B3) + e) * quad(0.5);
          const quad diff = a - tot, D = diff + d, E = diff + e, H = diff + h;
          p[0] = a + tot, p[m] = (E + c) + g, p[2 * m] = (E + b) + f, p[3 * m] = E + B2;
          p[4 * m] = D + B1, p[5 * m] = (H + c) + f, p[6 * m] = (H + b) + g, p[7 * m] = D + B3;
        }
  }
  if (normalization == Normalization::none) return;
  quad scale = pow2(-L);
  if (normalization == Normalization::orthonormal) {
    quad sqrt2 = 1.4142135623730951;  // double-precision start; two Newton steps reach binary128
    for (int i = 0; i < 2; ++i) sqrt2 = (sqrt2 + quad(2) / sqrt2) * quad(0.5);
    scale = (L % 2 == 0) ? pow2(-L / 2) : pow2(-(L + 1) / 2) * sqrt2;
  }
  for (quad& v : x) v *= scale;
}

}  // namespace fwht::reference
