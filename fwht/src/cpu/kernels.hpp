// The CPU stage kernels, per instruction set, and the run-time choice between them.
#pragma once

#include <cstdint>
#include <type_traits>

#include "fwht/options.hpp"

namespace fwht::cpu {

// Types with 32-byte vector kernels; other compute types (the emulated 16-bit formats, __int128)
// run the same code one lane at a time, in the baseline build only.
template <class T>
inline constexpr bool is_native = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                  std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t>;

// Applies folklore stages k0 <= k < k1 (stride 2^k) to every block of 2^k1 elements of x[0, len).
// e holds the error terms of stabilized variants (unused, may be null, for Stabilization::none).
// If k0 > 0 then 2^k0 must be at least the vector width (the in-register stages start at 0).
template <class T>
using FolkloreFn = void (*)(T* x, T* e, std::int64_t len, int k0, int k1);
// Alman-Rao stages k0 <= k < k1: folklore below r, the prescale (element i of x is global element
// prescale_offset + i; skipped if prescale_offset < 0) when r lies in [k0, k1), then H8 stages at
// k = r, r+3, ... (k1 - max(k0, r) must be a multiple of 3).
template <class T>
using AlmanRaoFn = void (*)(T* x, std::int64_t len, int k0, int k1, int r, std::int64_t prescale_offset);

template <class T>
struct Kernels {
  FolkloreFn<T> folklore[3];  // indexed by Stabilization
  AlmanRaoFn<T> alman_rao;
  const char* isa;
};

// Picks AVX2 kernels when the CPU has AVX2 (and the build has them), else the baseline ones.
template <class T> Kernels<T> select_kernels();

#define FWHT_DECLARE_ISA_KERNELS(isa)                                                        \
  namespace isa {                                                                            \
  template <class T, Stabilization St> void folklore_stages(T*, T*, std::int64_t, int, int); \
  template <class T> void alman_rao_stages(T*, std::int64_t, int, int, int, std::int64_t);   \
  }
FWHT_DECLARE_ISA_KERNELS(generic)
FWHT_DECLARE_ISA_KERNELS(avx2)
#undef FWHT_DECLARE_ISA_KERNELS

}  // namespace fwht::cpu
