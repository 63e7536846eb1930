// Strong scaling of the distributed sketch (distributed/mpi_compress.hpp): run under
//   mpirun -np N [--map-by slot:PE=T --bind-to core] distributed_scaling WORKLOAD [options]
// Every rank builds the same workload (matrix_io/synthetic.hpp), keeps an equal share of the inner
// indices, and pagh::mpi::compress sums the sketches on rank 0. Rank 0 prints one CSV line per run:
//   workload,ranks,threads,m,K,p,nnz_a,nnz_b,buckets,sketch_ms,wait_ms,reduce_ms,total_ms,reduce_gbps,mpi_reduce_ms
// with sketch_ms the slowest rank's own sketch, wait_ms the time the others waited for it, reduce_ms
// the sum of the d*b sketch values on rank 0 (pagh::mpi::sum_sketches: reduce-scatter + gather),
// total_ms the whole collective; mpi_reduce_ms, the alternative, MPI_Reduce(MPI_SUM) of as many
// doubles to rank 0; each the median over RUNS runs (after one warm-up when RUNS > 1), separated by
// barriers. Then a line with the stages of the sketch in the last run (each the slowest rank's):
//   stages,workload,ranks,hashing ms,engine ms (the engine's sketch and inverse),lines ms (the rest
//   of pagh::compress_values: checks, the inputs as lines),product ms (the rest of the rank's own
//   sketch: the partial is summed as values, no product is built or measured, so this stays near 0),
//   then the sum's parts: exchange ms (MPI_Alltoallv of the segments; through shared memory the
//   copies into the window and the barriers), add ms, gather ms (to rank 0), then what the kernel did
//   for the last run's compress, summed over the ranks (/proc/vmstat: transparent huge pages faulted
//   in, faults that fell back to 4 KiB pages, direct compaction stalls; getrusage: minor faults);
//   then each rank's timeline in the last run (ms, rank order, from the earliest rank's start):
//   start+tables/engine/lines=end (tables: the shared drawing of the hash tables, as hashing above;
//   end: when its own sketch was done), the unequal finish behind wait_ms
// ROUTE (after THREADS; sparse and dense): shared (default: pagh::mpi::SumRoute::automatic, a
// shared-memory window on one node) or messages (SumRoute::messages, the alternative). PARTS (after
// ROUTE): k cut into that many equal shares, rank r sketching share r (default: one per rank; one rank
// with PARTS 8 sketches alone what each of 8 ranks sketches together). Before the timeline, the
// slowest rank's own sketch in every run, the warm-up's first (a cold process against repeats).
//
// Workloads:
//   sparse N PER   sparse_product with m = K = p = N, PER nonzeros per row of A and column of B
//                  (thin k: the direct path; the reduction of 8 N-length sketches dominates)
//   dense M K      planted_dense M x K times K x M (every k transformed: compute-bound)
//   files N PER DIR  the sparse workload written once to DIR/A.mtx and DIR/B.mtx (by rank 0, if
//                  absent), then the whole run from the files, two ways, each rank on THREADS:
//                  pagh::mpi::read_inner_share (byte ranges + shuffle by k) and every rank reading
//                  both files whole (matrix_io::read_sparse) and keeping its k. One CSV line:
//   files,ranks,threads,n,nnz_a,nnz_b,read_ranges_ms,sketch_ms,reduce_ms,total_ms,read_whole_ms
//                  (the slowest rank's; total_ms = read_ranges_ms + the distributed compress)
#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "distributed/mpi_compress.hpp"
#include "distributed/mpi_read.hpp"
#include "matrix_io/read.hpp"
#include "inner_share.hpp"
#include "matrix_io/synthetic.hpp"
#include "matrix_io/write.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The kernel's counters that tell how the sketch buffers got their pages: THP faults, THP faults
// that fell back to small pages, direct compaction stalls (system-wide), this process's minor faults.
struct PageCounters {
  double thp = 0, fallback = 0, compact_stall = 0, minor = 0;
};
PageCounters page_counters() {
  PageCounters c;
  std::ifstream vmstat("/proc/vmstat");
  std::string name;
  double value = 0;
  while (vmstat >> name >> value) {
    if (name == "thp_fault_alloc") c.thp = value;
    else if (name == "thp_fault_fallback") c.fallback = value;
    else if (name == "compact_stall") c.compact_stall = value;
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  c.minor = static_cast<double>(usage.ru_minflt);
  return c;
}

template <class MA, class MB>
void run(const char* workload, const MA& A, const MB& B, int runs, int threads, std::int64_t nnz_a, std::int64_t nnz_b,
         pagh::mpi::SumRoute route, int parts) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::int64_t K = A.cols();
  const auto [a, b] = equal_inner_share(A, B, MPI_COMM_WORLD, parts);
  const pagh::SketchParams params{.seed = 1, .threads = threads};
  std::vector<double> every_run;  // the slowest rank's own sketch in every run, the warm-up's first
  std::vector<double> sketch, wait, reduce, total, mpi_reduce;
  double stages[7] = {};  // the last run's, each the slowest rank's
  double pages[4] = {};   // the last run's, summed over the ranks
  // The last run's timeline of each rank (ms, rank order): when it started (after the barrier, from
  // the earliest rank's start), its shared tables, engine, lines, and when its own sketch ended.
  constexpr int kTimeline = 5;
  std::vector<double> by_rank(static_cast<std::size_t>(size) * kTimeline);
  bool shared_memory = false;  // the route the last run's sum took
  std::int64_t buckets = 0;
  const int warm_up = runs > 1 ? 1 : 0;  // a single run is timed as it is
  for (int r = 1 - warm_up; r <= runs; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = pagh::mpi::wall_ms();
    pagh::mpi::ReduceTimings t;
    const PageCounters before = page_counters();
    const auto product = pagh::mpi::compress(a, b, params, MPI_COMM_WORLD, 0, &t, route);
    const double elapsed = pagh::mpi::wall_ms() - start;
    const PageCounters after = page_counters();
    // System-wide counters once (rank 0's view), the process's own summed.
    double faults[4] = {rank == 0 ? after.thp - before.thp : 0, rank == 0 ? after.fallback - before.fallback : 0,
                        rank == 0 ? after.compact_stall - before.compact_stall : 0, after.minor - before.minor};
    MPI_Reduce(rank == 0 ? MPI_IN_PLACE : faults, faults, 4, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (product) buckets = product->buckets();
    MPI_Bcast(&buckets, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    std::vector<double> values(static_cast<std::size_t>(buckets * params.repetitions), 1.0), summed(rank == 0 ? values.size() : 0);
    MPI_Barrier(MPI_COMM_WORLD);
    const double reduce_start = pagh::mpi::wall_ms();
    MPI_Reduce(values.data(), summed.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    const double mpi_reduce_ms = pagh::mpi::wall_ms() - reduce_start;
    const pagh::CompressTimings& c = t.sketch;
    double slowest[12] = {t.local_ms, t.wait_ms, t.reduce_ms, elapsed, mpi_reduce_ms, c.hashing_ms, c.sketching_ms + c.inverse_ms,
                          c.total_ms - c.hashing_ms - c.sketching_ms - c.inverse_ms, t.local_ms - c.total_ms,
                          t.exchange_ms, t.add_ms, t.gather_ms};
    const double timeline[kTimeline] = {start, c.hashing_ms, c.sketching_ms + c.inverse_ms,
                                        c.total_ms - c.hashing_ms - c.sketching_ms - c.inverse_ms, start + t.local_ms};
    MPI_Gather(timeline, kTimeline, MPI_DOUBLE, by_rank.data(), kTimeline, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Reduce(rank == 0 ? MPI_IN_PLACE : slowest, slowest, 12, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    every_run.push_back(slowest[0]);
    if (r == 0) continue;  // warm-up
    sketch.push_back(slowest[0]), wait.push_back(slowest[1]), reduce.push_back(slowest[2]), total.push_back(slowest[3]);
    mpi_reduce.push_back(slowest[4]);
    std::copy(slowest + 5, slowest + 12, stages);
    std::copy(faults, faults + 4, pages);
    shared_memory = t.shared_memory;
  }
  if (rank != 0) return;
  const double bytes = 8.0 * static_cast<double>(buckets) * params.repetitions;
  std::printf("%s,%d,%d,%lld,%lld,%lld,%lld,%lld,%lld,%.1f,%.1f,%.1f,%.1f,%.2f,%.1f\n", workload, size, threads,
              static_cast<long long>(A.rows()), static_cast<long long>(K), static_cast<long long>(B.cols()),
              static_cast<long long>(nnz_a), static_cast<long long>(nnz_b), static_cast<long long>(buckets), median(sketch),
              median(wait), median(reduce), median(total), bytes / (median(reduce) * 1e6), median(mpi_reduce));
  std::printf("stages,%s,%d,hashing %.1f,engine %.1f,lines %.1f,product %.1f,sum (%s): exchange %.1f,add %.1f,gather %.1f,"
              "pages: thp %.0f,fallback %.0f,compact stalls %.0f,minor faults %.0f\n",
              workload, size, stages[0], stages[1], stages[2], stages[3], size == 1 ? "none, one rank" : shared_memory ? "shared" : "messages",
              stages[4], stages[5], stages[6], pages[0], pages[1], pages[2], pages[3]);
  std::printf("runs,%s,%d,sketch ms of every run%s:", workload, size, warm_up ? " (the warm-up first)" : "");
  for (const double ms : every_run) std::printf(" %.0f", ms);
  std::printf("\n");
  // One clock on one node: the ranks' start and end are comparable (steady_clock).
  double first = by_rank[0];
  for (int r = 0; r < size; ++r) first = std::min(first, by_rank[static_cast<std::size_t>(r) * kTimeline]);
  std::printf("ranks,%s,%d,start+tables/engine/lines=end ms:", workload, size);
  for (int r = 0; r < size; ++r) {
    const double* x = by_rank.data() + static_cast<std::size_t>(r) * kTimeline;
    std::printf(" %.0f+%.0f/%.0f/%.0f=%.0f", x[0] - first, x[1], x[2], x[3], x[4] - first);
  }
  std::printf("\n");
  std::fflush(stdout);
}

void run_files(const std::filesystem::path& dir, std::int64_t n, std::int64_t per, int runs, int threads) {
  namespace mio = pagh::matrix_io;
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const auto a_path = dir / "A.mtx", b_path = dir / "B.mtx";
  if (rank == 0 && !std::filesystem::exists(b_path)) {
    std::filesystem::create_directories(dir);
    const auto w = mio::sparse_product({.m = n, .k = n, .p = n, .seed = 3, .a_per_row = per, .b_per_col = per});
    mio::write_matrix_market(a_path, w.a);
    mio::write_matrix_market(b_path, w.b);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const pagh::SketchParams params{.seed = 1, .threads = threads};
  const mio::ReadOptions options{.threads = threads};
  std::vector<double> read_ranges, sketch, reduce, total, read_whole;
  std::int64_t nnz[2] = {0, 0};
  for (int r = 0; r < std::max(runs, 1); ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = pagh::mpi::wall_ms();
    const pagh::mpi::InnerShare share = pagh::mpi::read_inner_share(a_path, b_path, MPI_COMM_WORLD, options);
    const double read = pagh::mpi::wall_ms();
    pagh::mpi::ReduceTimings t;
    (void)pagh::mpi::compress(share.a, share.b, params, MPI_COMM_WORLD, 0, &t);
    const double done = pagh::mpi::wall_ms();
    nnz[0] = share.a.nonZeros(), nnz[1] = share.b.nonZeros();
    MPI_Barrier(MPI_COMM_WORLD);
    const double whole_start = pagh::mpi::wall_ms();
    {
      const auto A = mio::read_sparse<double>(a_path, options), B = mio::read_sparse<double>(b_path, options);
      const Eigen::SparseMatrix<double> a = A.middleCols(share.k0, share.k1 - share.k0);
      const Eigen::SparseMatrix<double> bt = B.transpose();
      const Eigen::SparseMatrix<double> b = Eigen::SparseMatrix<double>(bt.middleCols(share.k0, share.k1 - share.k0).transpose());
      if (a.nonZeros() != share.a.nonZeros() || b.nonZeros() != share.b.nonZeros()) throw std::runtime_error("the shares differ from the whole read");
    }
    double slowest[5] = {read - start, t.local_ms, t.reduce_ms, done - start, pagh::mpi::wall_ms() - whole_start};
    MPI_Reduce(rank == 0 ? MPI_IN_PLACE : slowest, slowest, 5, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    read_ranges.push_back(slowest[0]), sketch.push_back(slowest[1]), reduce.push_back(slowest[2]), total.push_back(slowest[3]);
    read_whole.push_back(slowest[4]);
  }
  MPI_Allreduce(MPI_IN_PLACE, nnz, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (rank != 0) return;
  std::printf("files,%d,%d,%lld,%lld,%lld,%.1f,%.1f,%.1f,%.1f,%.1f\n", size, threads, static_cast<long long>(n),
              static_cast<long long>(nnz[0]), static_cast<long long>(nnz[1]), median(read_ranges), median(sketch), median(reduce),
              median(total), median(read_whole));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  const std::string workload = argc > 1 ? argv[1] : "";
  const auto arg = [&](int i, long long fallback) { return argc > i ? std::atoll(argv[i]) : fallback; };
  const int runs = static_cast<int>(arg(4, 3)), threads = static_cast<int>(arg(5, 1));
  const auto route = argc > 6 && std::string(argv[6]) == "messages" ? pagh::mpi::SumRoute::messages : pagh::mpi::SumRoute::automatic;
  const int parts = static_cast<int>(arg(7, 0));  // equal shares of k (default: one per rank)
  try {
    namespace mio = pagh::matrix_io;
    if (workload == "sparse") {
      const std::int64_t n = arg(2, 1000000), per = arg(3, 4);
      const auto w = mio::sparse_product({.m = n, .k = n, .p = n, .seed = 3, .a_per_row = per, .b_per_col = per});
      run("sparse", w.a, w.b, runs, threads, w.a.nonZeros(), w.b.nonZeros(), route, parts);
    } else if (workload == "dense") {
      const std::int64_t m = arg(2, 4096), K = arg(3, 1024);
      const auto w = mio::planted_dense({.m = m, .k = K, .p = m, .seed = 3});
      run("dense", w.a, w.b, runs, threads, w.a.size(), w.b.size(), route, parts);
    } else if (workload == "files" && argc > 4) {
      run_files(argv[4], arg(2, 1000000), arg(3, 4), static_cast<int>(arg(5, 1)), static_cast<int>(arg(6, 1)));
    } else {
      std::fprintf(stderr,
                   "usage: distributed_scaling sparse N PER [RUNS THREADS [shared|messages [PARTS]]] | dense M K [RUNS THREADS [shared|messages [PARTS]]] | "
                   "files N PER DIR [RUNS THREADS]\n");
      status = 64;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "distributed_scaling: %s\n", e.what());
    status = 70;
  }
  MPI_Finalize();
  return status;
}
