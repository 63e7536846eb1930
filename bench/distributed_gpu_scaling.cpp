// GPU ranks (distributed/nccl_sum.hpp): 1 and N GPUs, the sketch against the sum, the sum on the
// devices (NCCL) against the sum of host copies (MPI). Run under
//   mpirun -np N distributed_gpu_scaling WORKLOAD RUNS
// Every rank builds the same workload (matrix_io/synthetic.hpp), keeps an equal share of the inner
// indices and sketches it with pagh::cuda::compress on GPU local rank % GPUs. Then the d * b partial
// sketches are summed on rank 0 four ways, each timed alone between barriers:
//   device_sum_ms  pagh::mpi::sum_on_device: segments by ncclSend/ncclRecv, the rank-order add kernel,
//                the gather, the sum made a DeviceProduct on rank 0's GPU (a device copy, its tables
//                drawn there, its Frobenius estimate); nothing copied to the host
//   nccl_sum_ms  pagh::mpi::sum_device_sketches: the same and the copy of the sum to rank 0's host
//                (its parts below)
//   host_sum_ms  what GPU ranks do without NCCL: the copy of each rank's sketch to its host
//                (DeviceProduct::to_host, d2h_ms of it) and pagh::mpi::sum_sketches
//   nccl_reduce_ms  the alternative a user would pick: ncclReduce(ncclSum) of as many doubles to rank
//                0, on the device (NCCL's ring or tree order, not rank order: no determinism contract)
// and whether the NCCL sums (both) and the host sum agree bit for bit (same_bits 1: they add in the
// same order; the device product's values compared through to_host, outside the timing).
// Rank 0 prints one CSV line per run set, each time the median over RUNS runs after one warm-up:
//   workload,gpus,m,K,p,nnz_a,nnz_b,buckets,sketch_ms,wait_ms,device_sum_ms,nccl_sum_ms,exchange_ms,add_ms,
//   gather_ms,host_sum_ms,d2h_ms,nccl_reduce_ms,same_bits
// (sketch_ms the slowest rank's own sketch, wait_ms the longest wait for it at the barrier after; the
// sums' the slowest rank's; gather_ms includes the copy of the sum to rank 0's host). With more ranks than GPUs NCCL cannot connect: the NCCL columns are then empty.
//
// Workloads: sparse N PER (sparse_product, m = K = p = N, PER nonzeros per row of A and column of B);
// dense M K (planted_dense M x K times K x M).
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "distributed/mpi_compress.hpp"
#include "distributed/nccl_sum.hpp"
#include "inner_share.hpp"
#include "matrix_io/synthetic.hpp"
#include "sketch/cuda.hpp"

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void check(bool fine, const char* what) {
  if (!fine) {
    std::fprintf(stderr, "distributed_gpu_scaling: %s failed\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

// NCCL's own reduce, for comparison: a communicator made the usual way.
ncclComm_t plain_nccl(int rank, int size) {
  ncclUniqueId id{};
  if (rank == 0) check(ncclGetUniqueId(&id) == ncclSuccess, "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm = nullptr;
  check(ncclCommInitRank(&comm, size, id, rank) == ncclSuccess, "ncclCommInitRank");
  return comm;
}

template <class MA, class MB>
void run(const std::string& workload, const MA& A, const MB& B, int runs, std::int64_t nnz_a, std::int64_t nnz_b) {
  int rank = 0, size = 1, gpus = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  check(cudaGetDeviceCount(&gpus) == cudaSuccess && gpus > 0, "cudaGetDeviceCount");
  const int device = pagh::mpi::local_rank(MPI_COMM_WORLD) % gpus;
  check(cudaSetDevice(device) == cudaSuccess, "cudaSetDevice");
  const std::int64_t K = A.cols();
  const auto [a, b] = equal_inner_share(A, B, MPI_COMM_WORLD);
  const pagh::SketchParams params = pagh::mpi::share_params({.seed = 1});
  std::string why;
  std::unique_ptr<pagh::mpi::NcclSum> nccl = pagh::mpi::NcclSum::connect(MPI_COMM_WORLD, device, &why);
  ncclComm_t plain = nccl ? plain_nccl(rank, size) : nullptr;
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream) == cudaSuccess, "cudaStreamCreate");
  double* reduced = nullptr;
  std::vector<double> sketch, wait, device_sum, nccl_sum, exchange, add, gather, host_sum, d2h, nccl_reduce;
  std::int64_t buckets = 0;
  int same = 1;
  for (int r = 0; r <= runs; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = pagh::mpi::wall_ms();
    const pagh::cuda::DeviceProduct partial = pagh::cuda::compress(a, b, params, {.device = device});
    check(cudaDeviceSynchronize() == cudaSuccess, "the sketch");
    const double sketched = pagh::mpi::wall_ms();
    MPI_Barrier(MPI_COMM_WORLD);
    const double waited = pagh::mpi::wall_ms();
    buckets = partial.buckets();
    const std::int64_t values = buckets * partial.repetitions();
    double times[9] = {sketched - start, waited - sketched, -1, 0, 0, 0, -1, -1, -1};
    std::optional<pagh::CompressedProduct> on_devices, kept_host;
    if (nccl) {
      pagh::mpi::ReduceTimings kept_times;
      std::optional<pagh::cuda::DeviceProduct> kept = pagh::mpi::sum_on_device(partial, *nccl, 0, &kept_times);
      times[8] = kept_times.reduce_ms;
      if (kept) kept_host.emplace(kept->to_host());  // for the bit check only
      kept.reset();
      MPI_Barrier(MPI_COMM_WORLD);
      pagh::mpi::ReduceTimings t;
      on_devices = pagh::mpi::sum_device_sketches(partial, *nccl, 0, &t);
      times[2] = t.reduce_ms, times[3] = t.exchange_ms, times[4] = t.add_ms, times[5] = t.gather_ms;
      MPI_Barrier(MPI_COMM_WORLD);
      if (!reduced) check(cudaMalloc(&reduced, static_cast<std::size_t>(values) * sizeof(double)) == cudaSuccess, "cudaMalloc");
      start = pagh::mpi::wall_ms();
      check(ncclReduce(partial.device_sketches(), reduced, static_cast<std::size_t>(values), ncclDouble, ncclSum, 0, plain, stream) ==
                ncclSuccess, "ncclReduce");
      check(cudaStreamSynchronize(stream) == cudaSuccess, "ncclReduce's stream");
      times[7] = pagh::mpi::wall_ms() - start;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    start = pagh::mpi::wall_ms();
    const pagh::CompressedProduct host = partial.to_host();
    const double copied = pagh::mpi::wall_ms();
    const std::optional<pagh::CompressedProduct> on_hosts = pagh::mpi::sum_sketches(host, MPI_COMM_WORLD, 0);
    times[6] = pagh::mpi::wall_ms() - start;
    const double d2h_ms = copied - start;
    const std::size_t bytes = static_cast<std::size_t>(values) * sizeof(double);
    if (on_devices && on_hosts) same &= std::memcmp(on_devices->sketch(0).data(), on_hosts->sketch(0).data(), bytes) == 0;
    if (kept_host && on_hosts) same &= std::memcmp(kept_host->sketch(0).data(), on_hosts->sketch(0).data(), bytes) == 0;
    MPI_Reduce(rank == 0 ? MPI_IN_PLACE : times, times, 9, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    double d2h_slowest = d2h_ms;
    MPI_Reduce(rank == 0 ? MPI_IN_PLACE : &d2h_slowest, &d2h_slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (r == 0) continue;  // warm-up
    sketch.push_back(times[0]), wait.push_back(times[1]);
    if (nccl) device_sum.push_back(times[8]), nccl_sum.push_back(times[2]), exchange.push_back(times[3]), add.push_back(times[4]),
        gather.push_back(times[5]), nccl_reduce.push_back(times[7]);
    host_sum.push_back(times[6]), d2h.push_back(d2h_slowest);
  }
  if (reduced) cudaFree(reduced);
  if (plain) ncclCommDestroy(plain);
  cudaStreamDestroy(stream);
  if (rank != 0) return;
  const auto cell = [](const std::vector<double>& v) {
    char text[32] = "";
    if (!v.empty()) std::snprintf(text, sizeof text, "%.1f", median(v));
    return std::string(text);
  };
  std::printf("%s,%d,%lld,%lld,%lld,%lld,%lld,%lld,%.1f,%.1f,%s,%s,%s,%s,%s,%.1f,%.1f,%s,%s\n", workload.c_str(), size,
              static_cast<long long>(A.rows()), static_cast<long long>(K), static_cast<long long>(B.cols()),
              static_cast<long long>(nnz_a), static_cast<long long>(nnz_b), static_cast<long long>(buckets), median(sketch),
              median(wait), cell(device_sum).c_str(), cell(nccl_sum).c_str(), cell(exchange).c_str(), cell(add).c_str(), cell(gather).c_str(), median(host_sum),
              median(d2h), cell(nccl_reduce).c_str(), nccl ? (same ? "1" : "0") : "");
  if (!nccl) std::fprintf(stderr, "distributed_gpu_scaling: no NCCL sum: %s\n", why.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  namespace mio = pagh::matrix_io;
  const std::string workload = argc > 1 ? argv[1] : "";
  if (argc != 5 || (workload != "sparse" && workload != "dense")) {
    std::fprintf(stderr, "usage: mpirun -np N distributed_gpu_scaling sparse N PER RUNS | dense M K RUNS\n");
    MPI_Finalize();
    return 64;
  }
  const std::int64_t x = std::atoll(argv[2]), y = std::atoll(argv[3]);
  const int runs = std::max(1, std::atoi(argv[4]));
  if (workload == "sparse") {
    const auto w = mio::sparse_product({.m = x, .k = x, .p = x, .seed = 3, .a_per_row = y, .b_per_col = y});
    run(workload, w.a, w.b, runs, w.a.nonZeros(), w.b.nonZeros());
  } else {
    const auto w = mio::planted_dense({.m = x, .k = y, .p = x, .seed = 3});
    run(workload, w.a, w.b, runs, x * y, x * y);
  }
  MPI_Finalize();
  return 0;
}
