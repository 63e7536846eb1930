// Run-time choice of the kernels' instruction set.
#include <atomic>

#include "fwht/cpu_isa.hpp"

#include "common/arithmetic.hpp"
#include "cpu/kernels.hpp"

namespace fwht::cpu {
namespace {

// fwht::limit_cpu_isa's cap (the tests run every set on the widest machine).
std::atomic<Isa> g_cap{Isa::avx512};
Isa cap() { return g_cap.load(std::memory_order_relaxed); }

template <class T, bool kFloating, bool kPlain>
struct Table {
#define FWHT_KERNELS_OF(NS)                                                                              \
  static Kernels<T> NS() {                                                                               \
    Kernels<T> k{};                                                                                       \
    k.folklore[static_cast<int>(Stabilization::none)] = &NS::folklore_stages<T, Stabilization::none>;    \
    if constexpr (kFloating) {                                                                            \
      k.folklore[static_cast<int>(Stabilization::kahan)] = &NS::folklore_stages<T, Stabilization::kahan>; \
      k.folklore[static_cast<int>(Stabilization::neumaier)] =                                             \
          &NS::folklore_stages<T, Stabilization::neumaier>;                                              \
    }                                                                                                     \
    k.alman_rao = &NS::alman_rao_stages<T>;                                                              \
    if constexpr (kPlain) k.plain = &NS::plain_stages<T>, k.plain_columns = &NS::plain_columns<T>;     \
    if constexpr (kPlain) NS::small_transforms<T>(k.small);                                            \
    if constexpr (kPlain && kFloating) k.plain_product = &NS::plain_product<T>;                        \
    k.isa = #NS;                                                                                         \
    return k;                                                                                             \
  }
  FWHT_KERNELS_OF(generic)
#if defined(FWHT_HAVE_AVX2_KERNELS)
  FWHT_KERNELS_OF(avx2)
#endif
#if defined(FWHT_HAVE_AVX512_KERNELS)
  FWHT_KERNELS_OF(avx512)
#endif
#undef FWHT_KERNELS_OF

  static Kernels<T> of(Isa isa) {
    if constexpr (kPlain) {
#if defined(FWHT_HAVE_AVX512_KERNELS)
      if (isa == Isa::avx512) return avx512();
#endif
#if defined(FWHT_HAVE_AVX2_KERNELS)
      if (isa == Isa::avx2) return avx2();
#endif
    }
    return generic();
  }
};

template <class T>
Kernels<T> best() {
  const Isa limit = cap();
  for (Isa isa : {Isa::avx512, Isa::avx2})
    if (isa <= limit && isa_available(isa)) return kernels_of<T>(isa);
  return kernels_of<T>(Isa::generic);
}

}  // namespace

}  // namespace fwht::cpu

namespace fwht {

void limit_cpu_isa(CpuIsa widest) {
  cpu::g_cap.store(widest == CpuIsa::generic ? cpu::Isa::generic : widest == CpuIsa::avx2 ? cpu::Isa::avx2 : cpu::Isa::avx512,
                   std::memory_order_relaxed);
}

CpuIsa cpu_isa() {
  for (cpu::Isa isa : {cpu::Isa::avx512, cpu::Isa::avx2})
    if (isa <= cpu::g_cap.load(std::memory_order_relaxed) && cpu::isa_available(isa)) return isa == cpu::Isa::avx512 ? CpuIsa::avx512 : CpuIsa::avx2;
  return CpuIsa::generic;
}

}  // namespace fwht

namespace fwht::cpu {

bool isa_available(Isa isa) {
  switch (isa) {
    case Isa::generic: return true;
    case Isa::avx2:
#if defined(FWHT_HAVE_AVX2_KERNELS) && (defined(__x86_64__) || defined(__i386__))
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
      return false;
#endif
    case Isa::avx512:
      // libgcc's check includes the OS's support of the AVX-512 register state (XGETBV).
#if defined(FWHT_HAVE_AVX512_KERNELS) && (defined(__x86_64__) || defined(__i386__))
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl");
#else
      return false;
#endif
  }
  return false;
}

template <> Kernels<double> kernels_of<double>(Isa isa) { return Table<double, true, true>::of(isa); }
template <> Kernels<float> kernels_of<float>(Isa isa) { return Table<float, true, true>::of(isa); }
template <> Kernels<std::uint32_t> kernels_of<std::uint32_t>(Isa isa) { return Table<std::uint32_t, false, true>::of(isa); }
template <> Kernels<std::uint64_t> kernels_of<std::uint64_t>(Isa isa) { return Table<std::uint64_t, false, true>::of(isa); }
template <> Kernels<detail::Rounded<f16>> kernels_of<detail::Rounded<f16>>(Isa) { return Table<detail::Rounded<f16>, true, false>::generic(); }
template <> Kernels<detail::Rounded<bf16>> kernels_of<detail::Rounded<bf16>>(Isa) { return Table<detail::Rounded<bf16>, true, false>::generic(); }
template <> Kernels<detail::int128> kernels_of<detail::int128>(Isa) { return Table<detail::int128, false, false>::generic(); }

template <> Kernels<double> select_kernels<double>() { return best<double>(); }
template <> Kernels<float> select_kernels<float>() { return best<float>(); }
template <> Kernels<std::uint32_t> select_kernels<std::uint32_t>() { return best<std::uint32_t>(); }
template <> Kernels<std::uint64_t> select_kernels<std::uint64_t>() { return best<std::uint64_t>(); }
template <> Kernels<detail::Rounded<f16>> select_kernels<detail::Rounded<f16>>() { return kernels_of<detail::Rounded<f16>>(Isa::generic); }
template <> Kernels<detail::Rounded<bf16>> select_kernels<detail::Rounded<bf16>>() { return kernels_of<detail::Rounded<bf16>>(Isa::generic); }
template <> Kernels<detail::int128> select_kernels<detail::int128>() { return kernels_of<detail::int128>(Isa::generic); }

}  // namespace fwht::cpu
