// Run-time choice of the kernels' instruction set.
#include <cstdlib>
#include <string_view>

#include "common/arithmetic.hpp"
#include "cpu/kernels.hpp"

namespace fwht::cpu {
namespace {

bool forced_generic() {
  const char* isa = std::getenv("PAGH_FWHT_ISA");
  return isa != nullptr && std::string_view(isa) == "generic";
}

// PAGH_FWHT_ISA=generic forces the baseline kernels (the tests run both sets on AVX2 machines).
bool cpu_has_avx2() {
#if defined(FWHT_HAVE_AVX2_KERNELS) && (defined(__x86_64__) || defined(__i386__))
  static const bool has = __builtin_cpu_supports("avx2") && !forced_generic();
  return has;
#else
  return false;
#endif
}

template <class T, bool kFloating>
Kernels<T> kernels_of_generic() {
  Kernels<T> k{};
  k.folklore[static_cast<int>(Stabilization::none)] = &generic::folklore_stages<T, Stabilization::none>;
  if constexpr (kFloating) {
    k.folklore[static_cast<int>(Stabilization::kahan)] = &generic::folklore_stages<T, Stabilization::kahan>;
    k.folklore[static_cast<int>(Stabilization::neumaier)] = &generic::folklore_stages<T, Stabilization::neumaier>;
  }
  k.alman_rao = &generic::alman_rao_stages<T>;
  k.isa = "generic";
  return k;
}

#if defined(FWHT_HAVE_AVX2_KERNELS)
template <class T, bool kFloating>
Kernels<T> kernels_of_avx2() {
  Kernels<T> k{};
  k.folklore[static_cast<int>(Stabilization::none)] = &avx2::folklore_stages<T, Stabilization::none>;
  if constexpr (kFloating) {
    k.folklore[static_cast<int>(Stabilization::kahan)] = &avx2::folklore_stages<T, Stabilization::kahan>;
    k.folklore[static_cast<int>(Stabilization::neumaier)] = &avx2::folklore_stages<T, Stabilization::neumaier>;
  }
  k.alman_rao = &avx2::alman_rao_stages<T>;
  k.isa = "avx2";
  return k;
}
#endif

template <class T, bool kFloating>
Kernels<T> native() {
#if defined(FWHT_HAVE_AVX2_KERNELS)
  if (cpu_has_avx2()) return kernels_of_avx2<T, kFloating>();
#endif
  return kernels_of_generic<T, kFloating>();
}

}  // namespace

template <> Kernels<double> select_kernels<double>() { return native<double, true>(); }
template <> Kernels<float> select_kernels<float>() { return native<float, true>(); }
template <> Kernels<std::uint32_t> select_kernels<std::uint32_t>() { return native<std::uint32_t, false>(); }
template <> Kernels<std::uint64_t> select_kernels<std::uint64_t>() { return native<std::uint64_t, false>(); }
template <> Kernels<detail::Rounded<f16>> select_kernels<detail::Rounded<f16>>() { return kernels_of_generic<detail::Rounded<f16>, true>(); }
template <> Kernels<detail::Rounded<bf16>> select_kernels<detail::Rounded<bf16>>() { return kernels_of_generic<detail::Rounded<bf16>, true>(); }
template <> Kernels<detail::int128> select_kernels<detail::int128>() { return kernels_of_generic<detail::int128, false>(); }

}  // namespace fwht::cpu
