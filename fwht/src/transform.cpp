// One-shot transforms: a plan for a single contiguous vector, executed once.
#include "fwht/transform.hpp"

#include "fwht/plan.hpp"
#include "pagh/error.hpp"

namespace fwht {

template <class T>
void transform(std::span<T> x, const Options& options) {
  Plan plan({.n = static_cast<std::int64_t>(x.size())}, dtype_of<T>(), options);
  plan.execute(x);
}

template <class T>
void transform(std::span<const T> in, std::span<T> out, const Options& options) {
  if (in.size() != out.size())
    throw pagh::Error("fwht::transform", "input has " + std::to_string(in.size()) + " elements but output has " +
                                             std::to_string(out.size()));
  Plan plan({.n = static_cast<std::int64_t>(in.size())}, dtype_of<T>(), options);
  plan.execute(in, out);
}

#define FWHT_DEFINE_TRANSFORM(T)                                         \
  template void transform<T>(std::span<T>, const Options&);              \
  template void transform<T>(std::span<const T>, std::span<T>, const Options&);
FWHT_DEFINE_TRANSFORM(double)
FWHT_DEFINE_TRANSFORM(float)
FWHT_DEFINE_TRANSFORM(f16)
FWHT_DEFINE_TRANSFORM(bf16)
FWHT_DEFINE_TRANSFORM(std::int32_t)
FWHT_DEFINE_TRANSFORM(std::int64_t)
#undef FWHT_DEFINE_TRANSFORM

}  // namespace fwht
