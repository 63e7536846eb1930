// Scalar O(n log n) reference: one loop per stage, each butterfly written exactly as specified.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/arithmetic.hpp"
#include "common/validate.hpp"
#include "fwht/plan.hpp"
#include "fwht/reference.hpp"
#include "pagh/error.hpp"

namespace fwht::reference {
namespace {

using detail::int128;
using detail::Rounded;

constexpr const char* kWhere = "fwht::reference::transform";

// Butterfly on (A, B) with error terms (Andersson 2025). Kahan:
//   A' = (A+B) - (eA+eB)   e'A = ((A'-A)-B) + (eA+eB)
//   B' = (A-B) - (eA-eB)   e'B = ((B'-A)+B) + (eA-eB)
template <class C>
void kahan(C& A, C& B, C& eA, C& eB) {
  const C a = A, b = B, ea = eA, eb = eB;
  const C a2 = (a + b) - (ea + eb);
  const C b2 = (a - b) - (ea - eb);
  A = a2;
  B = b2;
  eA = ((a2 - a) - b) + (ea + eb);
  eB = ((b2 - a) + b) + (ea - eb);
}

// Neumaier: the same A', B'; each error is recovered summing the two largest-magnitude terms first.
template <class C>
void neumaier(C& A, C& B, C& eA, C& eB) {
  using detail::abs_value;
  const C a = A, b = B, ea = eA, eb = eB;
  const C a2 = (a + b) - (ea + eb);
  const C b2 = (a - b) - (ea - eb);
  const C abs_a = abs_value(a), abs_b = abs_value(b), abs_a2 = abs_value(a2), abs_b2 = abs_value(b2);
  C new_ea, new_eb;
  if (abs_b <= abs_a2 && abs_b <= abs_a)
    new_ea = ((a2 - a) - b) + (ea + eb);
  else if (abs_a <= abs_a2 && abs_a <= abs_b)
    new_ea = ((a2 - b) - a) + (ea + eb);
  else
    new_ea = ((-a - b) + a2) + (ea + eb);
  if (abs_b <= abs_b2 && abs_b <= abs_a)
    new_eb = ((b2 - a) + b) + (ea - eb);
  else if (abs_a <= abs_b2 && abs_a <= abs_b)
    new_eb = ((b2 + b) - a) + (ea - eb);
  else
    new_eb = ((-a + b) + b2) + (ea - eb);
  A = a2;
  B = b2;
  eA = new_ea;
  eB = new_eb;
}

// Error terms start at zero; with a stabilization, e receives them after the last stage.
template <class C>
void folklore(std::span<C> x, Stabilization stabilization, std::span<C> e) {
  const std::size_t n = x.size();
  for (std::size_t h = 1; h < n; h *= 2) {
    for (std::size_t i = 0; i < n; i += 2 * h) {
      for (std::size_t j = i; j < i + h; ++j) {
        if (stabilization == Stabilization::none) {
          const C a = x[j], b = x[j + h];
          x[j] = a + b;
          x[j + h] = a - b;
        } else if constexpr (detail::is_floating_compute<C>) {
          if (stabilization == Stabilization::kahan)
            kahan(x[j], x[j + h], e[j], e[j + h]);
          else
            neumaier(x[j], x[j + h], e[j], e[j + h]);
        }
      }
    }
  }
}

// wide_onchip: per stage group (fwht::stage_groups), widen every element exactly, apply the group's
// stages in the wide type, round every element back once. wide_carry: a later group starts from
// the rounded value plus the previous group's quantized residual (detail::Wide::resume).
template <class C>
void wide_groups(std::vector<C>& x, bool carry) {
  if constexpr (detail::has_wide<C>) {
    using Wd = detail::Wide<C>;
    const std::size_t n = x.size();
    std::vector<typename Wd::type> w(n);
    std::vector<int> q(n, 0);
    std::size_t h = 1;
    for (int g : stage_groups(detail::log2_of(static_cast<std::int64_t>(n)))) {
      for (std::size_t i = 0; i < n; ++i) w[i] = carry ? Wd::resume(x[i], q[i]) : Wd::widen(x[i]);
      for (int k = 0; k < g; ++k, h *= 2)
        for (std::size_t i = 0; i < n; i += 2 * h)
          for (std::size_t j = i; j < i + h; ++j) {
            const auto a = w[j], b = w[j + h];
            w[j] = a + b;
            w[j + h] = a - b;
          }
      for (std::size_t i = 0; i < n; ++i) x[i] = Wd::narrow(w[i]);
      if (carry)
        for (std::size_t i = 0; i < n; ++i) q[i] = Wd::residual(w[i], x[i]);
    }
  }
}

// The 23-operation H8 kernel on (a..h); inputs b..h arrive prescaled by 2.
template <class C>
void h8(C& a, C& b, C& c, C& d, C& e, C& f, C& g, C& h) {
  const C B1 = b + c, B2 = d + h, B3 = f + g;
  const C tot = detail::halve(((B1 + B2) + B3) + e);
  const C diff = a - tot;
  const C D = diff + d, E = diff + e, H = diff + h;
  const C o0 = a + tot, o1 = (E + c) + g, o2 = (E + b) + f, o3 = E + B2;
  const C o4 = D + B1, o5 = (H + c) + f, o6 = (H + b) + g, o7 = D + B3;
  a = o0, b = o1, c = o2, d = o3, e = o4, f = o5, g = o6, h = o7;
}

template <class C>
void alman_rao(std::vector<C>& x) {
  const std::size_t n = x.size();
  const int r = detail::log2_of(static_cast<std::int64_t>(n)) % 3;
  for (std::size_t h = 1; h < (std::size_t{1} << r); h *= 2)
    for (std::size_t i = 0; i < n; i += 2 * h)
      for (std::size_t j = i; j < i + h; ++j) {
        const C a = x[j], b = x[j + h];
        x[j] = a + b;
        x[j + h] = a - b;
      }
  for (std::size_t i = 0; i < n; ++i) x[i] = detail::times_pow2(x[i], detail::nonzero_octal_digits(i >> r));
  for (std::size_t m = std::size_t{1} << r; m < n; m *= 8)
    for (std::size_t base = 0; base < n; base += 8 * m)
      for (std::size_t j = base; j < base + m; ++j)
        h8(x[j], x[j + m], x[j + 2 * m], x[j + 3 * m], x[j + 4 * m], x[j + 5 * m], x[j + 6 * m], x[j + 7 * m]);
}

template <class C>
void transform_compute(std::vector<C>& x, const Options& o) {
  if (o.algorithm == Algorithm::alman_rao) {
    alman_rao(x);
  } else if (is_wide(o.stabilization)) {
    wide_groups(x, o.stabilization == Stabilization::wide_carry);
  } else {
    std::vector<C> e(o.stabilization == Stabilization::none ? 0 : x.size(), C{});
    folklore(std::span<C>(x), o.stabilization, std::span<C>(e));
  }
}

template <class C>
void with_errors(std::span<C> x, std::span<C> e, Stabilization stabilization) {
  const char* where = "fwht::reference::transform_with_errors";
  detail::validate(static_cast<std::int64_t>(x.size()), dtype_of<C>(), {.stabilization = stabilization}, where);
  if (stabilization != Stabilization::kahan && stabilization != Stabilization::neumaier)
    throw pagh::Error(where, "needs stabilization kahan or neumaier");
  if (e.size() != x.size()) throw pagh::Error(where, "error vector size differs from the data size");
  std::fill(e.begin(), e.end(), C{});
  folklore(x, stabilization, e);
}

// Floating storage S, computing in C, converting with to_c / from_c.
template <class C, class S, class ToC, class FromC>
void floating(std::span<S> x, const Options& o, ToC to_c, FromC from_c) {
  std::vector<C> w(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) w[i] = to_c(x[i]);
  transform_compute(w, o);
  if (o.normalization != Normalization::none) {
    const C s = detail::scale_in<C>(detail::normalization_factor(o.normalization, static_cast<std::int64_t>(x.size())));
    for (C& v : w) v = v * s;
  }
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = from_c(w[i]);
}

template <class S>
void sixteen_bit(std::span<S> x, const Options& o) {
  if (o.compute == Compute::f32)
    floating<float>(x, o, [](S v) { return static_cast<float>(v); }, [](float v) { return S(v); });
  else
    floating<Rounded<S>>(
        x, o, [](S v) { return Rounded<S>{static_cast<float>(v)}; }, [](Rounded<S> v) { return S(v.v); });
}

// Integers: wrapping arithmetic (exact modulo 2^w), or exact 128-bit arithmetic checked on store.
template <class S>
void integer(std::span<S> x, const Options& o) {
  using U = std::make_unsigned_t<S>;
  const auto n = static_cast<std::int64_t>(x.size());
  const bool inverse = o.normalization == Normalization::inverse;
  if (!o.check_overflow) {
    std::vector<U> w(x.begin(), x.end());
    transform_compute(w, o);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = inverse ? static_cast<S>(w[i]) / n : static_cast<S>(w[i]);
    return;
  }
  std::vector<int128> w(x.begin(), x.end());
  transform_compute(w, o);
  for (std::size_t i = 0; i < x.size(); ++i) {
    int128 v = w[i];
    if (inverse) {
      if (v % n != 0) throw pagh::Error(kWhere, "inverse normalization is inexact at element " + std::to_string(i));
      v /= n;
    }
    if (v < std::numeric_limits<S>::min() || v > std::numeric_limits<S>::max())
      throw pagh::Error(kWhere, "integer overflow at element " + std::to_string(i));
    x[i] = static_cast<S>(v);
  }
}

template <class S>
void check(std::span<S> x, const Options& o) {
  detail::validate(static_cast<std::int64_t>(x.size()), dtype_of<S>(), o, kWhere);
}

}  // namespace

void transform_with_errors(std::span<double> x, std::span<double> e, Stabilization s) { with_errors(x, e, s); }
void transform_with_errors(std::span<float> x, std::span<float> e, Stabilization s) { with_errors(x, e, s); }

void transform(std::span<double> x, const Options& o) {
  check(x, o);
  floating<double>(x, o, [](double v) { return v; }, [](double v) { return v; });
}
void transform(std::span<float> x, const Options& o) {
  check(x, o);
  floating<float>(x, o, [](float v) { return v; }, [](float v) { return v; });
}
void transform(std::span<f16> x, const Options& o) {
  check(x, o);
  sixteen_bit(x, o);
}
void transform(std::span<bf16> x, const Options& o) {
  check(x, o);
  sixteen_bit(x, o);
}
void transform(std::span<std::int32_t> x, const Options& o) {
  check(x, o);
  integer(x, o);
}
void transform(std::span<std::int64_t> x, const Options& o) {
  check(x, o);
  integer(x, o);
}

}  // namespace fwht::reference
