// Operands that no process holds whole: under mpirun each rank reads a byte range of each input and
// keeps the inner indices k it owns (columns of A, rows of B; distributed/mpi_read.hpp). Rank 0's
// InputMatrix then holds an empty matrix of the whole shape and points here; what run_multiply
// needs of A and B beyond their shapes and the sketch is asked here, and rank 0's calls are answered
// by every rank together (mpi_multiply.cpp): each computes its part over its own k and the parts
// are summed in rank order, so integer inputs give one process's values bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "sketch/entry.hpp"
#include "sketch/method.hpp"
#include "sketch/refine.hpp"

namespace pagh_mm {

class SharedOperands {
 public:
  virtual ~SharedOperands() = default;
  // The stored entries of the whole A and B (the sum of the ranks').
  virtual std::int64_t entries_a() const = 0;
  virtual std::int64_t entries_b() const = 0;
  // pagh::count_product of the whole A and B (per-k counts gathered from the ranks).
  virtual const pagh::ProductCounts& counts() const = 0;
  // pagh::product_diagonal of A * B (square products).
  virtual std::vector<pagh::Entry> diagonal() const = 0;
  // C(i, j) at chosen positions, with the cost model of the whole operands.
  virtual pagh::ExactEntries exact_entries() const = 0;
};

}  // namespace pagh_mm
