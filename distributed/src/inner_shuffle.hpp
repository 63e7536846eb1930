// The byte-range read's shuffle by inner index (mpi_read.cpp): the entries a rank parsed go to the
// rank that owns their k. Owners hold contiguous inner ranges, balanced by the entries of A and B.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace pagh::mpi::detail {

struct Triplet {
  std::int64_t row, col;
  double value;
};

// Leaves the elements of resize() unset: the entry buffers are written in full before they are read,
// and clearing hundreds of MB first would be a pass of its own.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using Triplets = std::vector<Triplet, UninitializedAllocator<Triplet>>;

enum class Inner { column, row };  // k of an entry of A (its column) or of B (its row)

// Collective. Bounds of the ranks' inner ranges (size + 1 of them, 0 .. K): contiguous, balanced by
// the entries of A and B per k (counted in at most 2^22 bins of k, on `threads` threads).
std::vector<std::int64_t> inner_bounds(const Triplets& a, const Triplets& b, std::int64_t K, MPI_Comm comm, int threads);

// Collective: every entry to the rank that owns its k under bounds; the received entries in rank
// order, each rank's in its file order. The placement is a stable counting sort on `threads` threads.
Triplets shuffle(Triplets entries, const std::vector<std::int64_t>& bounds, Inner inner, MPI_Comm comm, int threads);

}  // namespace pagh::mpi::detail
