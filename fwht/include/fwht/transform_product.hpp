// The product of two transforms added into a third vector, P[h] += (H x)[h] * (H y)[h], with x and y
// written by the caller one cache-sized block at a time, just before that block's stages run: the
// CPU loop of a compressed matrix product (pagh's sketch engine), where x and y are sparse sketch
// vectors rebuilt for every inner index. Fused this way, the caller's writes land in L1 where the
// first stages read them, and the last pass multiplies and accumulates instead of storing H x and
// H y, and zeroes x and y for the next call while it reads them: neither the scatter, nor clearing
// the vectors, nor the multiply-accumulate takes a pass over them of its own.
//
// Bits: exactly those of the reference (fwht::reference::transform) applied to x and y, followed by
// P[h] = P[h] + a[h] * b[h] with one rounded product and one rounded sum (no fused multiply-add),
// on every instruction set. Kernels: the widest instruction set that plans use (fwht::limit_cpu_isa).
#pragma once

#include <cstdint>

namespace fwht {

template <class T>
struct BlockFill {
  // Writes elements [offset, offset + count) of vector `which` (0: x, 1: y) to block[0, count),
  // which holds zeros (x and y are zero on entry to accumulate). Called for ascending offsets, all
  // of x's blocks before y's, each element exactly once; a call may also write later elements of
  // the same vector (block + count onward), which later calls must then leave as they are.
  void (*fn)(void* context, int which, T* block, std::int64_t offset, std::int64_t count);
  void* context;
  // Optional: called once, after the last call of fn and before anything is added to P; false
  // leaves P as it is (a caller that learns from its fills that the product is not needed).
  bool (*wanted)(void* context) = nullptr;
};

// T: float or double.
template <class T>
class TransformProduct {
 public:
  // n: a power of two (pagh::Error otherwise).
  explicit TransformProduct(std::int64_t n);
  std::int64_t size() const { return n_; }
  // P, x and y hold n elements each and do not overlap; x and y must be zero, and are left zero.
  void accumulate(T* P, T* x, T* y, const BlockFill<T>& fill) const;

 private:
  std::int64_t n_;
  int log2n_;
  void (*kernel_)(T*, T*, T*, int, const BlockFill<T>&);
};

extern template class TransformProduct<float>;
extern template class TransformProduct<double>;

}  // namespace fwht
