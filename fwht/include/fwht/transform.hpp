// One-shot CPU transforms: the simple case. Each call plans (and allocates scratch) and executes;
// use fwht::Plan for repeated or batched work.
//
//   std::vector<float> x = ...;             // x.size() must be a power of two
//   fwht::transform(std::span<float>(x));   // x <- H x, in place
#pragma once

#include <cstdint>
#include <span>

#include "fwht/half.hpp"
#include "fwht/options.hpp"

namespace fwht {

// T is one of double, float, fwht::f16, fwht::bf16, std::int32_t, std::int64_t.
template <class T> void transform(std::span<T> x, const Options& options = {});
template <class T> void transform(std::span<const T> in, std::span<T> out, const Options& options = {});

#define FWHT_DECLARE_TRANSFORM(T)                                               \
  extern template void transform<T>(std::span<T>, const Options&);              \
  extern template void transform<T>(std::span<const T>, std::span<T>, const Options&);
FWHT_DECLARE_TRANSFORM(double)
FWHT_DECLARE_TRANSFORM(float)
FWHT_DECLARE_TRANSFORM(f16)
FWHT_DECLARE_TRANSFORM(bf16)
FWHT_DECLARE_TRANSFORM(std::int32_t)
FWHT_DECLARE_TRANSFORM(std::int64_t)
#undef FWHT_DECLARE_TRANSFORM

}  // namespace fwht
