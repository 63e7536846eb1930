// The distributed main command (mpi_multiply.hpp). Rank 0 leads: it runs run_multiply with hooks
// (multiply_hooks.hpp) that send the other ranks, the workers, one command at a time: read the
// inputs (whole, or by byte ranges), sketch your share (as often as run_multiply sketches), evaluate
// your part of these entries or of the diagonal (shared operands), finish with a status. Every
// collective step starts with an agreement on failures (pagh::mpi::agree), so that a rank that
// failed never leaves the others waiting.
#include "mpi_multiply.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <future>
#include <optional>
#include <system_error>
#include <type_traits>
#include <utility>

#include "cli_error.hpp"
#include "commands.hpp"
#include "distributed/mpi_compress.hpp"
#include "inputs.hpp"
#include "mpi_inner_split.hpp"
#include "mpi_node_cores.hpp"
#include "mpi_shares.hpp"
#include "multiply_hooks.hpp"
#include "multiply_options.hpp"
#include "shared_operands.hpp"
#include "sketch/compress_values.hpp"
#include "sketch/params.hpp"

#ifdef PAGH_MM_HAVE_SKETCH_CUDA
#include <cuda_runtime_api.h>
#endif
#ifdef PAGH_DISTRIBUTED_HAVE_NCCL
#include "distributed/nccl_sum.hpp"
#endif

namespace pagh_mm {

#ifdef PAGH_MM_HAVE_SKETCH_CUDA
std::unique_ptr<SketchBackend> make_cuda_backend(int device, int threads);  // cuda_backend.cpp
#endif

namespace {

// read_inputs: the whole files; read_shares: each rank its byte ranges (mpi_shares.hpp), and then
// evaluate and diagonal answer rank 0's questions of the shares.
enum class Step : int { read_inputs = 1, sketch = 2, finish = 3, read_shares = 4, evaluate = 5, diagonal = 6 };

// What rank 0 sends the workers, as raw bytes (every field trivially copyable).
struct Command {
  Step step = Step::finish;
  int status = 0;       // finish: the exit status of the run
  int threads = 0;      // read_inputs, sketch: --threads
  bool transpose_a = false;
  bool use_cuda = false;  // sketch: rank 0 sketches with the CUDA backend; read_*: --backend cuda was asked for
  std::int64_t count = 0;  // evaluate: the positions rank 0 broadcasts next
  pagh::SketchParams params{};
};
static_assert(std::is_trivially_copyable_v<Command>);

// Rank 0's command reaches every rank (workers wait for it without spinning a core).
Command exchange(MPI_Comm comm, Command command) {
  MPI_Request request;
  MPI_Ibcast(&command, sizeof command, MPI_BYTE, 0, comm, &request);
  pagh::mpi::wait_without_spinning(request);
  return command;
}

std::string exchange(MPI_Comm comm, std::string text) {
  long long size = static_cast<long long>(text.size());
  MPI_Bcast(&size, 1, MPI_LONG_LONG, 0, comm);
  text.resize(static_cast<std::size_t>(size));
  MPI_Bcast(text.data(), static_cast<int>(size), MPI_CHAR, 0, comm);
  return text;
}

// The agreement of pagh::mpi::agree with pagh-mm's statuses and messages.
void agree(MPI_Comm comm, std::exception_ptr failure) {
  if (!failure) return pagh::mpi::agree(comm, 0, "");
  const FailureReport report = describe_failure(failure, "");
  pagh::mpi::agree(comm, to_int(report.code), report.message);
}


std::int64_t stored_entries(const MatrixData& m) {
  return m.index() == 0 ? static_cast<std::int64_t>(std::get<0>(m).size()) : static_cast<std::int64_t>(std::get<1>(m).nonZeros());
}
std::int64_t rows_in(const MatrixData& m) { return std::visit([](const auto& x) { return static_cast<std::int64_t>(x.rows()); }, m); }
std::int64_t cols_in(const MatrixData& m) { return std::visit([](const auto& x) { return static_cast<std::int64_t>(x.cols()); }, m); }

// The slowest rank's times of one distributed sketch (rank 0 only), in milliseconds.
struct ShareTimes {
  double sketch_ms = 0, wait_ms = 0, reduce_ms = 0;
  std::int64_t k0 = 0, k1 = 0;  // rank 0's own range
  bool on_devices = false;      // summed by NCCL on the GPUs
  double copy_ms = 0;           // then rank 0's product of the sum (kept on its GPU)
  double connect_wait_ms = -1;  // the slowest rank's wait in the first sum for NCCL's set-up on its thread (-1: none)
};

// The sum of the ranks' sketches on rank 0. GPU ranks sum on their devices through NCCL when the
// build has it and every rank has a GPU of its own: the sum stays on rank 0's GPU as one GPU
// process's product does (pagh::cuda::kept_on_device): queries, the overflow check's and the noise
// model's statistics and single entries are read there, and the host copy is made only for what
// reads every value (a saved sketch, a subtracted known diagonal). Making that product (the hash
// tables, the statistics) is timed apart from the sum. Ranks that share a GPU, and CPU ranks, sum
// host copies through MPI.
struct SketchSum {
  int local_rank = 0;  // the GPU: local rank % GPUs (rank 0, local rank 0, sketches on device 0)
  // A duplicate of the session's communicator that only NCCL's set-up uses, so that it can run on a
  // thread of its own while the main thread's collectives go on (MPI_THREAD_MULTIPLE granted);
  // MPI_COMM_NULL: the set-up runs on the main thread.
  MPI_Comm beside = MPI_COMM_NULL;
  double copy_ms = 0;             // rank 0, the last NCCL sum: making the product of the sum (no host copy)
  double connect_wait_ms = -1;    // the first GPU sum's wait for the set-up's thread (-1: none since last read)
#ifdef PAGH_DISTRIBUTED_HAVE_NCCL
  bool tried = false;
  std::future<std::unique_ptr<pagh::mpi::NcclSum>> connecting;  // the set-up's thread, until the first sum
  std::unique_ptr<pagh::mpi::NcclSum> nccl;
#endif
  // Collective, every rank, once (later calls do nothing): connects the ranks' GPUs and starts
  // NCCL's connections between them (NcclSum::warm_up). With `beside`, all of it (the CUDA start of
  // this rank's device, NCCL's communicator, its connections) runs on a thread while the ranks read
  // or sketch, and the first sum waits for it (ready()). Called beside the read where the run asks
  // for --backend cuda, else at the first GPU sketch.
  void prepare(MPI_Comm comm) {
#ifdef PAGH_DISTRIBUTED_HAVE_NCCL
    if (tried) return;
    tried = true;
    if (beside != MPI_COMM_NULL) {
      try {
        connecting = std::async(std::launch::async, [this] { return connect(beside, local_rank); });
        return;
      } catch (const std::system_error&) {
        // No thread here: connect now, on `beside` still, where the others' threads meet this rank.
      }
    }
    nccl = connect(beside != MPI_COMM_NULL ? beside : comm, local_rank);
#else
    (void)comm;
#endif
  }
  std::optional<pagh::CompressedProduct> operator()(MPI_Comm comm, bool on_gpus, const pagh::CompressedProduct& partial,
                                                    pagh::mpi::ReduceTimings& timings, bool& on_devices) {
#ifdef PAGH_DISTRIBUTED_HAVE_NCCL
    if (on_gpus) prepare(comm), ready(comm);
    on_devices = on_gpus && nccl;
    if (on_devices) {
      std::optional<pagh::cuda::DeviceProduct> sum = pagh::mpi::sum_on_device(partial, *nccl, 0, &timings);
      std::optional<pagh::CompressedProduct> host;
      std::exception_ptr failure;
      try {
        const double made = pagh::mpi::wall_ms();
        if (sum) host.emplace(pagh::cuda::kept_on_device(std::move(*sum), &partial.tables()));
        copy_ms = pagh::mpi::wall_ms() - made;
      } catch (...) {
        failure = std::current_exception();
      }
      agree(comm, failure);  // a copy that failed on rank 0 ends every rank, as a failed sum does
      return host;
    }
#else
    (void)on_gpus, on_devices = false;
#endif
    return pagh::mpi::sum_sketches(partial, comm, 0, &timings);
  }

#ifdef PAGH_DISTRIBUTED_HAVE_NCCL
 private:
  static std::unique_ptr<pagh::mpi::NcclSum> connect(MPI_Comm comm, int local_rank) {
    int devices = 1;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) (void)cudaGetLastError(), devices = 1;
    auto connected = pagh::mpi::NcclSum::connect(comm, local_rank % devices);  // nullptr on every rank, or on none
    if (connected) connected->warm_up();
    return connected;
  }
  // Collective: joins the set-up's thread (once). connect() agrees on its result on every rank, but a
  // thread that failed outside it (memory) is agreed on here too: the NCCL sum on every rank or on none.
  void ready(MPI_Comm comm) {
    if (!connecting.valid()) return;
    const double start = pagh::mpi::wall_ms();
    try {
      nccl = connecting.get();
    } catch (...) {
      nccl.reset();
    }
    connect_wait_ms = pagh::mpi::wall_ms() - start;
    int connected = nccl != nullptr;
    MPI_Allreduce(MPI_IN_PLACE, &connected, 1, MPI_INT, MPI_MIN, comm);
    if (!connected) nccl.reset();
  }
#endif
};

// A CPU rank's share as unmeasured sketch values with the tables the ranks drew together (as
// sketch_operands, which pagh::compress would sketch, but without a product measured for a partial
// that is only summed).
pagh::SketchValues share_values(const MatrixData& a, const MatrixData& b, const pagh::SketchParams& params, pagh::HashTables tables) {
  if (a.index() == 0 && b.index() == 0) return pagh::compress_values(std::get<0>(a), std::get<0>(b), params, std::move(tables));
  const auto as_sparse = [](const MatrixData& m) -> Eigen::SparseMatrix<double> {
    if (m.index() == 1) return std::get<1>(m);
    return std::get<0>(m).sparseView();
  };
  return pagh::compress_values(as_sparse(a), as_sparse(b), params, std::move(tables));
}

// Collective, every rank, for every sketch command: agrees on earlier failures (reading, the
// backend), checks that every rank read the same shapes, sketches this rank's range of k and sums
// the sketches on rank 0 (the others get nullopt). Throws the same exception on every rank.
std::optional<pagh::CompressedProduct> sketch_share(MPI_Comm comm, const std::string& inputs, const MatrixData* a,
                                                    const MatrixData* b, const InputShare* share, SketchBackend* backend,
                                                    std::exception_ptr failure,
                                                    const pagh::SketchParams& params, ShareTimes& times, SketchSum& sum_of) {
  agree(comm, failure);
  // Inputs read by byte ranges (share): this rank's k and the whole matrices' counts come with them.
  const std::int64_t m = share ? share->m : rows_in(*a), K = share ? share->K : cols_in(*a), p = share ? share->p : cols_in(*b);
  try {
    pagh::mpi::require_same(comm, inputs.c_str(),
                            {{"the rows of A", static_cast<std::uint64_t>(m)}, {"the columns of A", static_cast<std::uint64_t>(K)},
                             {"the columns of B", static_cast<std::uint64_t>(p)},
                             {"the stored entries of A", static_cast<std::uint64_t>(share ? share->entries_a : stored_entries(*a))},
                             {"the stored entries of B", static_cast<std::uint64_t>(share ? share->entries_b : stored_entries(*b))}});
  } catch (const pagh::mpi::RankFailure&) {
    throw;
  } catch (const pagh::Error& e) {
    throw CliError(ExitCode::data, "", e.what());  // the same on every rank: the ranks read different files
  }
  const int me = rank_in(comm);
  // CPU ranks draw the hash tables together (each 1/ranks of them) and sum unmeasured values; GPU
  // ranks sketch with their backend, which draws its own.
  const bool on_cpu = backend->name() == "cpu";
  if (backend->name() == "cuda") sum_of.prepare(comm);  // its connections are made beside the sketch
  std::optional<pagh::CompressedProduct> partial;
  std::optional<pagh::SketchValues> values;
  const double start = pagh::mpi::wall_ms();
  std::int64_t k0 = 0, k1 = 0, buckets = 0;
  try {
    buckets = pagh::sketch_length(m, p, params);
    if (share) {
      k0 = share->k0, k1 = share->k1;
    } else {
      const std::vector<std::int64_t> bounds = split_inner(*a, *b, buckets, size_of(comm));
      k0 = bounds[static_cast<std::size_t>(me)], k1 = bounds[static_cast<std::size_t>(me) + 1];
    }
  } catch (...) {
    failure = std::current_exception();
  }
  try {
    if (on_cpu) {
      agree(comm, failure);  // shared_hash_tables is collective
      pagh::HashTables tables = pagh::mpi::shared_hash_tables(m, p, params, comm);
      if (k0 == k1)  // nothing to sketch here: a zero sketch with the same tables
        values.emplace(pagh::SketchValues{.rows = m, .cols = p, .inner = 0, .params = params, .tables = std::move(tables),
                                          .values = std::vector<double>(static_cast<std::size_t>(buckets * params.repetitions), 0.0),
                                          .timings = {}});
      else if (share) values.emplace(share_values(share->a, share->b, pagh::mpi::share_params(params), std::move(tables)));
      else values.emplace(share_values(columns_of(*a, k0, k1), rows_of(*b, k0, k1), pagh::mpi::share_params(params), std::move(tables)));
    } else if (!failure) {
      if (k0 == k1)
        partial.emplace(m, p, 0, params, pagh::draw_hash_tables(params.seed, params.repetitions, m, p, buckets),
                        std::vector<double>(static_cast<std::size_t>(buckets * params.repetitions), 0.0));
      else if (share) partial.emplace(backend->compress(share->a, share->b, pagh::mpi::share_params(params)));
      else partial.emplace(backend->compress(columns_of(*a, k0, k1), rows_of(*b, k0, k1), pagh::mpi::share_params(params)));
    }
  } catch (const pagh::mpi::RankFailure&) {
    throw;  // the same on every rank
  } catch (...) {
    failure = std::current_exception();
  }
  const double sketched = pagh::mpi::wall_ms();
  agree(comm, failure);
  const double agreed = pagh::mpi::wall_ms();
  pagh::mpi::ReduceTimings reduce;
  bool on_devices = false;
  std::optional<pagh::CompressedProduct> sum = on_cpu ? pagh::mpi::sum_sketches(std::move(*values), comm, 0, &reduce)
                                                      : sum_of(comm, backend->name() == "cuda", *partial, reduce, on_devices);
  double slowest[4] = {sketched - start, agreed - sketched, reduce.reduce_ms, std::exchange(sum_of.connect_wait_ms, -1.0)};
  MPI_Reduce(me == 0 ? MPI_IN_PLACE : slowest, slowest, 4, MPI_DOUBLE, MPI_MAX, 0, comm);
  times = {slowest[0], slowest[1], slowest[2], k0, k1, on_devices, sum_of.copy_ms, slowest[3]};
  return sum;
}

// The backend a worker (rank `rank`) sketches with: rank 0's kind; with CUDA, the GPU of its local
// rank (found when the session started: pagh::mpi::local_rank is collective, and rank 0 makes no
// worker backend). No MPI call: it may start on a thread beside the read.
std::unique_ptr<SketchBackend> worker_backend(int rank, int local_rank, bool use_cuda, int threads) {
  if (!use_cuda) return make_cpu_backend(threads);
#ifdef PAGH_MM_HAVE_SKETCH_CUDA
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    (void)cudaGetLastError();
    throw CliError(ExitCode::unavailable, "--backend cuda",
                   "rank " + std::to_string(rank) + " has no usable CUDA device (rank 0 sketches on a GPU)");
  }
  return make_cuda_backend(local_rank % devices, threads);
#else
  (void)local_rank;
  throw CliError(ExitCode::unavailable, "--backend cuda",
                 "rank " + std::to_string(rank) + " runs a pagh-mm without the CUDA backend (rank 0 sketches on a GPU)");
#endif
}

int run_worker(MPI_Comm comm, MPI_Comm beside, int local_rank) {
  std::optional<InputMatrix> a, b;
  std::unique_ptr<InputShare> share;  // read_shares: this rank's k of A and B
  std::string inputs;
  std::exception_ptr read_failure;
  std::unique_ptr<SketchBackend> backend;
  // --backend cuda: the GPU backend starts on a thread beside the read (as rank 0's does), joined at
  // the first sketch.
  std::future<std::unique_ptr<SketchBackend>> starting;
  const auto start_cuda_backend = [&](int threads) {
    if (backend || starting.valid()) return;
    try {
      starting = std::async(std::launch::async, [rank = rank_in(comm), local_rank, threads] { return worker_backend(rank, local_rank, true, threads); });
    } catch (const std::system_error&) {
      // No thread here: the backend starts at the first sketch.
    }
  };
  SketchSum sum_of;
  sum_of.local_rank = local_rank, sum_of.beside = beside;
  for (;;) {
    const Command command = exchange(comm, Command{});
    if (command.step == Step::finish) return command.status;
    if (command.step == Step::read_inputs) {
      const std::string a_path = exchange(comm, ""), b_path = exchange(comm, "");
      inputs = a_path + ", " + b_path;
      if (command.use_cuda) sum_of.prepare(comm), start_cuda_backend(command.threads);
      try {
        a.emplace(read_input(a_path, command.transpose_a, command.threads));
        b.emplace(read_input(b_path, false, command.threads));
      } catch (...) {
        read_failure = std::current_exception();
      }
      continue;
    }
    if (command.step == Step::read_shares) {
      const std::string a_path = exchange(comm, ""), b_path = exchange(comm, "");
      inputs = a_path + ", " + b_path;
      if (command.use_cuda) sum_of.prepare(comm), start_cuda_backend(command.threads);
      try {
        share = read_share(comm, a_path, b_path, command.threads);  // fails on every rank or none: rank 0 ends the run
        if (!share) {  // dense: whole files, as rank 0 reads them now
          a.emplace(read_input(a_path, false, command.threads));
          b.emplace(read_input(b_path, false, command.threads));
        }
      } catch (...) {
        read_failure = std::current_exception();
      }
      continue;
    }
    if (command.step == Step::evaluate || command.step == Step::diagonal) {
      try {
        if (command.step == Step::evaluate) evaluate_shares(comm, *share, {}, command.count, command.threads);
        else diagonal_of_shares(comm, *share);
      } catch (const std::exception&) {
        // Every rank threw the same: rank 0 reports it.
      }
      continue;
    }
    std::exception_ptr failure = read_failure;
    if (starting.valid()) {
      try {
        std::unique_ptr<SketchBackend> started = starting.get();
        if (command.use_cuda) backend = std::move(started);
      } catch (...) {
        if (command.use_cuda && !failure) failure = std::current_exception();
      }
    }
    if (!failure) {
      try {
        if (!backend || (backend->name() == "cuda") != command.use_cuda)
          backend = worker_backend(rank_in(comm), local_rank, command.use_cuda, command.threads);
      } catch (...) {
        failure = std::current_exception();
      }
    }
    ShareTimes times;
    try {
      sketch_share(comm, inputs, a ? &a->data : nullptr, b ? &b->data : nullptr, share.get(), backend.get(), failure, command.params,
                   times, sum_of);
    } catch (const std::exception&) {
      // Every rank threw the same: rank 0 reports it and ends the run with its status.
    }
  }
}

// Rank 0's backend: the selected one sketches rank 0's share; the sum of every rank's is the product.
// Queries run on the host copy of the sum, or on rank 0's GPU where the sum was made there (NCCL).
class DistributedBackend final : public SketchBackend {
 public:
  DistributedBackend(MPI_Comm comm, std::unique_ptr<SketchBackend> own, const MultiplyOptions& options, const InputShare* share,
                     SketchSum& sum_of, NodeCores& cores)
      : comm_(comm), own_(std::move(own)), share_(share), sum_of_(sum_of), cores_(cores), inputs_(options.a_path + ", " + options.b_path),
        threads_(options.sketch.params.threads), verbose_(options.diagnostics.verbose()) {}

  std::string name() const override { return own_->name(); }
  std::string device() const override { return own_->device() + ", " + std::to_string(size_of(comm_)) + " MPI ranks"; }
  std::string exact_method() const override { return own_->exact_method(); }

  pagh::CompressedProduct compress(const MatrixData& a, const MatrixData& b, const pagh::SketchParams& params) override {
    cores_.narrow();  // rank 0 sketches on its own cores, as every rank does
    exchange(comm_, Command{.step = Step::sketch, .threads = threads_, .use_cuda = own_->name() == "cuda", .params = params});
    ShareTimes times;
    try {
      std::optional<pagh::CompressedProduct> sum = sketch_share(comm_, inputs_, &a, &b, share_, own_.get(), nullptr, params, times, sum_of_);
      cores_.widen(threads_);  // what follows (the selection) rank 0 does while the workers wait
      if (verbose_) {
        std::fprintf(stderr,
                     "pagh-mm: distributed over %d ranks (rank 0: k %lld..%lld of %lld): slowest share %.1f ms, "
                     "waiting %.1f ms, sum of the sketches %.1f ms (%s)",
                     size_of(comm_), static_cast<long long>(times.k0), static_cast<long long>(times.k1),
                     static_cast<long long>(cols_in(a)), times.sketch_ms, times.wait_ms, times.reduce_ms,
                     times.on_devices ? "NCCL, on the GPUs" : "MPI, on the hosts");
        if (times.on_devices) std::fprintf(stderr, ", its product on rank 0's GPU %.1f ms (statistics there, no host copy)", times.copy_ms);
        if (times.connect_wait_ms >= 0)
          std::fprintf(stderr, "; NCCL's set-up ran on a thread beside the read, the sum waited %.1f ms for it", times.connect_wait_ms);
        if (cores_.widened()) std::fprintf(stderr, "; rank 0 goes on on its node's %d cores", cores_.node_cores());
        std::fprintf(stderr, "\n");
      }
      return std::move(*sum);
    } catch (const pagh::mpi::RankFailure& e) {
      throw CliError(static_cast<ExitCode>(e.code()), "", e.what());
    }
  }

  Eigen::MatrixXd exact_product(const MatrixData& a, const MatrixData& b, double& ms) override {
    return own_->exact_product(a, b, ms);
  }

 private:
  MPI_Comm comm_;
  std::unique_ptr<SketchBackend> own_;
  const InputShare* share_;  // rank 0's k of A and B when read by byte ranges; the whole a and b otherwise
  SketchSum& sum_of_;        // the Leader's (connected beside the read where --backend cuda was asked for)
  NodeCores& cores_;         // the session's
  std::string inputs_;
  int threads_;
  bool verbose_;
};

class Leader final : public MultiplyHooks {
 public:
  Leader(MPI_Comm comm, MPI_Comm beside, NodeCores& cores) : comm_(comm), cores_(cores) { sum_of_.beside = beside; }

  void started(const MultiplyOptions& options) override {
    options_ = &options;
    // One rank holds everything either way, and the whole-file reader parses on all its threads.
    const std::string whole = size_of(comm_) == 1 ? "one rank" : reads_whole_files(options);
    by_ranges_ = whole.empty();
    if (by_ranges_) return;  // the read is collective: read_inputs starts it on every rank
    if (options.diagnostics.verbose()) std::fprintf(stderr, "pagh-mm: every rank reads the whole inputs (%s)\n", whole.c_str());
    const bool cuda = options.sketch.backend == BackendChoice::cuda;
    exchange(comm_, Command{.step = Step::read_inputs, .threads = options.sketch.params.threads, .transpose_a = options.transpose_a,
                            .use_cuda = cuda});
    exchange(comm_, options.a_path);
    exchange(comm_, options.b_path);
    if (cuda) sum_of_.prepare(comm_);
  }

  std::optional<std::pair<InputMatrix, InputMatrix>> read_inputs(const MultiplyOptions& o) override {
    if (!by_ranges_) return std::nullopt;
    const int threads = o.sketch.params.threads;
    const bool cuda = o.sketch.backend == BackendChoice::cuda;
    exchange(comm_, Command{.step = Step::read_shares, .threads = threads, .use_cuda = cuda});
    exchange(comm_, o.a_path);
    exchange(comm_, o.b_path);
    if (cuda) sum_of_.prepare(comm_);
    const double start = pagh::mpi::wall_ms();
    share_ = read_share(comm_, o.a_path, o.b_path, threads);
    const double read_ms = pagh::mpi::wall_ms() - start;
    const bool verbose = o.diagnostics.verbose();
    if (!share_) {  // dense: whole files, as one process reads them
      if (verbose) std::fprintf(stderr, "pagh-mm: every rank reads the whole inputs (dense enough to be read as dense matrices)\n");
      return std::nullopt;
    }
    if (verbose)
      std::fprintf(stderr,
                   "pagh-mm: inputs read by byte ranges over %d ranks in %.1f ms: rank 0 holds k %lld..%lld of %lld (%lld + %lld of "
                   "%lld + %lld stored entries); rank 0 parsed its ranges in %.1f ms, shuffled by k in %.1f, assembled in %.1f, "
                   "counted in %.1f\n",
                   size_of(comm_), read_ms, static_cast<long long>(share_->k0), static_cast<long long>(share_->k1), static_cast<long long>(share_->K),
                   static_cast<long long>(stored_entries(share_->a)), static_cast<long long>(stored_entries(share_->b)),
                   static_cast<long long>(share_->entries_a), static_cast<long long>(share_->entries_b), share_->read.parse_ms,
                   share_->read.shuffle_ms, share_->read.assemble_ms, share_->counts_ms);
    auto shared = shared_operands(comm_, *share_, threads, [this, threads](ShareStep step, std::int64_t n) {
      exchange(comm_, Command{.step = step == ShareStep::evaluate ? Step::evaluate : Step::diagonal, .threads = threads, .count = n});
    });
    // Empty matrices of the whole shapes: what run_multiply asks beyond them goes to `shared`.
    std::pair<InputMatrix, InputMatrix> inputs{InputMatrix{o.a_path, Eigen::SparseMatrix<double>(share_->m, share_->K)},
                                               InputMatrix{o.b_path, Eigen::SparseMatrix<double>(share_->K, share_->p)}};
    inputs.first.shared = inputs.second.shared = shared;
    inputs.first.shared_entries = share_->entries_a, inputs.second.shared_entries = share_->entries_b;
    return inputs;
  }

  std::unique_ptr<SketchBackend> backend(std::unique_ptr<SketchBackend> selected) override {
    return std::make_unique<DistributedBackend>(comm_, std::move(selected), *options_, share_.get(), sum_of_, cores_);
  }

  void finish(int status) { exchange(comm_, Command{.step = Step::finish, .status = status}); }

 private:
  MPI_Comm comm_;
  NodeCores& cores_;
  const MultiplyOptions* options_ = nullptr;
  bool by_ranges_ = false;
  std::unique_ptr<InputShare> share_;  // rank 0's k of A and B (read_inputs)
  SketchSum sum_of_;                   // rank 0: local rank 0
};

// MPI for the lifetime of the command. Every MPI call is made from this (the main) thread, except
// NCCL's set-up (SketchSum::prepare), which runs on a thread of its own on a communicator of its
// own (beside()) where the MPI library allows calls from several threads at once.
class MpiSession {
 public:
  MpiSession() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    int multiple = provided >= MPI_THREAD_MULTIPLE;  // the same library everywhere, but the dup must be on every rank or none
    MPI_Allreduce(MPI_IN_PLACE, &multiple, 1, MPI_INT, MPI_MIN, comm_);
    if (multiple) MPI_Comm_dup(comm_, &beside_);
    local_rank_ = pagh::mpi::local_rank(comm_);  // collective: every rank, here
    cores_.emplace(comm_);                       // collective too
  }
  ~MpiSession() {
    if (beside_ != MPI_COMM_NULL) MPI_Comm_free(&beside_);
    MPI_Comm_free(&comm_);
    MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  MPI_Comm comm() const { return comm_; }
  MPI_Comm beside() const { return beside_; }  // MPI_COMM_NULL where MPI_THREAD_MULTIPLE was not granted
  int local_rank() const { return local_rank_; }
  NodeCores& cores() { return *cores_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm beside_ = MPI_COMM_NULL;
  int local_rank_ = 0;
  std::optional<NodeCores> cores_;  // made once MPI runs
};

}  // namespace

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name)) return true;
  return false;
}

int run_multiply_distributed(const std::vector<std::string>& args) {
  MpiSession mpi;
  if (rank_in(mpi.comm()) != 0) return run_worker(mpi.comm(), mpi.beside(), mpi.local_rank());
  Leader leader(mpi.comm(), mpi.beside(), mpi.cores());
  int status = 0;
  try {
    status = run_multiply(args, &leader);
  } catch (...) {
    // Printed before the workers learn the status: mpirun ends the job (rank 0 included) as soon
    // as any rank exits with a failure.
    status = report_failure(std::current_exception(), "");
  }
  leader.finish(status);
  return status;
}

}  // namespace pagh_mm
