// Shares of A and B read by byte ranges, and the collective steps over them (mpi_shares.hpp).
#include "mpi_shares.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "cli_error.hpp"
#include "distributed/mpi_compress.hpp"
#include "distributed/mpi_read.hpp"
#include "inputs.hpp"
#include "matrix_io/error.hpp"
#include "matrix_io/npy.hpp"
#include "matrix_io/read.hpp"
#include "multiply_options.hpp"
#include "read_limits.hpp"
#include "sketch/exact_answers.hpp"

namespace pagh_mm {
namespace {

namespace mio = pagh::matrix_io;
using Sparse = Eigen::SparseMatrix<double>;

// pagh::mpi::agree with pagh-mm's statuses and messages; rank 0's failure is a CliError to report.
void agree(MPI_Comm comm, std::exception_ptr failure) {
  try {
    if (!failure) return pagh::mpi::agree(comm, 0, "");
    const FailureReport report = describe_failure(failure, "");
    pagh::mpi::agree(comm, to_int(report.code), report.message);
  } catch (const pagh::mpi::RankFailure& e) {
    throw CliError(static_cast<ExitCode>(e.code()), "", e.what());
  }
}

// A plain Matrix Market coordinate file (not gzip, not .npy, a regular file): its header.
std::optional<mio::Header> coordinate_header(const std::string& path) {
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(path, ignored) || mio::is_npy_file(path)) return std::nullopt;
  char magic[2] = {};
  std::ifstream(path, std::ios::binary).read(magic, 2);
  if (magic[0] == '\x1F' && magic[1] == '\x8B') return std::nullopt;
  const mio::Header header = mio::read_header(path);
  if (header.format != mio::Format::coordinate) return std::nullopt;
  return header;
}

MPI_Datatype entry_type() {
  MPI_Datatype type;
  MPI_Type_contiguous(sizeof(pagh::Entry), MPI_BYTE, &type);
  MPI_Type_commit(&type);
  return type;
}

// Rank 0's answers to run_multiply: each question announced to the other ranks, then asked of all.
class RankZeroShares final : public SharedOperands {
 public:
  RankZeroShares(MPI_Comm comm, InputShare& share, int threads, std::function<void(ShareStep, std::int64_t)> announce)
      : comm_(comm), share_(&share), threads_(threads), announce_(std::move(announce)) {}

  std::int64_t entries_a() const override { return share_->entries_a; }
  std::int64_t entries_b() const override { return share_->entries_b; }
  const pagh::ProductCounts& counts() const override { return share_->counts; }

  std::vector<pagh::Entry> diagonal() const override {
    announce_(ShareStep::diagonal, 0);
    return diagonal_of_shares(comm_, *share_);
  }

  pagh::ExactEntries exact_entries() const override {
    pagh::ExactEntries::Delegate delegate;
    delegate.evaluate = [this](const std::vector<pagh::Entry>& positions, int threads) {
      const auto n = static_cast<std::int64_t>(positions.size());
      announce_(ShareStep::evaluate, n);
      return evaluate_shares(comm_, *share_, positions, n, threads > 0 ? threads : threads_);
    };
    delegate.cost = [this](std::int64_t i, std::int64_t j) {
      return static_cast<double>(share_->row_entries_a[static_cast<std::size_t>(i)] + share_->col_entries_b[static_cast<std::size_t>(j)]);
    };
    return pagh::ExactEntries(share_->m, share_->K, share_->p, std::move(delegate));
  }

 private:
  MPI_Comm comm_;
  InputShare* share_;
  int threads_;
  std::function<void(ShareStep, std::int64_t)> announce_;
};

}  // namespace

int rank_in(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}
int size_of(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

std::string reads_whole_files(const MultiplyOptions& o) {
  if (o.verify) return "--verify needs the exact product";
  if (o.correlation) return "--correlation standardises whole columns";
  if (o.transpose_a) return "--transpose-a";
  if (o.method == pagh::Method::exact) return "--method exact";
  try {
    const auto a = coordinate_header(o.a_path);
    const auto b = a ? coordinate_header(o.b_path) : std::nullopt;
    if (!b) return "byte ranges need plain Matrix Market coordinate files";
    if (a->cols != b->rows || std::max({a->rows, a->cols, b->cols}) > std::int64_t{0x7fffffff}) return "the shapes";
    return "";
  } catch (const std::exception&) {
    return "a header that cannot be read";
  }
}

std::unique_ptr<InputShare> read_share(MPI_Comm comm, const std::string& a_path, const std::string& b_path, int threads) {
  mio::ReadOptions options = input_read_options();
  options.threads = threads;
  pagh::mpi::InnerShare s = [&] {
    try {
      return pagh::mpi::read_inner_share(a_path, b_path, comm, options);
    } catch (const mio::MatrixMarketError& e) {
      throw_read_failure(e);  // the same on every rank
    } catch (const pagh::mpi::RankFailure& e) {
      throw CliError(ExitCode::data, "", e.what());
    } catch (const pagh::Error& e) {
      throw CliError(ExitCode::data, "", e.what());  // the ranks' copies of a file differ
    }
  }();
  std::int64_t totals[2] = {s.a.nonZeros(), s.b.nonZeros()};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT64_T, MPI_SUM, comm);
  const auto dense = [&](std::int64_t entries, std::int64_t rows, std::int64_t cols) {
    return static_cast<long double>(entries) >= options.dense_threshold * static_cast<long double>(rows) * static_cast<long double>(cols);
  };
  if (dense(totals[0], s.m, s.K) || dense(totals[1], s.K, s.p)) return nullptr;

  const double counts_start = pagh::mpi::wall_ms();
  const int me = rank_in(comm), ranks = size_of(comm);
  // The counts of the whole product on rank 0: per k (this rank's range, gathered in rank order),
  // per row of A and per column of B (summed). Any rank failing to hold them ends every rank.
  const auto Kr = static_cast<int>(s.k1 - s.k0);
  std::unique_ptr<InputShare> share;
  std::vector<double> nnz_a, nnz_b;
  std::vector<std::int64_t> rows_a, cols_b;
  std::vector<int> counts(static_cast<std::size_t>(ranks)), at(static_cast<std::size_t>(ranks), 0);
  std::exception_ptr failure;
  try {
    share = std::make_unique<InputShare>();
    share->k0 = s.k0, share->k1 = s.k1, share->m = s.m, share->K = s.K, share->p = s.p;
    share->entries_a = totals[0], share->entries_b = totals[1];
    nnz_a.assign(static_cast<std::size_t>(Kr), 0.0), nnz_b.assign(static_cast<std::size_t>(Kr), 0.0);
    rows_a.assign(static_cast<std::size_t>(s.m), 0), cols_b.assign(static_cast<std::size_t>(s.p), 0);
    // On the rank's threads from 2^16 entries: the counts of rows of A and of k of B are shared.
    const auto count = [](std::int64_t& n) { std::atomic_ref<std::int64_t>(n).fetch_add(1, std::memory_order_relaxed); };
    const int count_threads = s.a.nonZeros() + s.b.nonZeros() >= (Eigen::Index{1} << 16) ? std::max(threads, 1) : 1;
    std::vector<std::int64_t> k_of_b(static_cast<std::size_t>(Kr), 0);
#pragma omp parallel num_threads(count_threads) if (count_threads > 1)
    {
#pragma omp for schedule(dynamic, 4096) nowait
      for (Eigen::Index k = 0; k < s.a.outerSize(); ++k) {
        nnz_a[static_cast<std::size_t>(k)] = static_cast<double>(s.a.col(k).nonZeros());
        for (Sparse::InnerIterator it(s.a, k); it; ++it) count(rows_a[static_cast<std::size_t>(it.row())]);
      }
#pragma omp for schedule(dynamic, 4096)
      for (Eigen::Index j = 0; j < s.b.outerSize(); ++j) {
        for (Sparse::InnerIterator it(s.b, j); it; ++it) count(k_of_b[static_cast<std::size_t>(it.row())]);
        cols_b[static_cast<std::size_t>(j)] = s.b.col(j).nonZeros();
      }
    }
    for (std::size_t k = 0; k < k_of_b.size(); ++k) nnz_b[k] = static_cast<double>(k_of_b[k]);
    if (me == 0) {
      share->counts = pagh::ProductCounts{s.m, s.K, s.p, true, std::vector<double>(static_cast<std::size_t>(s.K)),
                                          std::vector<double>(static_cast<std::size_t>(s.K))};
      share->row_entries_a.resize(static_cast<std::size_t>(s.m));
      share->col_entries_b.resize(static_cast<std::size_t>(s.p));
    }
  } catch (...) {
    failure = std::current_exception();
  }
  agree(comm, failure);
  MPI_Gather(&Kr, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  for (int r = 1; r < ranks; ++r) at[static_cast<std::size_t>(r)] = at[static_cast<std::size_t>(r) - 1] + counts[static_cast<std::size_t>(r) - 1];
  MPI_Gatherv(nnz_a.data(), Kr, MPI_DOUBLE, share->counts.nnz_a.data(), counts.data(), at.data(), MPI_DOUBLE, 0, comm);
  MPI_Gatherv(nnz_b.data(), Kr, MPI_DOUBLE, share->counts.nnz_b.data(), counts.data(), at.data(), MPI_DOUBLE, 0, comm);
  MPI_Reduce(rows_a.data(), share->row_entries_a.data(), static_cast<int>(s.m), MPI_INT64_T, MPI_SUM, 0, comm);
  MPI_Reduce(cols_b.data(), share->col_entries_b.data(), static_cast<int>(s.p), MPI_INT64_T, MPI_SUM, 0, comm);
  share->a.emplace<1>().swap(s.a);
  share->b.emplace<1>().swap(s.b);
  share->read = s.timings;
  share->counts_ms = pagh::mpi::wall_ms() - counts_start;
  return share;
}

std::vector<pagh::Entry> evaluate_shares(MPI_Comm comm, InputShare& share, std::vector<pagh::Entry> positions, std::int64_t n,
                                         int threads) {
  const int me = rank_in(comm), ranks = size_of(comm);
  std::vector<double> mine, parts;
  std::exception_ptr failure;
  try {
    positions.resize(static_cast<std::size_t>(n));
    mine.resize(static_cast<std::size_t>(n));
    if (me == 0) parts.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(ranks));
  } catch (...) {
    failure = std::current_exception();
  }
  agree(comm, failure);  // every rank can hold them before any waits for them
  MPI_Datatype entry = entry_type();
  MPI_Bcast(positions.data(), static_cast<int>(n), entry, 0, comm);
  MPI_Type_free(&entry);
  try {
    if (!share.exact) share.exact.emplace(std::get<1>(share.a), std::get<1>(share.b));
    const std::vector<pagh::Entry> values = share.exact->evaluate(positions, threads);
    for (std::size_t t = 0; t < values.size(); ++t) mine[t] = values[t].value;
  } catch (...) {
    failure = std::current_exception();
  }
  agree(comm, failure);
  MPI_Gather(mine.data(), static_cast<int>(n), MPI_DOUBLE, parts.data(), static_cast<int>(n), MPI_DOUBLE, 0, comm);
  if (me != 0) return {};
  for (std::size_t t = 0; t < positions.size(); ++t) {
    double sum = 0.0;
    for (int r = 0; r < ranks; ++r) sum += parts[static_cast<std::size_t>(r) * positions.size() + t];
    positions[t].value = sum, positions[t].spread = 0.0;
  }
  return positions;
}

std::vector<pagh::Entry> diagonal_of_shares(MPI_Comm comm, const InputShare& share) {
  const int me = rank_in(comm), ranks = size_of(comm);
  std::vector<pagh::Entry> mine, parts;
  std::vector<double> d;
  std::exception_ptr failure;
  try {
    mine = pagh::product_diagonal(std::get<1>(share.a), std::get<1>(share.b));
    if (me == 0) d.assign(static_cast<std::size_t>(share.m), 0.0);
  } catch (...) {
    failure = std::current_exception();
  }
  agree(comm, failure);
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(ranks)), at(static_cast<std::size_t>(ranks), 0);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  for (int r = 1; r < ranks; ++r) at[static_cast<std::size_t>(r)] = at[static_cast<std::size_t>(r) - 1] + counts[static_cast<std::size_t>(r) - 1];
  try {
    if (me == 0) parts.resize(static_cast<std::size_t>(at.back()) + static_cast<std::size_t>(counts.back()));
  } catch (...) {
    failure = std::current_exception();
  }
  agree(comm, failure);
  MPI_Datatype entry = entry_type();
  MPI_Gatherv(mine.data(), count, entry, parts.data(), counts.data(), at.data(), entry, 0, comm);
  MPI_Type_free(&entry);
  if (me != 0) return {};
  // Rank order (parts holds rank 0's first), from +0.0, as one process sums k ascending.
  for (const pagh::Entry& e : parts) d[static_cast<std::size_t>(e.row)] += e.value;
  std::vector<pagh::Entry> out;
  for (std::size_t i = 0; i < d.size(); ++i)
    if (d[i] != 0) out.push_back(pagh::Entry{static_cast<std::int64_t>(i), static_cast<std::int64_t>(i), d[i], 0.0});
  return out;
}

std::shared_ptr<const SharedOperands> shared_operands(MPI_Comm comm, InputShare& share, int threads,
                                                      std::function<void(ShareStep, std::int64_t)> announce) {
  return std::make_shared<RankZeroShares>(comm, share, threads, std::move(announce));
}

}  // namespace pagh_mm
