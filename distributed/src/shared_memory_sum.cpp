// The sum of partial sketches through a shared-memory window (shared_memory_sum.hpp).
#include "shared_memory_sum.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace pagh::mpi::detail {
namespace {

// Values per slot: 4 MiB. Three slots per rank (the piece being copied in, the one being added, the
// one the root copies out) stay well inside a server's last-level cache at 8-16 ranks, and the
// window's pages (faulted once per sum, 4 KiB each on a tmpfs) stay few.
constexpr std::int64_t kSlotValues = std::int64_t{1} << 19;
constexpr int kSlots = 3;
// Values added at once: one stack block, so that the loops over ranks and values vectorize without
// writing into the slot they read.
constexpr std::int64_t kAddBlock = 512;

// Memory written by one rank is seen by the others after this (MPI's unified window model: a
// window synchronisation on both sides of a barrier).
void synchronise(MPI_Win window, MPI_Comm node) {
  MPI_Win_sync(window);
  MPI_Barrier(node);
  MPI_Win_sync(window);
}

// segment[i] = sum over r in rank order, from +0.0, of slots[r][i] for i in [begin, end).
void add_segment(const std::vector<double*>& slots, std::size_t offset, std::int64_t begin, std::int64_t end, double* segment) {
  double block[kAddBlock];
  for (std::int64_t at = begin; at < end; at += kAddBlock) {
    const std::int64_t n = std::min(kAddBlock, end - at);
    std::fill(block, block + n, 0.0);
    for (const double* slot : slots) {
      const double* from = slot + offset + at;
      for (std::int64_t i = 0; i < n; ++i) block[i] += from[i];
    }
    std::memcpy(segment + at, block, static_cast<std::size_t>(n) * sizeof(double));
  }
}

}  // namespace

bool sum_through_shared_memory(const double* mine, std::int64_t values, double* out, int root, MPI_Comm comm, ReduceTimings& parts) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // Keyed by rank: on one node, the node's ranks are comm's in the same order.
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int node_size = 1;
  MPI_Comm_size(node, &node_size);
  int one_node = node_size == size;
  MPI_Allreduce(MPI_IN_PLACE, &one_node, 1, MPI_INT, MPI_MIN, comm);
  if (!one_node) {
    MPI_Comm_free(&node);
    return false;
  }
  const std::int64_t slot = std::min(values, kSlotValues);
  // A window that cannot be had (a full /dev/shm) is an error to return, not to abort on.
  MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  double* base = nullptr;
  MPI_Win window = MPI_WIN_NULL;
  const int allocated = MPI_Win_allocate_shared(static_cast<MPI_Aint>(kSlots * slot * sizeof(double)), sizeof(double), info, node,
                                                &base, &window);
  MPI_Info_free(&info);
  int failed = allocated != MPI_SUCCESS;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  if (failed) {
    // The allocation is collective and fails on every rank together; a window some rank got anyway
    // is left allocated rather than freed without the others (MPI_Win_free is collective).
    MPI_Comm_free(&node);
    return false;
  }
  std::vector<double*> slots(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    MPI_Aint bytes = 0;
    int unit = 0;
    MPI_Win_shared_query(window, r, &bytes, &unit, &slots[static_cast<std::size_t>(r)]);
  }
  double* own = slots[static_cast<std::size_t>(rank)];
  MPI_Win_lock_all(MPI_MODE_NOCHECK, window);
  const std::int64_t pieces = (values + slot - 1) / slot;
  const auto count_of = [&](std::int64_t piece) { return std::min(slot, values - piece * slot); };
  const auto offset_of = [&](std::int64_t piece) { return static_cast<std::size_t>((piece % kSlots) * slot); };
  // The ranks that add: all of them where every rank copies the sum out; without the root where it
  // alone does (its copy-out is the one step no other rank shares).
  std::vector<int> adders;
  for (int r = 0; r < size; ++r)
    if (root == kEveryRank || size <= 2 || r != root) adders.push_back(r);
  const int adding = static_cast<int>(adders.size());
  const auto mine_at = std::find(adders.begin(), adders.end(), rank);
  const int adder = mine_at == adders.end() ? -1 : static_cast<int>(mine_at - adders.begin());
  const auto edge = [&](std::int64_t count, int a) { return count * a / adding; };
  // Iteration i copies piece i in, adds rank's segment of it, and copies piece i - 1 out: the barrier
  // of iteration i follows every rank's add of piece i - 1, and a slot is written again (piece
  // i + 3) only after the barrier of iteration i + 2, which the root reaches once it has copied
  // piece i out.
  for (std::int64_t i = 0; i <= pieces; ++i) {
    const double start = wall_ms();
    if (i < pieces) std::memcpy(own + offset_of(i), mine + i * slot, static_cast<std::size_t>(count_of(i)) * sizeof(double));
    synchronise(window, node);
    const double copied = wall_ms();
    if (i < pieces && adder >= 0) {
      const std::int64_t count = count_of(i);
      // In place: this adder's segment of any slot is read by this rank alone (and by the copy-out after the next barrier).
      add_segment(slots, offset_of(i), edge(count, adder), edge(count, adder + 1), own + offset_of(i));
    }
    const double added = wall_ms();
    if (i > 0 && out) {
      const std::int64_t piece = i - 1, count = count_of(piece);
      for (int a = 0; a < adding; ++a) {
        const std::int64_t begin = edge(count, a), end = edge(count, a + 1);
        std::memcpy(out + piece * slot + begin, slots[static_cast<std::size_t>(adders[static_cast<std::size_t>(a)])] + offset_of(piece) + begin,
                    static_cast<std::size_t>(end - begin) * sizeof(double));
      }
    }
    parts.exchange_ms += copied - start, parts.add_ms += added - copied, parts.gather_ms += wall_ms() - added;
  }
  MPI_Win_unlock_all(window);
  MPI_Barrier(node);  // every copy-out done before the window goes
  MPI_Win_free(&window);
  MPI_Comm_free(&node);
  return true;
}

}  // namespace pagh::mpi::detail
