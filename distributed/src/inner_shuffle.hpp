// The byte-range read's shuffle by inner index (mpi_read.cpp): the entries a rank parsed go to the
// rank that owns their k. Owners hold contiguous inner ranges, balanced by the entries of A and B.
#pragma once

#include <mpi.h>
#include <omp.h>

#include <algorithm>
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

// Threads for a pass over n entries: at least 2^16 entries each.
inline int threads_for(std::size_t n, int threads) {
  return static_cast<int>(std::clamp<std::size_t>(n >> 16, 1, static_cast<std::size_t>(std::max(threads, 1))));
}

// n entries to be written (unset): on huge pages where the kernel grants them, their pages faulted in
// on `threads` threads (a single-threaded writer such as MPI's copies would fault them in one by one).
Triplets fresh_triplets(std::size_t n, int threads);

// The entries grouped by group(e) in [0, groups), each group's in their order in `entries` (a stable
// counting sort: each thread counts a contiguous chunk, then places it after the same group's
// entries of the chunks before); start[g] .. start[g + 1] is group g's part of `entries`.
struct Grouped {
  Triplets entries;
  std::vector<std::int64_t> start;
};
template <class Group>
Grouped group_stably(const Triplets& entries, std::size_t groups, Group group, int threads) {
  const std::size_t n = entries.size();
  const int chunks = threads_for(n, threads);
  std::vector<std::int64_t> at(static_cast<std::size_t>(chunks) * groups, 0);  // per chunk and group: a count, then where it goes
  Grouped out{fresh_triplets(n, chunks), std::vector<std::int64_t>(groups + 1, 0)};
#pragma omp parallel num_threads(chunks)
  {
    const auto c = static_cast<std::size_t>(omp_get_thread_num());
    const std::size_t begin = n * c / static_cast<std::size_t>(chunks), end = n * (c + 1) / static_cast<std::size_t>(chunks);
    std::int64_t* mine = at.data() + c * groups;
    for (std::size_t e = begin; e < end; ++e) ++mine[group(entries[e])];
#pragma omp barrier
#pragma omp single
    {
      std::int64_t next = 0;
      for (std::size_t g = 0; g < groups; ++g) {
        out.start[g] = next;
        for (std::size_t k = 0; k < static_cast<std::size_t>(chunks); ++k) {
          const std::int64_t count = at[k * groups + g];
          at[k * groups + g] = next, next += count;
        }
      }
      out.start[groups] = next;
    }
    for (std::size_t e = begin; e < end; ++e) out.entries[static_cast<std::size_t>(mine[group(entries[e])]++)] = entries[e];
  }
  return out;
}

enum class Inner { column, row };  // k of an entry of A (its column) or of B (its row)

// Collective. Bounds of the ranks' inner ranges (size + 1 of them, 0 .. K): contiguous, balanced by
// the entries of A and B per k (counted in at most 2^22 bins of k, on `threads` threads).
std::vector<std::int64_t> inner_bounds(const Triplets& a, const Triplets& b, std::int64_t K, MPI_Comm comm, int threads);

// Collective: every entry to the rank that owns its k under bounds; the received entries in rank
// order, each rank's in its file order. The placement is a stable counting sort on `threads` threads.
Triplets shuffle(Triplets entries, const std::vector<std::int64_t>& bounds, Inner inner, MPI_Comm comm, int threads);

}  // namespace pagh::mpi::detail
