// GPU ranks sum their sketches on their devices with NCCL (target pagh::distributed_nccl, built when
// the CUDA backends, MPI and NCCL are found). The sum is the one sum_sketches computes on the host,
// in the same order (mpi_compress.hpp): rank r receives segment r of every rank's sketch and adds
// them from +0.0 in rank order, ((0 + v_0) + v_1) + ... + v_{N-1} for every value, then the segments
// are gathered.
// NCCL's own all-reduce adds in the order of its ring or tree, which is not rank order; here the
// segments move by ncclSend/ncclRecv and a kernel adds them, so the device sum equals the host sum
// bit for bit (integer inputs: the single process's sketch; others: the bound of mpi_compress.hpp).
//
//   auto nccl = pagh::mpi::NcclSum::connect(comm, device);       // collective; nullptr: use the host sum
//   auto partial = pagh::cuda::compress(A_local, B_local, params, {.device = device});
//   std::optional<pagh::cuda::DeviceProduct> C = pagh::mpi::sum_on_device(partial, *nccl, 0);  // stays on rank 0's GPU
//   if (C) for (const pagh::Entry& e : C->top_k(10)) ...         // answered there; only the answer is copied
//   // or, where the host needs every value (C->to_host() later does the same):
//   std::optional<pagh::CompressedProduct> H = nccl ? pagh::mpi::sum_device_sketches(partial, *nccl, 0)
//                                                   : pagh::mpi::sum_sketches(partial.to_host(), comm, 0);
//
// NCCL needs one GPU per rank: ranks that share a GPU (more ranks than GPUs) cannot form a
// communicator, and connect() then returns nullptr on every rank, so that every rank takes the host
// sum. Failures before the transfers (shapes that differ, a sketch on another device, device memory
// for the buffers) and after them (memory for the result's product or host copy) are agreed on and
// thrown as the same exception on every rank, as in mpi_compress.hpp; an error NCCL reports during
// the transfers is thrown on the rank that sees it.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "distributed/mpi_compress.hpp"
#include "sketch/compressed_product.hpp"
#include "sketch/cuda.hpp"

namespace pagh::mpi {

// An NCCL communicator over the ranks of an MPI communicator, each rank on one CUDA device, with a
// stream of its own and the buffers of the last sum (kept for the next one).
class NcclSum {
 public:
  // Collective over comm: every rank names the device it sums on. nullptr on every rank, with the
  // reason in *why, when NCCL cannot serve these ranks: a rank without that device, two ranks on the
  // same GPU (compared by UUID across nodes), a failure of NCCL's set-up on any rank.
  // It may run on a thread of its own while the caller's other threads go on (it starts the device's
  // CUDA context, which with NCCL's communicator takes about a second), given MPI_THREAD_MULTIPLE and
  // a communicator that nothing else uses meanwhile (an MPI_Comm_dup of the caller's, made before).
  static std::unique_ptr<NcclSum> connect(MPI_Comm comm, int device, std::string* why = nullptr);
  ~NcclSum();  // local: frees this rank's resources (no collective)
  NcclSum(const NcclSum&) = delete;
  NcclSum& operator=(const NcclSum&) = delete;

  MPI_Comm comm() const;  // the communicator connect() was given (not duplicated: it must outlive this object)
  int device() const;

  // Collective in NCCL's sense (every rank of a connected NcclSum calls it; no MPI): NCCL makes its
  // connections between two ranks at their first transfer, which makes a first sum slower by far
  // than the next (about a second at 4 GPUs); this starts one exchange of a piece with every peer
  // on a thread of its own and returns at once, so that the connections (and the sum's receive
  // buffer) are made while the caller goes on, e.g. sketches. The next sum() (or the destructor)
  // waits for it first; an error of it is thrown by that sum(), or by sum_on_device and
  // sum_device_sketches on every rank (agreed on before their transfers).
  void warm_up();
  // Local: waits for warm_up()'s exchange, if one runs, and throws its error (once).
  void finish_warm_up();

  // Collective: out = the sum over ranks of `count` doubles at `mine` (device memory of device()),
  // in rank order, written to `out` (device memory, count doubles) on root or on every rank
  // (kEveryRank); other ranks may pass nullptr. count must be the same on every rank (not checked
  // here; sum_device_sketches checks its products' shapes). Returns when the sum is complete.
  // timings (optional): exchange_ms, add_ms and gather_ms of this rank, added to what they hold.
  void sum(const double* mine, std::int64_t count, double* out, int root, ReduceTimings* timings = nullptr);

  struct Impl;

 private:
  explicit NcclSum(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Collective: the sum of the ranks' sketches, left on the device of root (or of every rank, with
// kEveryRank) as a cuda::DeviceProduct; the other ranks get nullopt. Its sketch values are those
// sum_sketches (mpi_compress.hpp) computes, bit for bit; top_k, above, decompress and the Frobenius
// estimate run on that device and nothing goes to the host unless to_host() is asked for. The
// same checks as sum_sketches; reduce_ms includes making the product (a device-to-device copy of
// the sum, the hash tables drawn on the device, the Frobenius estimate measured there). A partial
// product without a device copy (a rank that sketched nothing, or one whose sketches subtract()
// changed) is copied to the device first.
std::optional<cuda::DeviceProduct> sum_on_device(const CompressedProduct& partial, NcclSum& nccl, int root = kEveryRank,
                                                 ReduceTimings* timings = nullptr);
std::optional<cuda::DeviceProduct> sum_on_device(const cuda::DeviceProduct& partial, NcclSum& nccl, int root = kEveryRank,
                                                 ReduceTimings* timings = nullptr);

// Local: the host copy of a sum kept on the device, holding `sum` for top_k, above and decompress
// (what sum_device_sketches returns on the receiving ranks). tables: the host's hash tables of the
// sum where the caller has them (a partial product's: the same seed), drawn from the seed otherwise.
// copy_ms (optional): the time of the copy of the d * b values alone.
CompressedProduct with_host_copy(cuda::DeviceProduct sum, const HashTables* tables = nullptr, double* copy_ms = nullptr);

// Collective: sum_on_device with the host copy of the sum: on root (or on every rank) a
// CompressedProduct equal to sum_sketches' result that holds the device product for top_k, above
// and decompress, as one process's CUDA backend returns its product (pagh::cuda::with_device_queries).
// reduce_ms includes the copy of the d * b values to the host.
std::optional<CompressedProduct> sum_device_sketches(const CompressedProduct& partial, NcclSum& nccl, int root = kEveryRank,
                                                     ReduceTimings* timings = nullptr);
std::optional<CompressedProduct> sum_device_sketches(const cuda::DeviceProduct& partial, NcclSum& nccl, int root = kEveryRank,
                                                     ReduceTimings* timings = nullptr);

}  // namespace pagh::mpi
