// Agreement on failures and the sum of partial sketches (distributed/mpi_compress.hpp).
#include "distributed/mpi_compress.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <memory>
#include <thread>
#include <vector>

#include "compress/huge_pages.hpp"
#include "shared_memory_sum.hpp"

namespace pagh::mpi {
namespace {

constexpr const char* kWhere = "pagh::mpi::sum_sketches";
// The sum goes piece by piece (32 MiB of values): one small buffer receives every piece (its pages
// faulted in once, not once per sketch byte), and the values a rank sums are still in its cache.
// (MPI counts are int: a piece must stay below 2^31 values anyway.)
constexpr std::int64_t kPieceValues = std::int64_t{1} << 22;

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

// The buffers of the sum, sized for its largest piece and reused by every piece.
struct SumBuffers {
  SumBuffers(std::int64_t piece, int size)
      : own(size > 1 ? (piece + size - 1) / size : 0),
        received(new double[static_cast<std::size_t>(std::max<std::int64_t>(size * own, 1))]),
        segment(static_cast<std::size_t>(own)),
        counts(size), at(size), receive_counts(size), receive_at(size) {
    cpu_sketch::advise_huge_pages(received.get(), static_cast<std::size_t>(size * own) * sizeof(double));
  }
  std::int64_t own;  // the most values of one rank's segment
  std::unique_ptr<double[]> received;
  std::vector<double> segment;
  std::vector<int> counts, at, receive_counts, receive_at;
};

// One piece (count <= kPieceValues) of the sum: a reduce-scatter (rank r receives every rank's
// segment r of the piece by MPI_Alltoallv and sums them from +0.0 in rank order), then a gather of
// the summed segments to root or to every rank (out: nullptr on ranks that receive nothing).
void sum_piece(const double* mine, std::int64_t count, double* out, int root, MPI_Comm comm, int rank, int size, SumBuffers& buffers,
               ReduceTimings& timings) {
  const double start = wall_ms();
  const auto edge = [&](int r) { return static_cast<int>(count * r / size); };
  const int own = edge(rank + 1) - edge(rank);
  for (int r = 0; r < size; ++r)
    buffers.counts[r] = edge(r + 1) - edge(r), buffers.at[r] = edge(r), buffers.receive_counts[r] = own, buffers.receive_at[r] = r * own;
  MPI_Alltoallv(mine, buffers.counts.data(), buffers.at.data(), MPI_DOUBLE, buffers.received.get(), buffers.receive_counts.data(),
                buffers.receive_at.data(), MPI_DOUBLE, comm);
  const double exchanged = wall_ms();
  double* segment = buffers.segment.data();
  std::fill(segment, segment + own, 0.0);
  for (int r = 0; r < size; ++r) {
    const double* from = buffers.received.get() + static_cast<std::size_t>(r) * static_cast<std::size_t>(own);
    for (int i = 0; i < own; ++i) segment[i] += from[i];
  }
  const double added = wall_ms();
  if (root == kEveryRank)
    MPI_Allgatherv(segment, own, MPI_DOUBLE, out, buffers.counts.data(), buffers.at.data(), MPI_DOUBLE, comm);
  else
    MPI_Gatherv(segment, own, MPI_DOUBLE, out, buffers.counts.data(), buffers.at.data(), MPI_DOUBLE, root, comm);
  timings.exchange_ms += exchanged - start, timings.add_ms += added - exchanged, timings.gather_ms += wall_ms() - added;
}

}  // namespace

std::int64_t check_partials(MPI_Comm comm, const char* where, int root, const PartialShape& partial) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  if (root != kEveryRank && (root < 0 || root >= size))
    throw Error(where, "root " + std::to_string(root) + " is not a rank of the communicator (size " + std::to_string(size) + ")");
  require_same(comm, where, {{"the rows of the product", static_cast<std::uint64_t>(partial.rows)},
                                 {"the columns of the product", static_cast<std::uint64_t>(partial.cols)},
                                 {"the sketch length", static_cast<std::uint64_t>(partial.buckets)},
                                 {"the repetitions", static_cast<std::uint64_t>(partial.repetitions)},
                                 {"the seed", partial.seed},
                                 {"the precision", static_cast<std::uint64_t>(partial.precision)}});
  std::int64_t inner = partial.inner;
  MPI_Allreduce(MPI_IN_PLACE, &inner, 1, MPI_INT64_T, MPI_SUM, comm);
  return inner;
}

namespace {

// The sum on root (or every rank): the summed values and inner indices; receives = false elsewhere.
struct Summed {
  bool receives = false;
  std::int64_t inner = 0;
  std::vector<double> values;
};

// own: this rank's values where the caller gives them up (mine is own->data()): the ranks that
// receive the sum make it in them (every piece is sent or copied before its sum comes back), so no
// second d * b buffer is allocated and faulted in while the other ranks wait.
Summed sum_values(const PartialShape& partial, const double* mine, std::vector<double>* own, MPI_Comm comm, int root,
                  ReduceTimings* timings, SumRoute route) {
  Summed result;
  result.inner = check_partials(comm, kWhere, root, partial);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);

  const double start = wall_ms();
  const std::int64_t values = partial.buckets * partial.repetitions;
  result.receives = root == kEveryRank || rank == root;
  std::vector<double>& sum = result.values;
  if (result.receives) {
    if (own) sum = std::move(*own);
    else cpu_sketch::assign_zeroed(sum, static_cast<std::size_t>(values));
  }
  ReduceTimings parts;
  bool shared = false;
  if (size == 1) {
    for (std::int64_t h = 0; h < values; ++h) sum[static_cast<std::size_t>(h)] = 0.0 + mine[h];  // from +0.0, as with more ranks
  } else if (!(shared = route == SumRoute::automatic &&
                        detail::sum_through_shared_memory(mine, values, result.receives ? sum.data() : nullptr, root, comm, parts))) {
    SumBuffers buffers(std::min(kPieceValues, values), size);
    for (std::int64_t at = 0; at < values; at += kPieceValues)
      sum_piece(mine + at, std::min(kPieceValues, values - at), result.receives ? sum.data() + at : nullptr, root, comm, rank, size,
                buffers, parts);
  }
  if (timings) {
    timings->reduce_ms = wall_ms() - start;
    timings->exchange_ms = parts.exchange_ms, timings->add_ms = parts.add_ms, timings->gather_ms = parts.gather_ms;
    timings->shared_memory = shared;
  }
  return result;
}

}  // namespace

std::optional<CompressedProduct> sum_sketches(const CompressedProduct& partial, MPI_Comm comm, int root, ReduceTimings* timings,
                                              SumRoute route) {
  // The d sketches are contiguous (compressed_product.hpp).
  Summed sum = sum_values({partial.rows(), partial.cols(), partial.buckets(), partial.inner(), partial.repetitions(), partial.params().seed,
                           partial.params().precision},
                          partial.sketch(0).data(), nullptr, comm, root, timings, route);
  if (!sum.receives) return std::nullopt;
  return CompressedProduct(partial.rows(), partial.cols(), sum.inner, partial.params(), partial.tables(), std::move(sum.values),
                           partial.timings());
}

std::optional<CompressedProduct> sum_sketches(SketchValues partial, MPI_Comm comm, int root, ReduceTimings* timings,
                                              SumRoute route) {
  const std::int64_t buckets = partial.tables.buckets;
  // Agreed on, so that a rank with a malformed partial does not leave the others waiting in the sum.
  const bool whole = partial.values.size() == static_cast<std::size_t>(buckets * partial.tables.repetitions);
  agree(comm, whole ? 0 : 1,
        whole ? "" : Error(kWhere, "the partial holds " + std::to_string(partial.values.size()) + " values, not d * b = " +
                                       std::to_string(buckets * partial.tables.repetitions)).what());
  Summed sum = sum_values({partial.rows, partial.cols, buckets, partial.inner, partial.tables.repetitions, partial.params.seed,
                           partial.params.precision},
                          partial.values.data(), &partial.values, comm, root, timings, route);
  if (!sum.receives) return std::nullopt;
  return std::move(partial).product(sum.inner, std::move(sum.values));
}

HashTables shared_hash_tables(std::int64_t m, std::int64_t p, const SketchParams& params, MPI_Comm comm) {
  constexpr const char* kTablesWhere = "pagh::mpi::shared_hash_tables";
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::optional<HashTables> tables;
  std::int64_t buckets = 0;
  std::exception_ptr failure;
  try {
    buckets = sketch_length(m, p, params);
    // One rank draws them all (through draw_hash_tables' cache of the last tables).
    tables.emplace(size == 1 ? draw_hash_tables(params.seed, params.repetitions, m, p, buckets)
                             : zero_hash_tables(params.repetitions, m, p, buckets));
  } catch (...) {
    failure = std::current_exception();
  }
  agree(comm, failure);
  require_same(comm, kTablesWhere, {{"the rows of the product", static_cast<std::uint64_t>(m)},
                                        {"the columns of the product", static_cast<std::uint64_t>(p)},
                                        {"the sketch length", static_cast<std::uint64_t>(buckets)},
                                        {"the repetitions", static_cast<std::uint64_t>(params.repetitions)},
                                        {"the seed", params.seed}});
  if (size == 1) return std::move(*tables);
  const auto entries_a = static_cast<std::int64_t>(tables->bucket_a.size()), entries_b = static_cast<std::int64_t>(tables->bucket_b.size());
  if (entries_a > INT_MAX || entries_b > INT_MAX) {
    draw_hash_table_range(*tables, params.seed, {0, entries_a, 0, entries_b});
    return std::move(*tables);
  }
  const auto edge = [&](std::int64_t entries, int r) { return static_cast<int>(entries * r / size); };
  draw_hash_table_range(*tables, params.seed, {edge(entries_a, rank), edge(entries_a, rank + 1), edge(entries_b, rank), edge(entries_b, rank + 1)});
  std::vector<int> counts(static_cast<std::size_t>(size)), at(static_cast<std::size_t>(size));
  const auto gather = [&](void* data, std::int64_t entries, MPI_Datatype type) {
    for (int r = 0; r < size; ++r) at[r] = edge(entries, r), counts[r] = edge(entries, r + 1) - at[r];
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, counts.data(), at.data(), type, comm);
  };
  gather(tables->bucket_a.data(), entries_a, MPI_UINT32_T);
  gather(tables->sign_a.data(), entries_a, MPI_INT8_T);
  gather(tables->bucket_b.data(), entries_b, MPI_UINT32_T);
  gather(tables->sign_b.data(), entries_b, MPI_INT8_T);
  return std::move(*tables);
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
