// pagh::cuda::compress for host inputs: the inputs stream to the device in chunks of k through
// pinned buffers (two of each, so that the copy of chunk c+1 overlaps the sketching of chunk c on a
// second stream), whatever the size of K. The engine sums each group's k in increasing order, so
// the result does not depend on the chunk size (streaming == in-memory, bit for bit).
#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <vector>

#include "estimate/device_state.hpp"
#include "compress/engine.hpp"
#include "pagh/error.hpp"
#include "sketch/cuda.hpp"

namespace pagh::cuda {
namespace {

using index = std::int64_t;
constexpr const char* kWhere = "pagh::cuda::compress";
// Each of the two pinned staging buffers of dense inputs holds at most this many bytes (one k at
// least): enough to keep the copy engine busy, small enough to pin at once.
constexpr std::size_t kMaxPinnedChunkBytes = std::size_t{16} << 20;

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Device memory the staged chunks may use: the option, or a quarter of what is free now.
std::size_t input_budget(const DeviceOptions& options) {
  if (options.max_input_bytes) return options.max_input_bytes;
  std::size_t free = 0, total = 0;
  PAGH_CUDA_CHECK(cudaMemGetInfo(&free, &total), kWhere);
  return free / 4;
}

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { PAGH_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), kWhere); }
  ~Stream() { cudaStreamDestroy(s); }
};
struct Event {
  cudaEvent_t e = nullptr;
  explicit Event(bool timing = false) {
    PAGH_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming), kWhere);
  }
  ~Event() { cudaEventDestroy(e); }
};

// Builds the result from a finished engine (sketches already written on `stream`).
DeviceProduct make_product(int device, index m, index K, index p, const SketchParams& params, Engine& engine,
                           DeviceArray<double> sketches, DeviceArray<double>& frobenius, CompressTimings timings) {
  auto state = std::make_unique<DeviceProduct::State>();
  state->device = device, state->rows = m, state->cols = p, state->inner = K;
  state->params = params, state->timings = timings;
  state->tables = std::move(engine.tables());
  state->sketches = std::move(sketches);
  PAGH_CUDA_CHECK(cudaMemcpyAsync(&state->frobenius, frobenius.data(), sizeof(double), cudaMemcpyDeviceToHost, engine.stream()), kWhere);
  PAGH_CUDA_CHECK(cudaStreamSynchronize(engine.stream()), kWhere);
  return DeviceProduct(std::move(state));
}

// Dense inputs: chunk c holds columns [k0, k0 + kc) of A (contiguous in Eigen's column-major
// storage) and the same rows of B, gathered row by row into the pinned buffer.
template <class Stage, class Scalar>
DeviceProduct compress_dense(const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& A,
                             const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& B, const SketchParams& params,
                             const DeviceOptions& options, Engine& engine, Stream& compute, CompressTimings timings,
                             std::chrono::steady_clock::time_point start) {
  const index m = A.rows(), K = A.cols(), p = B.cols();
  const index per_k = std::max<index>(m + p, 1);
  // Chunks are also capped by the pinned buffers' size: pinning host memory costs in proportion to
  // its size, and small chunks let the conversion of one overlap the copy of the previous one.
  const std::size_t chunk_bytes = std::min(input_budget(options) / 2, kMaxPinnedChunkBytes);
  const index kc = std::clamp<index>(static_cast<index>(chunk_bytes / (sizeof(Stage) * per_k)), 1, std::max<index>(K, 1));
  Stream copy;
  std::array<PinnedArray<Stage>, 2> host;
  std::array<DeviceArray<Stage>, 2> device;
  std::array<Event, 2> copied, consumed;
  for (int i = 0; i < 2 && i * kc < K; ++i) {
    host[i] = PinnedArray<Stage>(static_cast<std::size_t>(kc * per_k), "input chunk");
    device[i] = DeviceArray<Stage>(static_cast<std::size_t>(kc * per_k), "input chunk");
  }
  Event begin(true), sketched(true), finished(true);
  PAGH_CUDA_CHECK(cudaEventRecord(begin.e, compute.s), kWhere);
  const int threads = params.threads > 0 ? params.threads : omp_get_max_threads();
  for (index k0 = 0, c = 0; k0 < K; k0 += kc, ++c) {
    const index n = std::min(kc, K - k0);
    const int slot = static_cast<int>(c % 2);
    Stage* staged = host[slot].data();
    // The pinned buffer is free once the copy of chunk c - 2 has finished.
    if (c >= 2) PAGH_CUDA_CHECK(cudaEventSynchronize(copied[slot].e), kWhere);
    Stage* a_part = staged;
    Stage* b_part = staged + n * m;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && n * per_k > (1 << 20))
    for (index k = 0; k < n; ++k) {
      const Scalar* column = A.data() + (k0 + k) * m;
      for (index i = 0; i < m; ++i) a_part[k * m + i] = static_cast<Stage>(column[i]);
      for (index j = 0; j < p; ++j) b_part[k * p + j] = static_cast<Stage>(B(k0 + k, j));
    }
    // Device buffer `slot` is free once the sketching of chunk c - 2 has consumed it.
    if (c >= 2) PAGH_CUDA_CHECK(cudaStreamWaitEvent(copy.s, consumed[slot].e, 0), kWhere);
    PAGH_CUDA_CHECK(cudaMemcpyAsync(device[slot].data(), staged, static_cast<std::size_t>(n * per_k) * sizeof(Stage),
                                    cudaMemcpyHostToDevice, copy.s), kWhere);
    PAGH_CUDA_CHECK(cudaEventRecord(copied[slot].e, copy.s), kWhere);
    PAGH_CUDA_CHECK(cudaStreamWaitEvent(compute.s, copied[slot].e, 0), kWhere);
    const Stage* a_dev = device[slot].data();
    const Stage* b_dev = a_dev + n * m;
    if constexpr (std::is_same_v<Stage, float>) engine.add_dense(a_dev, std::max<index>(m, 1), b_dev, std::max<index>(p, 1), k0, n);
    else engine.add_dense(a_dev, std::max<index>(m, 1), b_dev, std::max<index>(p, 1), n);
    PAGH_CUDA_CHECK(cudaEventRecord(consumed[slot].e, compute.s), kWhere);
  }
  PAGH_CUDA_CHECK(cudaEventRecord(sketched.e, compute.s), kWhere);
  DeviceArray<double> sketches(static_cast<std::size_t>(params.repetitions * engine.buckets()), "sketches");
  DeviceArray<double> frobenius(1, "Frobenius estimate");
  engine.finish(sketches.data(), frobenius.data());
  PAGH_CUDA_CHECK(cudaEventRecord(finished.e, compute.s), kWhere);
  PAGH_CUDA_CHECK(cudaStreamSynchronize(compute.s), kWhere);
  float sketch_ms = 0, inverse_ms = 0;
  PAGH_CUDA_CHECK(cudaEventElapsedTime(&sketch_ms, begin.e, sketched.e), kWhere);
  PAGH_CUDA_CHECK(cudaEventElapsedTime(&inverse_ms, sketched.e, finished.e), kWhere);
  timings.sketching_ms = sketch_ms, timings.inverse_ms = inverse_ms;
  timings.transformed_k = K;
  timings.total_ms = ms_since(start);
  int device_id = 0;
  PAGH_CUDA_CHECK(cudaGetDevice(&device_id), kWhere);
  return make_product(device_id, m, K, p, params, engine, std::move(sketches), frobenius, timings);
}

template <class Scalar>
DeviceProduct compress_dense_any(const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& A,
                                 const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& B, const SketchParams& params,
                                 const DeviceOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  check_inner_dimensions(A.rows(), A.cols(), B.rows(), B.cols(), kWhere);
  DeviceScope scope(options.device);
  Stream compute;
  CompressTimings timings;
  const auto hash_start = std::chrono::steady_clock::now();
  Engine engine(A.rows(), A.cols(), B.cols(), params, true, options.force_general, options.tuning, compute.s);
  timings.hashing_ms = ms_since(hash_start);
  if (engine.wants_double()) return compress_dense<double>(A, B, params, options, engine, compute, timings, start);
  return compress_dense<float>(A, B, params, options, engine, compute, timings, start);
}

}  // namespace

DeviceProduct compress(const Eigen::MatrixXf& A, const Eigen::MatrixXf& B, const SketchParams& params, const DeviceOptions& options) {
  return compress_dense_any(A, B, params, options);
}
DeviceProduct compress(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const SketchParams& params, const DeviceOptions& options) {
  return compress_dense_any(A, B, params, options);
}

}  // namespace pagh::cuda
