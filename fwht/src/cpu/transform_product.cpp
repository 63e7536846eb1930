// fwht::TransformProduct: the widest available instruction set's plain_product kernel
// (cpu/plain_stages.hpp), picked once per object.
#include "fwht/transform_product.hpp"

#include <bit>
#include <string>

#include "cpu/kernels.hpp"
#include "fwht/options.hpp"
#include "pagh/error.hpp"

namespace fwht {

template <class T>
TransformProduct<T>::TransformProduct(std::int64_t n) : n_(n) {
  if (!is_power_of_two(n))
    throw pagh::Error("fwht::TransformProduct", "n = " + std::to_string(n) + " is not a power of two");
  log2n_ = std::countr_zero(static_cast<std::uint64_t>(n));
  kernel_ = cpu::select_kernels<T>().plain_product;
}

template <class T>
void TransformProduct<T>::accumulate(T* P, T* x, T* y, const BlockFill<T>& fill) const {
  kernel_(P, x, y, log2n_, fill);
}

template class TransformProduct<float>;
template class TransformProduct<double>;

}  // namespace fwht
