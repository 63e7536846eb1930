// Strong scaling of the distributed sketch (distributed/mpi_compress.hpp): run under
//   mpirun -np N [--map-by slot:PE=T --bind-to core] distributed_scaling WORKLOAD [options]
// Every rank builds the same workload (matrix_io/synthetic.hpp), keeps an equal share of the inner
// indices, and pagh::mpi::compress sums the sketches on rank 0. Rank 0 prints one CSV line per run:
//   workload,ranks,threads,m,K,p,nnz_a,nnz_b,buckets,sketch_ms,wait_ms,reduce_ms,total_ms,reduce_gbps
// with sketch_ms the slowest rank's own sketch, wait_ms the time the others waited for it, reduce_ms
// the sum of the d*b sketch values on rank 0 (MPI_Reduce), total_ms the whole collective; each the
// median over RUNS runs (after one warm-up when RUNS > 1), separated by barriers.
//
// Workloads:
//   sparse N PER   sparse_product with m = K = p = N, PER nonzeros per row of A and column of B
//                  (thin k: the direct path; the reduction of 8 N-length sketches dominates)
//   dense M K      planted_dense M x K times K x M (every k transformed: compute-bound)
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "distributed/mpi_compress.hpp"
#include "matrix_io/synthetic.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class MA, class MB>
void run(const char* workload, const MA& A, const MB& B, int runs, int threads, std::int64_t nnz_a, std::int64_t nnz_b) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::int64_t K = A.cols(), k0 = K * rank / size, k1 = K * (rank + 1) / size;
  const MA a = A.middleCols(k0, k1 - k0);
  MB b;
  if constexpr (std::is_same_v<MB, Eigen::SparseMatrix<double>>) {
    const Eigen::SparseMatrix<double> bt = B.transpose();
    b = Eigen::SparseMatrix<double>(bt.middleCols(k0, k1 - k0).transpose());
  } else {
    b = B.middleRows(k0, k1 - k0);
  }
  const pagh::SketchParams params{.seed = 1, .threads = threads};
  std::vector<double> sketch, wait, reduce, total;
  std::int64_t buckets = 0;
  const int warm_up = runs > 1 ? 1 : 0;  // a single run is timed as it is
  for (int r = 1 - warm_up; r <= runs; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = pagh::mpi::wall_ms();
    pagh::mpi::ReduceTimings t;
    const auto product = pagh::mpi::compress(a, b, params, MPI_COMM_WORLD, 0, &t);
    const double elapsed = pagh::mpi::wall_ms() - start;
    if (product) buckets = product->buckets();
    double slowest[4] = {t.local_ms, t.wait_ms, t.reduce_ms, elapsed};
    MPI_Reduce(rank == 0 ? MPI_IN_PLACE : slowest, slowest, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (r == 0) continue;  // warm-up
    sketch.push_back(slowest[0]), wait.push_back(slowest[1]), reduce.push_back(slowest[2]), total.push_back(slowest[3]);
  }
  if (rank != 0) return;
  const double bytes = 8.0 * static_cast<double>(buckets) * params.repetitions;
  std::printf("%s,%d,%d,%lld,%lld,%lld,%lld,%lld,%lld,%.1f,%.1f,%.1f,%.1f,%.2f\n", workload, size, threads,
              static_cast<long long>(A.rows()), static_cast<long long>(K), static_cast<long long>(B.cols()),
              static_cast<long long>(nnz_a), static_cast<long long>(nnz_b), static_cast<long long>(buckets), median(sketch),
              median(wait), median(reduce), median(total), bytes / (median(reduce) * 1e6));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  const std::string workload = argc > 1 ? argv[1] : "";
  const auto arg = [&](int i, long long fallback) { return argc > i ? std::atoll(argv[i]) : fallback; };
  const int runs = static_cast<int>(arg(4, 3)), threads = static_cast<int>(arg(5, 1));
  try {
    namespace mio = pagh::matrix_io;
    if (workload == "sparse") {
      const std::int64_t n = arg(2, 1000000), per = arg(3, 4);
      const auto w = mio::sparse_product({.m = n, .k = n, .p = n, .seed = 3, .a_per_row = per, .b_per_col = per});
      run("sparse", w.a, w.b, runs, threads, w.a.nonZeros(), w.b.nonZeros());
    } else if (workload == "dense") {
      const std::int64_t m = arg(2, 4096), K = arg(3, 1024);
      const auto w = mio::planted_dense({.m = m, .k = K, .p = m, .seed = 3});
      run("dense", w.a, w.b, runs, threads, w.a.size(), w.b.size());
    } else {
      std::fprintf(stderr, "usage: distributed_scaling sparse N PER [RUNS THREADS] | dense M K [RUNS THREADS]\n");
      status = 64;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "distributed_scaling: %s\n", e.what());
    status = 70;
  }
  MPI_Finalize();
  return status;
}
