// The CPU engine's pointwise multiply-accumulate (cpu_engine.hpp), P[h] += a[h] * b[h] over two
// transformed sketch vectors, zeroing them as it reads them (for the next line's scatter: they are
// in L1 then, a clearing pass of its own would read them from L2 again): compiled for AVX-512, AVX2 and the baseline and chosen when the
// library is loaded (GCC target_clones: the README's default build needs no -march=native).
// Included by one translation unit (compress.cpp): the clones have internal linkage.
#pragma once

#include <cstdint>

// Each P[h] takes one rounded product and one rounded sum, never a fused multiply-add, whatever the
// instruction set: results are the same on every machine and equal the reference's.
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")

namespace pagh::cpu_sketch {
namespace {

template <class T>
inline void multiply_accumulate_clear_loop(T* __restrict P, T* __restrict a, T* __restrict b, std::int64_t n) {
  for (std::int64_t h = 0; h < n; ++h) {
    P[h] += a[h] * b[h];
    a[h] = T(0);
    b[h] = T(0);
  }
}

// P, a and b must not overlap.
__attribute__((target_clones("avx512f", "avx2", "default"))) void multiply_accumulate_clear(double* P, double* a, double* b,
                                                                                           std::int64_t n) {
  multiply_accumulate_clear_loop(P, a, b, n);
}
__attribute__((target_clones("avx512f", "avx2", "default"))) void multiply_accumulate_clear(float* P, float* a, float* b,
                                                                                           std::int64_t n) {
  multiply_accumulate_clear_loop(P, a, b, n);
}

}  // namespace
}  // namespace pagh::cpu_sketch

#pragma GCC pop_options
