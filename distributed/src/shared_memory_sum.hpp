// The sum of partial sketches through one shared-memory window, for ranks that all run on one node
// (sum_sketches in mpi_compress.cpp takes it there before the messages' reduce-scatter and gather).
//
// Messages between processes of one node go through the MPI library's shared buffers: each value is
// copied into them by its sender and out of them by its receiver, twice more for the gather to the
// root. Here every rank copies a piece of its partial once into its slot of a window that every rank
// of the node maps (MPI_Win_allocate_shared); rank r adds segment r of the piece straight from every
// rank's slot, from +0.0 in rank order (the messages' order: the same bits), and writes the sum back
// into its own slot, from which the root copies the summed piece (a single root adds nothing itself
// from 3 ranks on: it copies out while the others add). The slots are small (2^19 values)
// and there are three of them per rank, so a piece moves while the last one is still being read: one
// barrier per piece, and the pieces stay in the last-level cache between copy, add and copy-out.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "distributed/mpi_compress.hpp"

namespace pagh::mpi::detail {

// Collective. Adds the `values` doubles of every rank's `mine` from +0.0 in rank order into `out`
// (on root, or on every rank for root = kEveryRank; nullptr on the others; `out` may be `mine`:
// each piece is copied in before its sum is copied out) and times the parts (exchange:
// the copies into the window and the waits; add; gather: the copies out). Returns false on every
// rank, having summed nothing, when the ranks are not all on one node or the window could not be
// allocated; the caller then sums by messages.
bool sum_through_shared_memory(const double* mine, std::int64_t values, double* out, int root, MPI_Comm comm, ReduceTimings& parts);

}  // namespace pagh::mpi::detail
