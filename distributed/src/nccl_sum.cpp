// The rank-order sum of device sketches over NCCL (distributed/nccl_sum.hpp).
#include "distributed/nccl_sum.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "compress/huge_pages.hpp"
#include "rank_order_add.hpp"

namespace pagh::mpi {
namespace {

constexpr const char* kWhere = "pagh::mpi::NcclSum";
// The sum goes piece by piece, as on the host: one receive buffer of 2^24 values (128 MiB), whatever
// the sketch length.
constexpr std::int64_t kPieceValues = std::int64_t{1} << 24;
// What warm_up() sends every peer (512 KiB): NCCL connects a pair of ranks on all the channels it
// gives them at their first transfer, whatever its size.
constexpr std::int64_t kWarmUpValues = std::int64_t{1} << 16;

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(kWhere, std::string(what) + ": " + cudaGetErrorString(status));
  }
}
void check(ncclResult_t status, const char* what) {
  if (status != ncclSuccess) throw Error(kWhere, std::string(what) + ": " + ncclGetErrorString(status));
}

// Makes `device` current for the lifetime of the guard (the caller's current device is restored).
class OnDevice {
 public:
  explicit OnDevice(int device) {
    check(cudaGetDevice(&previous_), "cudaGetDevice");
    check(cudaSetDevice(device), "cudaSetDevice");
  }
  ~OnDevice() { (void)cudaSetDevice(previous_); }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;

 private:
  int previous_ = 0;
};

// A device buffer that keeps its largest size (the buffers of one sum serve the next).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() {
    if (data_) (void)cudaFree(data_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  double* at_least(std::int64_t values, const char* what) {
    if (values <= capacity_) return data_;
    if (data_) check(cudaFree(data_), "cudaFree");
    data_ = nullptr, capacity_ = 0;
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, static_cast<std::size_t>(values) * sizeof(double));
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      throw Error(kWhere, std::string("out of device memory for ") + what + " (" + std::to_string(values * 8 >> 20) + " MiB)");
    }
    data_ = static_cast<double*>(p), capacity_ = values;
    return data_;
  }

 private:
  double* data_ = nullptr;
  std::int64_t capacity_ = 0;
};

int device_of(const double* pointer) {
  cudaPointerAttributes attributes{};
  check(cudaPointerGetAttributes(&attributes, pointer), "cudaPointerGetAttributes");
  if (attributes.type != cudaMemoryTypeDevice) throw Error(kWhere, "the partial sketch is not in device memory");
  return attributes.device;
}

}  // namespace

struct NcclSum::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1, device = 0;
  ncclComm_t nccl = nullptr;
  cudaStream_t stream = nullptr;
  DeviceBuffer received, result, upload;
  std::thread warming;             // warm_up()'s exchange, joined by finish_warm_up()
  std::exception_ptr warm_failure;  // what it threw

  void finish_warm_up() {
    if (warming.joinable()) warming.join();
  }

  ~Impl() {
    finish_warm_up();
    if (stream) (void)cudaStreamSynchronize(stream), (void)cudaStreamDestroy(stream);
    // Abort, not destroy: ncclCommDestroy finalizes, which waits for the peers, and a rank may free
    // its communicator while another still waits for a command (pagh-mm's workers do). Every sum
    // has completed by then (sum() synchronizes), so nothing is in flight.
    if (nccl) (void)ncclCommAbort(nccl);
  }
};

NcclSum::NcclSum(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NcclSum::~NcclSum() {
  if (impl_) {
    int previous = 0;
    const bool restore = cudaGetDevice(&previous) == cudaSuccess;
    (void)cudaSetDevice(impl_->device);
    impl_.reset();
    if (restore) (void)cudaSetDevice(previous);
  }
}
MPI_Comm NcclSum::comm() const { return impl_->comm; }
int NcclSum::device() const { return impl_->device; }

std::unique_ptr<NcclSum> NcclSum::connect(MPI_Comm comm, int device, std::string* why) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const auto refuse = [&](const std::string& reason) -> std::unique_ptr<NcclSum> {
    if (why) *why = reason;
    return nullptr;
  };
  // Every rank's GPU by UUID (ranks on other nodes have other GPUs; the UUID says which are one).
  struct Seat {
    int usable = 0;
    std::array<char, 16> uuid{};
  };
  Seat mine;
  cudaDeviceProp prop{};
  int previous = 0;
  if (cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(device) == cudaSuccess &&
      cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
    mine.usable = 1;
    std::memcpy(mine.uuid.data(), &prop.uuid, mine.uuid.size());
  }
  (void)cudaGetLastError();
  (void)cudaSetDevice(previous);
  std::vector<Seat> seats(static_cast<std::size_t>(size));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, seats.data(), sizeof mine, MPI_BYTE, comm);
  for (int r = 0; r < size; ++r)
    if (!seats[static_cast<std::size_t>(r)].usable) return refuse("rank " + std::to_string(r) + " has no usable CUDA device");
  for (int r = 0; r < size; ++r)
    for (int s = 0; s < r; ++s)
      if (seats[static_cast<std::size_t>(r)].uuid == seats[static_cast<std::size_t>(s)].uuid)
        return refuse("ranks " + std::to_string(s) + " and " + std::to_string(r) + " share one GPU (NCCL needs a GPU per rank)");

  auto impl = std::make_unique<Impl>();
  impl->comm = comm, impl->rank = rank, impl->size = size, impl->device = device;
  ncclUniqueId id{};
  int fine = rank != 0 || ncclGetUniqueId(&id) == ncclSuccess;
  MPI_Bcast(&fine, 1, MPI_INT, 0, comm);
  if (!fine) return refuse("ncclGetUniqueId failed on rank 0");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm);
  std::string reason;
  {
    OnDevice on(device);
    const ncclResult_t status = ncclCommInitRank(&impl->nccl, size, id, rank);
    if (status != ncclSuccess) impl->nccl = nullptr, reason = ncclGetErrorString(status);
    else if (cudaStreamCreateWithFlags(&impl->stream, cudaStreamNonBlocking) != cudaSuccess)
      (void)cudaGetLastError(), impl->stream = nullptr, reason = "cudaStreamCreate failed";
    else
      try {
        (void)impl->received.at_least(kWarmUpValues * size, "the received segments");  // warm_up()'s, agreed on here
      } catch (const std::exception& e) {
        reason = e.what();
      }
  }
  fine = reason.empty();
  MPI_Allreduce(MPI_IN_PLACE, &fine, 1, MPI_INT, MPI_MIN, comm);
  if (!fine) {
    OnDevice on(device);
    impl.reset();
    return refuse(reason.empty() ? "NCCL's set-up failed on another rank" : "NCCL's set-up failed: " + reason);
  }
  return std::unique_ptr<NcclSum>(new NcclSum(std::move(impl)));
}

void NcclSum::warm_up() {
  Impl& s = *impl_;
  s.finish_warm_up();
  s.warm_failure = nullptr;
  s.warming = std::thread([&s] {
    try {
      OnDevice on(s.device);
      // Like a sum's first step: this rank's slot to every peer, every peer's into its slot (the
      // values do not matter; connect() made the buffer, so nothing here fails for memory on one
      // rank alone). Every pair of ranks, both ways: all the pairs any sum uses.
      double* received = s.received.at_least(kWarmUpValues * s.size, "the received segments");
      check(ncclGroupStart(), "ncclGroupStart");
      for (int r = 0; r < s.size; ++r) {
        if (r == s.rank) continue;
        check(ncclSend(received + s.rank * kWarmUpValues, static_cast<std::size_t>(kWarmUpValues), ncclDouble, r, s.nccl, s.stream),
              "ncclSend");
        check(ncclRecv(received + r * kWarmUpValues, static_cast<std::size_t>(kWarmUpValues), ncclDouble, r, s.nccl, s.stream), "ncclRecv");
      }
      check(ncclGroupEnd(), "ncclGroupEnd");
      check(cudaStreamSynchronize(s.stream), "the warm-up's transfers");
    } catch (...) {
      s.warm_failure = std::current_exception();
    }
  });
}

void NcclSum::finish_warm_up() {
  impl_->finish_warm_up();
  if (impl_->warm_failure) std::rethrow_exception(std::exchange(impl_->warm_failure, nullptr));
}

void NcclSum::sum(const double* mine, std::int64_t count, double* out, int root, ReduceTimings* timings) {
  Impl& s = *impl_;
  finish_warm_up();  // NCCL's error, on the rank that saw it
  OnDevice on(s.device);
  const bool receives = root == kEveryRank || s.rank == root;
  const std::int64_t piece = std::min(kPieceValues, count);
  double* received = s.received.at_least((piece + s.size - 1) / s.size * s.size, "the received segments");
  const auto sync = [&] { check(cudaStreamSynchronize(s.stream), "the sum's transfers"); };
  ReduceTimings parts;
  for (std::int64_t at = 0; at < count; at += kPieceValues) {
    const std::int64_t n = std::min(kPieceValues, count - at);
    // Segments as on the host: rank r owns [edge(r), edge(r + 1)) of the piece.
    const auto edge = [&](int r) { return n * r / s.size; };
    const std::int64_t own = edge(s.rank + 1) - edge(s.rank);
    const double* from = mine + at;
    const double start = wall_ms();
    // Segment r of my values to rank r; every rank's segment `rank` into slot r (slot order = rank order).
    check(ncclGroupStart(), "ncclGroupStart");
    for (int r = 0; r < s.size; ++r) {
      if (r == s.rank) continue;
      const std::int64_t len = edge(r + 1) - edge(r);
      if (len > 0) check(ncclSend(from + edge(r), static_cast<std::size_t>(len), ncclDouble, r, s.nccl, s.stream), "ncclSend");
      if (own > 0) check(ncclRecv(received + r * own, static_cast<std::size_t>(own), ncclDouble, r, s.nccl, s.stream), "ncclRecv");
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
    check(cudaMemcpyAsync(received + s.rank * own, from + edge(s.rank), static_cast<std::size_t>(own) * sizeof(double),
                          cudaMemcpyDeviceToDevice, s.stream),
          "cudaMemcpyAsync");
    sync();
    const double exchanged = wall_ms();
    add_in_rank_order(received, own, s.size, s.stream);
    check(cudaGetLastError(), "the rank-order add kernel");
    sync();
    const double added = wall_ms();
    // The summed segments to root (or to every rank).
    check(ncclGroupStart(), "ncclGroupStart");
    for (int r = 0; r < s.size; ++r) {
      if (r == s.rank) continue;
      const std::int64_t len = edge(r + 1) - edge(r);
      if (own > 0 && (root == kEveryRank || r == root))
        check(ncclSend(received, static_cast<std::size_t>(own), ncclDouble, r, s.nccl, s.stream), "ncclSend");
      if (len > 0 && receives)
        check(ncclRecv(out + at + edge(r), static_cast<std::size_t>(len), ncclDouble, r, s.nccl, s.stream), "ncclRecv");
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
    if (receives)
      check(cudaMemcpyAsync(out + at + edge(s.rank), received, static_cast<std::size_t>(own) * sizeof(double),
                            cudaMemcpyDeviceToDevice, s.stream),
            "cudaMemcpyAsync");
    sync();
    parts.exchange_ms += exchanged - start, parts.add_ms += added - exchanged, parts.gather_ms += wall_ms() - added;
  }
  if (timings) timings->exchange_ms += parts.exchange_ms, timings->add_ms += parts.add_ms, timings->gather_ms += parts.gather_ms;
}

namespace {

// What the sum needs of a partial product, whichever kind holds it.
struct Partial {
  std::int64_t rows = 0, cols = 0, inner = 0, buckets = 0;
  int repetitions = 0;
  SketchParams params;
  CompressTimings timings;
  const double* device_values = nullptr;  // nullptr: upload host_values
  const double* host_values = nullptr;
  const HashTables* tables = nullptr;     // nullptr: drawn from the seed
};

// The sum on the receiving ranks' devices and, with_host, its host copy holding the device product.
struct Summed {
  std::optional<cuda::DeviceProduct> device;
  std::optional<CompressedProduct> host;
};

// with_host: sum_device_sketches, else sum_on_device (`where`, for the errors, names which).
Summed sum_partial(const Partial& partial, NcclSum& nccl, int root, bool with_host, ReduceTimings* timings) {
  const char* where = with_host ? "pagh::mpi::sum_device_sketches" : "pagh::mpi::sum_on_device";
  const MPI_Comm comm = nccl.comm();
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::int64_t inner = check_partials(comm, where, root,
                                            {.rows = partial.rows, .cols = partial.cols, .buckets = partial.buckets, .inner = partial.inner,
                                             .repetitions = partial.repetitions, .seed = partial.params.seed,
                                             .precision = partial.params.precision});

  const double start = wall_ms();
  const std::int64_t values = partial.buckets * partial.repetitions;
  const bool receives = root == kEveryRank || rank == root;
  // Everything that can fail on one rank happens before the transfers, and is agreed on.
  DeviceBuffer upload, result;
  const double* mine = partial.device_values;
  double* out = nullptr;
  std::exception_ptr failure;
  try {
    nccl.finish_warm_up();  // its failure on one rank ends every rank here, before any transfer
    OnDevice on(nccl.device());
    if (mine) {
      if (device_of(mine) != nccl.device())
        throw Error(where, "the partial sketch is on device " + std::to_string(device_of(mine)) + ", the NCCL sum on device " +
                                   std::to_string(nccl.device()));
    } else {
      double* copy = upload.at_least(values, "a copy of the partial sketch");
      check(cudaMemcpy(copy, partial.host_values, static_cast<std::size_t>(values) * sizeof(double), cudaMemcpyHostToDevice),
            "copying the partial sketch to the device");
      mine = copy;
    }
    if (receives) out = result.at_least(values, "the sum");
  } catch (...) {
    failure = std::current_exception();
  }
  agree(comm, failure);

  ReduceTimings parts;
  nccl.sum(mine, values, out, root, &parts);
  // Making the product and the host copy can fail on a receiving rank alone (memory): agreed on too,
  // so that no rank goes on to a collective that another has left.
  Summed summed;
  double done = wall_ms();
  try {
    if (receives) {
      SketchParams params = partial.params;
      params.repetitions = partial.repetitions;
      summed.device.emplace(cuda::DeviceProduct::from_device_values(partial.rows, partial.cols, inner, partial.buckets, params, out,
                                                                    nccl.device(), partial.timings));
      done = wall_ms();
      if (with_host) {
        double copy_ms = 0;
        summed.host.emplace(with_host_copy(std::move(*summed.device), partial.tables, &copy_ms));
        summed.device.reset();
        parts.gather_ms += copy_ms, done += copy_ms;  // the tables drawn on the host (where none came) not counted
      }
    }
  } catch (...) {
    failure = std::current_exception();
  }
  agree(comm, failure);
  if (timings) {
    timings->reduce_ms = done - start;
    timings->exchange_ms = parts.exchange_ms, timings->add_ms = parts.add_ms, timings->gather_ms = parts.gather_ms;
  }
  return summed;
}

Partial partial_of(const CompressedProduct& partial) {
  const DeviceSketches* device = partial.device_sketches();
  return {.rows = partial.rows(), .cols = partial.cols(), .inner = partial.inner(), .buckets = partial.buckets(),
          .repetitions = partial.repetitions(), .params = partial.params(), .timings = partial.timings(),
          .device_values = device ? device->device_values() : nullptr,
          .host_values = device && device->device_values() ? nullptr : partial.sketch(0).data(),  // no host copy made for nothing
          .tables = &partial.tables()};
}

Partial partial_of(const cuda::DeviceProduct& partial) {
  return {.rows = partial.rows(), .cols = partial.cols(), .inner = partial.inner(), .buckets = partial.buckets(),
          .repetitions = partial.repetitions(), .params = partial.params(), .timings = partial.timings(),
          .device_values = partial.device_sketches()};
}

}  // namespace

CompressedProduct with_host_copy(cuda::DeviceProduct sum, const HashTables* tables, double* copy_ms) {
  const double start = wall_ms();
  const std::size_t values = static_cast<std::size_t>(sum.buckets()) * static_cast<std::size_t>(sum.repetitions());
  std::vector<double> host;
  cpu_sketch::assign_zeroed(host, values);  // one page fault per 2 MiB, not per 4 KiB
  if (values) {
    OnDevice on(device_of(sum.device_sketches()));
    check(cudaMemcpy(host.data(), sum.device_sketches(), values * sizeof(double), cudaMemcpyDeviceToHost), "copying the sum to the host");
  }
  if (copy_ms) *copy_ms = wall_ms() - start;
  HashTables drawn = tables ? *tables : draw_hash_tables(sum.params().seed, sum.repetitions(), sum.rows(), sum.cols(), sum.buckets());
  CompressedProduct copy(sum.rows(), sum.cols(), sum.inner(), sum.params(), std::move(drawn), std::move(host), sum.timings());
  return cuda::with_device_queries(std::move(copy), std::move(sum));
}

std::optional<cuda::DeviceProduct> sum_on_device(const CompressedProduct& partial, NcclSum& nccl, int root, ReduceTimings* timings) {
  return std::move(sum_partial(partial_of(partial), nccl, root, false, timings).device);
}
std::optional<cuda::DeviceProduct> sum_on_device(const cuda::DeviceProduct& partial, NcclSum& nccl, int root, ReduceTimings* timings) {
  return std::move(sum_partial(partial_of(partial), nccl, root, false, timings).device);
}
std::optional<CompressedProduct> sum_device_sketches(const CompressedProduct& partial, NcclSum& nccl, int root, ReduceTimings* timings) {
  return std::move(sum_partial(partial_of(partial), nccl, root, true, timings).host);
}
std::optional<CompressedProduct> sum_device_sketches(const cuda::DeviceProduct& partial, NcclSum& nccl, int root, ReduceTimings* timings) {
  return std::move(sum_partial(partial_of(partial), nccl, root, true, timings).host);
}

}  // namespace pagh::mpi
