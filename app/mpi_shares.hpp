// mpirun pagh-mm with inputs read by byte ranges (distributed/mpi_read.hpp): each rank keeps the inner
// indices k it owns, and run_multiply's questions of A and B beyond the sketch (the method's cost
// counts, the known diagonal, the exact values of candidates) are answered from the shares: each rank
// computes its part over its own k and rank 0 sums the parts in rank order, so no rank holds A or B
// whole and integer inputs give one process's values bit for bit. Every function taking a
// communicator is collective: rank 0 calls it from run_multiply, the other ranks when rank 0's
// command reaches them (mpi_multiply.cpp). Failures end every rank with the same exception (rank 0:
// CliError).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"
#include "distributed/mpi_read.hpp"
#include "shared_operands.hpp"
#include "sketch/entry.hpp"
#include "sketch/method.hpp"
#include "sketch/refine.hpp"

namespace pagh_mm {

struct MultiplyOptions;

// This process's rank in comm, and comm's size.
int rank_in(MPI_Comm comm);
int size_of(MPI_Comm comm);

// Rank 0, before anything is read: whether the run reads by byte ranges. Only plain (not gzip)
// Matrix Market coordinate files of multipliable shapes, and only options that need nothing of the
// whole matrices beyond what the shares answer: not --verify (the exact product, and every |C| for
// the recall), --correlation (standardises the columns in place), --transpose-a or --method exact.
// Anything else, or a header that cannot be read, keeps the whole-file read (which reports it).
// Returns why the run reads whole files, or "" when it reads by byte ranges.
std::string reads_whole_files(const MultiplyOptions& o);

struct InputShare {
  MatrixData a, b;  // A[:, k0:k1] (m x (k1 - k0)) and B[k0:k1, :], sparse
  std::int64_t k0 = 0, k1 = 0, m = 0, K = 0, p = 0;
  std::int64_t entries_a = 0, entries_b = 0;  // stored entries of the whole A and B
  // Rank 0 only: the whole product's counts (pagh::count_product), the entries of each row of A and
  // of each column of B (ExactEntries::cost).
  pagh::ProductCounts counts;
  std::vector<std::int64_t> row_entries_a, col_entries_b;
  std::optional<pagh::ExactEntries> exact;  // over this rank's k, made at the first evaluation
  pagh::mpi::InnerShare::Timings read;       // this rank's byte-range read (parse, shuffle, assembly)
  double counts_ms = 0;                      // the counts above, gathered to rank 0
};

// This rank's share of A and B; nullptr on every rank where one process would read A or B as a
// dense matrix (matrix_io's density rule): the run then reads whole files, as one process does.
std::unique_ptr<InputShare> read_share(MPI_Comm comm, const std::string& a_path, const std::string& b_path, int threads);

// C(i, j) at rank 0's positions (n of them; the other ranks pass none): every rank's part over its
// k, summed on rank 0 in rank order from +0.0. The other ranks get an empty vector.
std::vector<pagh::Entry> evaluate_shares(MPI_Comm comm, InputShare& share, std::vector<pagh::Entry> positions, std::int64_t n,
                                         int threads);
// pagh::product_diagonal of A * B on rank 0 (square products), its parts summed likewise.
std::vector<pagh::Entry> diagonal_of_shares(MPI_Comm comm, const InputShare& share);

// Rank 0's SharedOperands over its share: announce(step, n) sends the other ranks the step (and
// the number of positions) before each collective call.
enum class ShareStep { evaluate, diagonal };
std::shared_ptr<const SharedOperands> shared_operands(MPI_Comm comm, InputShare& share, int threads,
                                                      std::function<void(ShareStep, std::int64_t)> announce);

}  // namespace pagh_mm
