// pagh::cuda::compress for sparse host inputs: columns of A (CSC) and rows of B (CSR) stream to the
// device in chunks of non-empty k. As on the CPU (hybrid_rule.hpp, SketchParams::hybrid), a k whose
// outer product is thin adds it straight into the time-domain sketches (direct_sketch.cu), in
// batches of a fixed number of pairs (so the result does not depend on the memory budget); the
// others go through the general path in chunks bounded by the device-memory budget (one warp
// scatters each line; the fwht plan transforms them). A k with an empty column or row contributes
// nothing and is skipped.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "estimate/device_state.hpp"
#include "compress/engine.hpp"
#include "compress/hybrid_rule.hpp"
#include "pagh/error.hpp"
#include "sketch/cuda.hpp"

namespace pagh::cuda {
namespace {

using index = std::int64_t;
constexpr const char* kWhere = "pagh::cuda::compress";

struct HostLines {  // line k: entries start[k] .. start[k+1]
  std::vector<index> start{0};
  std::vector<std::int32_t> position;
  std::vector<double> value;
  index nnz(index k) const { return start[static_cast<std::size_t>(k + 1)] - start[static_cast<std::size_t>(k)]; }
};

template <int Order>
HostLines lines_of(const Eigen::SparseMatrix<double, Order>& M) {
  HostLines lines;
  for (index k = 0; k < M.outerSize(); ++k) {
    for (typename Eigen::SparseMatrix<double, Order>::InnerIterator it(M, k); it; ++it)
      if (it.value() != 0.0) lines.position.push_back(static_cast<std::int32_t>(it.index())), lines.value.push_back(it.value());
    lines.start.push_back(static_cast<index>(lines.position.size()));
  }
  return lines;
}

// One side of a chunk on the host and on the device.
template <class Stage>
struct StagedLines {
  std::vector<index> start;
  std::vector<std::int32_t> position;
  std::vector<Stage> value;
  DeviceArray<index> d_start;
  DeviceArray<std::int32_t> d_position;
  DeviceArray<Stage> d_value;

  void gather(const HostLines& from, const std::vector<index>& ks) {
    start.assign(1, 0), position.clear(), value.clear();
    for (index k : ks) {
      for (index e = from.start[static_cast<std::size_t>(k)]; e < from.start[static_cast<std::size_t>(k + 1)]; ++e)
        position.push_back(from.position[static_cast<std::size_t>(e)]), value.push_back(static_cast<Stage>(from.value[static_cast<std::size_t>(e)]));
      start.push_back(static_cast<index>(position.size()));
    }
  }
  void reserve_device(index lines, index entries) {
    d_start = DeviceArray<index>(static_cast<std::size_t>(lines + 1), "sparse chunk offsets");
    d_position = DeviceArray<std::int32_t>(static_cast<std::size_t>(std::max<index>(entries, 1)), "sparse chunk indices");
    d_value = DeviceArray<Stage>(static_cast<std::size_t>(std::max<index>(entries, 1)), "sparse chunk values");
  }
  Lines upload(cudaStream_t stream) {
    PAGH_CUDA_CHECK(cudaMemcpyAsync(d_start.data(), start.data(), start.size() * sizeof(index), cudaMemcpyHostToDevice, stream), kWhere);
    if (!position.empty()) {
      PAGH_CUDA_CHECK(cudaMemcpyAsync(d_position.data(), position.data(), position.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice, stream), kWhere);
      PAGH_CUDA_CHECK(cudaMemcpyAsync(d_value.data(), value.data(), value.size() * sizeof(Stage), cudaMemcpyHostToDevice, stream), kWhere);
    }
    Lines lines;
    lines.start = d_start.data(), lines.index = d_position.data();
    if constexpr (std::is_same_v<Stage, double>) lines.values_f64 = d_value.data();
    else lines.values_f32 = d_value.data();
    return lines;
  }
};

template <class Stage>
void stream_chunks(const HostLines& a, const HostLines& b, const std::vector<index>& kept, std::size_t budget, Engine& engine) {
  // Chunks of consecutive kept k whose entries fit the budget (at least one k per chunk).
  const auto entry_bytes = static_cast<index>(sizeof(Stage) + sizeof(std::int32_t));
  const index budget_entries = std::max<index>(static_cast<index>(budget) / entry_bytes, 1);
  std::vector<std::pair<std::size_t, std::size_t>> chunks;  // [begin, end) into kept
  index max_lines = 0, max_a = 0, max_b = 0;
  for (std::size_t i = 0; i < kept.size();) {
    std::size_t j = i;
    index na = 0, nb = 0;
    while (j < kept.size() && (j == i || na + nb + a.nnz(kept[j]) + b.nnz(kept[j]) <= budget_entries))
      na += a.nnz(kept[j]), nb += b.nnz(kept[j]), ++j;
    chunks.emplace_back(i, j);
    max_lines = std::max<index>(max_lines, static_cast<index>(j - i)), max_a = std::max(max_a, na), max_b = std::max(max_b, nb);
    i = j;
  }
  StagedLines<Stage> sa, sb;
  sa.reserve_device(max_lines, max_a);
  sb.reserve_device(max_lines, max_b);
  for (const auto& [begin, end] : chunks) {
    const std::vector<index> ks(kept.begin() + static_cast<std::ptrdiff_t>(begin), kept.begin() + static_cast<std::ptrdiff_t>(end));
    sa.gather(a, ks), sb.gather(b, ks);
    // Copies from pageable memory return once the host data is consumed; the stream orders them
    // after the previous chunk's kernels, so the device buffers can be reused.
    const Lines la = sa.upload(engine.stream()), lb = sb.upload(engine.stream());
    engine.add_sparse(la, lb, static_cast<index>(ks.size()));
  }
}

// The direct k in batches of at most max(2^21, largest single k) pairs, consecutive in k: fixed by
// the inputs alone, so the rounding of the time-domain sums does not depend on the budget. Values
// are staged as double (the CPU multiplies the double entries).
void stream_direct(const HostLines& a, const HostLines& b, const std::vector<index>& ks, Engine& engine) {
  constexpr index kPairsPerBatch = index{1} << 21;
  index largest = 0, total = 0;
  for (index k : ks) largest = std::max(largest, a.nnz(k) * b.nnz(k)), total += a.nnz(k) * b.nnz(k);
  const index cap = std::min(total, std::max(kPairsPerBatch, largest));
  std::vector<std::pair<std::size_t, std::size_t>> batches;
  index max_lines = 0, max_a = 0, max_b = 0;
  for (std::size_t i = 0; i < ks.size();) {
    std::size_t j = i;
    index pairs = 0, na = 0, nb = 0;
    while (j < ks.size() && (j == i || pairs + a.nnz(ks[j]) * b.nnz(ks[j]) <= cap))
      pairs += a.nnz(ks[j]) * b.nnz(ks[j]), na += a.nnz(ks[j]), nb += b.nnz(ks[j]), ++j;
    batches.emplace_back(i, j);
    max_lines = std::max<index>(max_lines, static_cast<index>(j - i)), max_a = std::max(max_a, na), max_b = std::max(max_b, nb);
    i = j;
  }
  engine.reserve_direct(cap);
  StagedLines<double> sa, sb;
  sa.reserve_device(max_lines, max_a);
  sb.reserve_device(max_lines, max_b);
  DeviceArray<index> d_pair_start(static_cast<std::size_t>(max_lines + 1), "direct pair offsets");
  std::vector<index> pair_start;
  for (const auto& [begin, end] : batches) {
    const std::vector<index> batch(ks.begin() + static_cast<std::ptrdiff_t>(begin), ks.begin() + static_cast<std::ptrdiff_t>(end));
    sa.gather(a, batch), sb.gather(b, batch);
    pair_start.assign(1, 0);
    for (index k : batch) pair_start.push_back(pair_start.back() + a.nnz(k) * b.nnz(k));
    const Lines la = sa.upload(engine.stream()), lb = sb.upload(engine.stream());
    PAGH_CUDA_CHECK(cudaMemcpyAsync(d_pair_start.data(), pair_start.data(), pair_start.size() * sizeof(index),
                                    cudaMemcpyHostToDevice, engine.stream()),
                    kWhere);
    engine.add_direct(la, lb, d_pair_start.data(), static_cast<index>(batch.size()), pair_start.back());
  }
}

}  // namespace

DeviceProduct compress(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B, const SketchParams& params,
                       const DeviceOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  check_inner_dimensions(A.rows(), A.cols(), B.rows(), B.cols(), kWhere);
  if (A.rows() > INT32_MAX || B.cols() > INT32_MAX) throw Error(kWhere, "sparse inputs with more than 2^31 - 1 rows or columns");
  DeviceScope scope(options.device);
  cudaStream_t stream = nullptr;
  PAGH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), kWhere);
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { cudaStreamDestroy(s); }
  } guard{stream};

  CompressTimings timings;
  const auto hash_start = std::chrono::steady_clock::now();
  Engine engine(A.rows(), A.cols(), B.cols(), params, false, options.force_general, options.tuning, stream);
  timings.hashing_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - hash_start).count();

  const auto sketch_start = std::chrono::steady_clock::now();
  const HostLines a = lines_of(A);
  const HostLines b = lines_of(Eigen::SparseMatrix<double, Eigen::RowMajor>(B));
  std::vector<index> kept, direct;  // k through the transforms, k added in the time domain
  for (index k = 0; k < A.cols(); ++k)
    if (a.nnz(k) > 0 && b.nnz(k) > 0)
      (take_direct_path(a.nnz(k), b.nnz(k), engine.buckets(), params.hybrid) ? direct : kept).push_back(k);
  timings.transformed_k = static_cast<index>(kept.size());
  timings.direct_k = static_cast<index>(direct.size());
  timings.empty_k = A.cols() - timings.transformed_k - timings.direct_k;
  std::size_t budget = options.max_input_bytes;
  if (!budget) {
    std::size_t free = 0, total = 0;
    PAGH_CUDA_CHECK(cudaMemGetInfo(&free, &total), kWhere);
    budget = free / 4;
  }
  if (engine.wants_double()) stream_chunks<double>(a, b, kept, budget, engine);
  else stream_chunks<float>(a, b, kept, budget, engine);
  if (!direct.empty()) stream_direct(a, b, direct, engine);
  PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);
  timings.sketching_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sketch_start).count();

  const auto inverse_start = std::chrono::steady_clock::now();
  auto state = std::make_unique<DeviceProduct::State>();
  state->sketches = DeviceArray<double>(static_cast<std::size_t>(params.repetitions * engine.buckets()), "sketches");
  DeviceArray<double> frobenius(1, "Frobenius estimate");
  engine.finish(state->sketches.data(), frobenius.data());
  PAGH_CUDA_CHECK(cudaMemcpyAsync(&state->frobenius, frobenius.data(), sizeof(double), cudaMemcpyDeviceToHost, stream), kWhere);
  PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);
  timings.inverse_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - inverse_start).count();
  timings.total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  state->device = options.device, state->rows = A.rows(), state->cols = B.cols(), state->inner = A.cols();
  state->params = params, state->timings = timings;
  state->tables = std::move(engine.tables());
  return DeviceProduct(std::move(state));
}

}  // namespace pagh::cuda
