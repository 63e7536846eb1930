// Pagh's compressed product across MPI processes. The sketch is linear in the inner dimension,
// P_t = sum_k (H a_k) (.) (H b_k), so processes that hold disjoint sets of inner indices k (columns of A,
// the same rows of B) sketch their parts independently with the same hash tables (the same seed) and
// the sum of their sketches is the sketch of the whole product:
//
//   // Each rank holds A_local = A[:, its k] and B_local = B[its k, :] (any disjoint split, even empty).
//   pagh::CompressedProduct C = pagh::mpi::compress(A_local, B_local, {.seed = 42}, MPI_COMM_WORLD);
//   for (const pagh::Entry& e : C.top_k(10)) ...           // the same answer on every rank
//
// With a GPU per rank, sketch with sketch/cuda.hpp and sum the host copies:
//
//   auto partial = pagh::cuda::compress(A_local, B_local, params, {.device = pagh::mpi::local_rank(comm) % gpus});
//   pagh::mpi::agree(comm, nullptr);                          // (inside a try: see agree())
//   pagh::CompressedProduct C = *pagh::mpi::sum_sketches(partial.to_host(), comm);
//
// Results: each rank sketches its k split into as many ranges as it has threads (share_params; one
// process splits k into 16, whose buffers a rank with a small share of k would clear and add for
// nothing), and the ranks' d * b partial sketches (double) are summed in rank order, whatever the MPI
// library: rank r sums segment r of every rank's sketch, then the root gathers the segments. Ranks
// that all run on one node do it through a shared-memory window (each value copied once, the adds
// reading every rank's copy), others by messages (MPI_Alltoallv and MPI_Gatherv): the same bits. Integer-valued inputs whose sums are exact in the sketch precision give
// the single-process sketch bit for bit; other inputs agree with it to rounding.
//
// Failures: every function here is collective. A rank that fails while the others wait would leave
// them waiting for ever, so failures are agreed on first: when any rank fails, every rank throws the
// same RankFailure (the lowest failing rank's message), and none enters the reduction.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pagh/error.hpp"
#include "sketch/compress.hpp"
#include "sketch/compress_values.hpp"
#include "sketch/compressed_product.hpp"

namespace pagh::mpi {

// root argument of sum_sketches: every rank receives the sum.
inline constexpr int kEveryRank = -1;

// How sum_sketches moves the partials (the sum and its order are the same either way): automatic,
// through a shared-memory window (MPI_Win_allocate_shared) when every rank runs on one node and the
// window can be had, else by messages; messages, always by messages (a reduce-scatter by
// MPI_Alltoallv and a gather).
enum class SumRoute { automatic, messages };

// Thrown on every rank of the communicator when some rank failed. what() is that rank's message as
// it was (so that a command-line tool can print it as its own); code() the status that rank gave
// agree() (1 for agree(comm, exception_ptr)).
class RankFailure : public pagh::Error {
 public:
  RankFailure(int rank, int code, const std::string& message) : pagh::Error(message), rank_(rank), code_(code) {}
  int rank() const { return rank_; }
  int code() const { return code_; }

 private:
  int rank_, code_;
};

// Wall-clock times of one distributed compress on this rank, in milliseconds: its own sketch, the
// wait for the slowest rank (load imbalance; agreeing on failures), the reduction of the sketches;
// reduce_ms's parts: the exchange of the segments (MPI_Alltoallv; through shared memory, the copies
// into the window and the waits at its barriers), adding them, the gather (the copies out);
// sketch: the stages of its own sketch as pagh::compress timed them.
struct ReduceTimings {
  double local_ms = 0, wait_ms = 0, reduce_ms = 0;
  double exchange_ms = 0, add_ms = 0, gather_ms = 0;
  CompressTimings sketch;
  bool shared_memory = false;  // the sum went through a shared-memory window (SumRoute)
};

// Collective: code 0 means this rank is fine; anything else is a failure with that status and
// message. If any rank failed, every rank throws RankFailure with the lowest failing rank's code and
// message; otherwise it returns on every rank. Waits without spinning a core (ranks that finished
// early sleep between polls rather than busy-waiting in MPI), so that idle ranks leave the cores to
// the ranks still working.
void agree(MPI_Comm comm, int code, const std::string& message);
// The same with this rank's exception, if any (nullptr: this rank is fine): code 1, its what().
void agree(MPI_Comm comm, std::exception_ptr failure);

// Collective: the sum of the ranks' partial products in rank order, on every rank (root =
// kEveryRank) or on root only (the others get nullopt). Every rank must pass a product of the same shape m x p, sketch
// length, repetitions, seed and precision (checked: otherwise every rank throws the same
// pagh::Error); the result's inner() is the sum of theirs and its timings() this rank's own.
// The sum goes in pieces (by messages, 2^22 values through one 32 MiB receive buffer; through shared
// memory, 2^19 values per slot), whatever the sketch length.
std::optional<CompressedProduct> sum_sketches(const CompressedProduct& partial, MPI_Comm comm, int root = kEveryRank,
                                              ReduceTimings* timings = nullptr, SumRoute route = SumRoute::automatic);
// The same for partial sketch values (pagh::compress_values: never measured, since only their sum
// is); the result takes the partial's hash tables. What compress() below sums.
std::optional<CompressedProduct> sum_sketches(SketchValues partial, MPI_Comm comm, int root = kEveryRank,
                                              ReduceTimings* timings = nullptr, SumRoute route = SumRoute::automatic);

// What the ranks' partial sketches must agree on before a sum (every field but inner), and the inner
// indices this rank's covers.
struct PartialShape {
  std::int64_t rows = 0, cols = 0, buckets = 0, inner = 0;
  int repetitions = 0;
  std::uint64_t seed = 0;
  fwht::DType precision = fwht::DType::f32;
};
// Collective, before any sum of partials: throws the same pagh::Error (from `where`) on every rank
// when root is neither kEveryRank nor a rank of comm, or when the ranks' shapes differ (naming the
// first field that differs, as require_same does); returns the sum of the ranks' inner.
std::int64_t check_partials(MPI_Comm comm, const char* where, int root, const PartialShape& partial);

// Collective: throws the same pagh::Error (from `where`) on every rank unless every rank passed the
// same values, naming the first field that differs: "the ranks differ in <name> (from x to y)".
void require_same(MPI_Comm comm, const char* where, const std::vector<std::pair<const char*, std::uint64_t>>& fields);

// Completes a non-blocking MPI operation by polling it with growing sleeps (up to 2 ms) instead of
// MPI's busy wait, which would keep a core spinning on every rank that waits for a slower one.
void wait_without_spinning(MPI_Request& request);

// Collective: the hash tables of an m x p product under params, draw_hash_tables(params.seed, d, m,
// p, sketch_length(m, p, params)) bit for bit on every rank, each rank drawing 1/ranks of their
// entries and gathering the others' (MPI_Allgatherv; tables too long for MPI's int counts are drawn
// whole on every rank). Invalid parameters on any rank, or ranks that differ in m, p, the sketch
// length, d or the seed, throw the same error on every rank.
HashTables shared_hash_tables(std::int64_t m, std::int64_t p, const SketchParams& params, MPI_Comm comm);

// The parameters a rank sketches its share with: params, with SketchParams::partitions (unless set)
// the rank's thread count (params.threads, else the cores this process may run on).
SketchParams share_params(const SketchParams& params);

// Collective (every rank of comm calls it): this process's rank among the ranks of comm that share
// its node (MPI_COMM_TYPE_SHARED), the usual way to pick one GPU per rank.
int local_rank(MPI_Comm comm);

// Collective: the compressed product of A = [A_local of every rank] (columns) and B = [B_local of
// every rank] (rows), as pagh::compress would give it in one process (see the top of this file for
// the sum order), on every rank or on root only. A_local is m x K_r and B_local is K_r x p (K_r may
// be 0); m, p and params must be the same on every rank. Any overload of pagh::compress (dense,
// sparse, float, double) applies.
template <class MatrixA, class MatrixB>
std::optional<CompressedProduct> compress(const MatrixA& A_local, const MatrixB& B_local, const SketchParams& params,
                                          MPI_Comm comm, int root, ReduceTimings* timings = nullptr,
                                          SumRoute route = SumRoute::automatic);

template <class MatrixA, class MatrixB>
CompressedProduct compress(const MatrixA& A_local, const MatrixB& B_local, const SketchParams& params, MPI_Comm comm) {
  return *compress(A_local, B_local, params, comm, kEveryRank);
}

// Implementation of the template above: the local sketch, agreement, the sum.
double wall_ms();
template <class MatrixA, class MatrixB>
std::optional<CompressedProduct> compress(const MatrixA& A_local, const MatrixB& B_local, const SketchParams& params,
                                          MPI_Comm comm, int root, ReduceTimings* timings, SumRoute route) {
  const double start = wall_ms();
  // The ranks share the drawing of the tables (the same on every rank: same seed).
  HashTables tables = shared_hash_tables(A_local.rows(), B_local.cols(), params, comm);
  const double drawn = wall_ms();
  std::optional<SketchValues> partial;
  std::exception_ptr failure;
  try {
    partial.emplace(pagh::compress_values(A_local, B_local, share_params(params), std::move(tables)));
    partial->timings.hashing_ms = drawn - start, partial->timings.total_ms += drawn - start;
  } catch (...) {
    failure = std::current_exception();
  }
  const double sketched = wall_ms();
  agree(comm, failure);
  const double agreed = wall_ms();
  if (timings) timings->local_ms = sketched - start, timings->wait_ms = agreed - sketched, timings->sketch = partial->timings;
  int size = 1;
  MPI_Comm_size(comm, &size);
  // One rank: its sketch is the sum (sum_sketches would copy it).
  if (size == 1 && (root == 0 || root == kEveryRank)) return std::move(*partial).product();
  return sum_sketches(std::move(*partial), comm, root, timings, route);
}

}  // namespace pagh::mpi
