// Agreement on failures and the sum of partial sketches (distributed/mpi_compress.hpp).
#include "distributed/mpi_compress.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <thread>
#include <vector>

namespace pagh::mpi {
namespace {

constexpr const char* kWhere = "pagh::mpi::sum_sketches";
// MPI counts are int: reduce at most this many doubles per call (1 GiB).
constexpr std::int64_t kPieceValues = std::int64_t{1} << 27;

std::string describe(std::exception_ptr failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace

void wait_without_spinning(MPI_Request& request) {
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));
  }
}

double wall_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void agree(MPI_Comm comm, int code, const std::string& message) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int first = code != 0 ? rank : INT_MAX;
  MPI_Request request;
  MPI_Iallreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm, &request);
  wait_without_spinning(request);
  if (first == INT_MAX) return;
  std::int64_t header[2] = {code, static_cast<std::int64_t>(message.size())};
  MPI_Bcast(header, 2, MPI_INT64_T, first, comm);
  std::string text = rank == first ? message : std::string(static_cast<std::size_t>(header[1]), '\0');
  MPI_Bcast(text.data(), static_cast<int>(header[1]), MPI_CHAR, first, comm);
  throw RankFailure(first, static_cast<int>(header[0]), text);
}

void agree(MPI_Comm comm, std::exception_ptr failure) {
  if (failure) agree(comm, 1, describe(failure));
  else agree(comm, 0, "");
}

void require_same(MPI_Comm comm, const char* where, const std::vector<std::pair<const char*, std::uint64_t>>& fields) {
  const std::size_t n = fields.size();
  // max over ranks of v and of ~v: every rank has the same v iff max(v) == ~max(~v) (= min(v)).
  std::vector<std::uint64_t> both(2 * n);
  for (std::size_t i = 0; i < n; ++i) both[i] = fields[i].second, both[n + i] = ~fields[i].second;
  MPI_Allreduce(MPI_IN_PLACE, both.data(), static_cast<int>(2 * n), MPI_UINT64_T, MPI_MAX, comm);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t largest = both[i], smallest = ~both[n + i];
    if (largest != smallest)
      throw Error(where, std::string("the ranks differ in ") + fields[i].first + " (from " +
                              std::to_string(smallest) + " to " + std::to_string(largest) +
                              ")");
  }
}


namespace {

// One piece (count <= kPieceValues) of the sum: a reduce-scatter by MPI_Alltoallv (rank r receives
// every rank's values of segment r and sums them in rank order, in place), then a gather of the
// segments to root or to every rank (out: nullptr on ranks that receive nothing). One rank: a copy.
void sum_piece(const double* mine, std::int64_t count, double* out, int root, MPI_Comm comm, int rank, int size,
               std::vector<double>& received) {
  if (size == 1) {
    if (out != nullptr) std::copy(mine, mine + count, out);
    return;
  }
  const auto edge = [&](int r) { return static_cast<int>(count * r / size); };
  const int own = edge(rank + 1) - edge(rank);
  std::vector<int> send_counts(size), send_at(size), receive_counts(size, own), receive_at(size);
  for (int r = 0; r < size; ++r) send_counts[r] = edge(r + 1) - edge(r), send_at[r] = edge(r), receive_at[r] = r * own;
  received.resize(static_cast<std::size_t>(own) * static_cast<std::size_t>(size));
  MPI_Alltoallv(mine, send_counts.data(), send_at.data(), MPI_DOUBLE, received.data(), receive_counts.data(), receive_at.data(),
                MPI_DOUBLE, comm);
  double* segment = received.data();  // rank 0's values, then the sum
  for (int r = 1; r < size; ++r) {
    const double* from = received.data() + static_cast<std::size_t>(r) * static_cast<std::size_t>(own);
    for (int i = 0; i < own; ++i) segment[i] += from[i];
  }
  if (root == kEveryRank)
    MPI_Allgatherv(segment, own, MPI_DOUBLE, out, send_counts.data(), send_at.data(), MPI_DOUBLE, comm);
  else
    MPI_Gatherv(segment, own, MPI_DOUBLE, out, send_counts.data(), send_at.data(), MPI_DOUBLE, root, comm);
}

}  // namespace

std::optional<CompressedProduct> sum_sketches(const CompressedProduct& partial, MPI_Comm comm, int root, ReduceTimings* timings) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (root != kEveryRank && (root < 0 || root >= size))
    throw Error(kWhere, "root " + std::to_string(root) + " is not a rank of the communicator (size " + std::to_string(size) + ")");
  require_same(comm, kWhere, {{"the rows of the product", static_cast<std::uint64_t>(partial.rows())},
                                  {"the columns of the product", static_cast<std::uint64_t>(partial.cols())},
                                  {"the sketch length", static_cast<std::uint64_t>(partial.buckets())},
                                  {"the repetitions", static_cast<std::uint64_t>(partial.repetitions())},
                                  {"the seed", partial.params().seed},
                                  {"the precision", static_cast<std::uint64_t>(partial.params().precision)}});
  std::int64_t inner = partial.inner();
  MPI_Allreduce(MPI_IN_PLACE, &inner, 1, MPI_INT64_T, MPI_SUM, comm);

  const double start = wall_ms();
  const std::int64_t b = partial.buckets(), values = b * partial.repetitions();
  const double* mine = partial.sketch(0).data();  // the d sketches are contiguous (compressed_product.hpp)
  const bool receives = root == kEveryRank || rank == root;
  std::vector<double> sum(receives ? static_cast<std::size_t>(values) : 0), received;
  for (std::int64_t at = 0; at < values; at += kPieceValues)
    sum_piece(mine + at, std::min(kPieceValues, values - at), receives ? sum.data() + at : nullptr, root, comm, rank, size,
              received);
  if (timings) timings->reduce_ms = wall_ms() - start;
  if (!receives) return std::nullopt;
  return CompressedProduct(partial.rows(), partial.cols(), inner, partial.params(), partial.tables(), std::move(sum),
                           partial.timings());
}

SketchParams share_params(const SketchParams& params) {
  SketchParams share = params;
  if (share.partitions > 0) return share;
  int cores = share.threads;
  if (cores <= 0) {
    cpu_set_t set;
    cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  }
  share.partitions = std::max(cores, 1);
  return share;
}

int local_rank(MPI_Comm comm) {
  int rank = 0, local = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  return local;
}

}  // namespace pagh::mpi
