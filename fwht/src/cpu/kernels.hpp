// The CPU stage kernels, per instruction set, and the run-time choice between them.
#pragma once

#include <cstdint>
#include <type_traits>

#include "fwht/options.hpp"
#include "fwht/transform_product.hpp"

namespace fwht::cpu {

// Types with vector kernels; other compute types (the emulated 16-bit formats, __int128) run the
// same code one lane at a time, in the baseline build only.
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

// Plain folklore stages k0 <= k < k1 on every block of 2^k1 elements of x[0, len), register- and
// cache-blocked (cpu/plain_stages.hpp). With k0 == 0 the blocks are read from src (src == x: in
// place; otherwise src must not overlap x); with k0 > 0, src must equal x and 2^k0 be at least the
// vector width. Same results as folklore[none], bit for bit.
template <class T>
using PlainFn = void (*)(T* x, const T* src, std::int64_t len, int k0, int k1);
// Plain stages s <= k < s + r (r <= 3, 2^s at least the vector width) on columns [0, columns) of
// the 2^(s+r)-element block at x (rows 2^s apart; columns a multiple of the vector width): the top
// pass of a large transform, split by columns across threads.
template <class T>
using PlainColumnsFn = void (*)(T* x, std::int64_t columns, int s, int r);

// Fills x and y through fill, transforms both and adds their product to P (fwht/transform_product.hpp),
// n = 2^L each.
template <class T>
using PlainProductFn = void (*)(T* P, T* x, T* y, int L, const BlockFill<T>& fill);

// A whole unnormalized transform of 2^L elements, L < kSmallLogs, from in to out (the same pointer:
// in place), its sizes known at compile time: a small single plan's execute() calls it and nothing
// else (at 2^4..2^7 a call is 10-20 ns, and each level of dispatch showed in it).
using SmallFn = void (*)(const void* in, void* out);
inline constexpr int kSmallLogs = 11;

template <class T>
struct Kernels {
  FolkloreFn<T> folklore[3];  // indexed by Stabilization
  AlmanRaoFn<T> alman_rao;
  PlainFn<T> plain;           // native types only, else null
  PlainColumnsFn<T> plain_columns;
  PlainProductFn<T> plain_product;  // float and double only, else null
  SmallFn small[kSmallLogs];        // native types only, else null; indexed by L
  const char* isa;
};

// Instruction sets with kernels, in increasing order of preference.
enum class Isa { generic, avx2, avx512 };
// Whether this build has the kernels of `isa` and this CPU (and OS) can run them.
bool isa_available(Isa isa);
// The kernels of one available instruction set (the emulated and 128-bit types: generic only).
template <class T> Kernels<T> kernels_of(Isa isa);
// The kernels of the best available instruction set (fwht::limit_cpu_isa caps the choice, for
// tests of the narrower kernels on wider machines).
template <class T> Kernels<T> select_kernels();

#define FWHT_DECLARE_ISA_KERNELS(isa)                                                        \
  namespace isa {                                                                            \
  template <class T, Stabilization St> void folklore_stages(T*, T*, std::int64_t, int, int); \
  template <class T> void alman_rao_stages(T*, std::int64_t, int, int, int, std::int64_t);   \
  template <class T> void plain_stages(T*, const T*, std::int64_t, int, int);               \
  template <class T> void plain_columns(T*, std::int64_t, int, int);                        \
  template <class T> void plain_product(T*, T*, T*, int, const BlockFill<T>&);              \
  template <class T> void small_transforms(SmallFn*);                                        \
  }
FWHT_DECLARE_ISA_KERNELS(generic)
FWHT_DECLARE_ISA_KERNELS(avx2)
FWHT_DECLARE_ISA_KERNELS(avx512)
#undef FWHT_DECLARE_ISA_KERNELS

}  // namespace fwht::cpu
