// The CUDA compression engine (engine.hpp): chooses the fused or the general path, owns their
// buffers, and finishes with one inverse transform per repetition, as the CPU engine does.
#include "cuda/engine.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/cluster_lists.hpp"
#include "cuda/direct_sketch.hpp"
#include "cuda/wide_layout.hpp"
#include "pagh/error.hpp"

namespace pagh::cuda {
namespace {

constexpr const char* kWhere = "pagh::cuda::compress";
// Vectors of one general-path batch: about this many bytes (the fwht plan runs them as one batch).
constexpr std::int64_t kBatchBytes = std::int64_t{256} << 20;

int dtype_code(fwht::DType t) {
  switch (t) {
    case fwht::DType::f64: return 0;
    case fwht::DType::f32: return 1;
    case fwht::DType::f16: return 2;
    default: return 3;
  }
}

// Host <-> device copies of the tables and lists built on the host (plan time only).
template <class T>
void upload(const std::vector<T>& host, DeviceArray<T>& device_array, const char* what, cudaStream_t stream) {
  device_array = DeviceArray<T>(host.size(), what);
  if (!host.empty())
    PAGH_CUDA_CHECK(cudaMemcpyAsync(device_array.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream), kWhere);
}
template <class T>
std::vector<T> copy_back(const DeviceArray<T>& device_array, cudaStream_t stream) {
  std::vector<T> host(device_array.size());
  if (!host.empty())
    PAGH_CUDA_CHECK(cudaMemcpyAsync(host.data(), device_array.data(), device_array.bytes(), cudaMemcpyDeviceToHost, stream), kWhere);
  return host;
}
// Permuted lines of one wide launch: about this many bytes (the chunk is cut into such pieces).
// When lines are staged in the kernel, the permuted lines serve only device inputs that are not
// 16-byte aligned (a Compressor's), so their buffer is kept small: more, shorter launches there
// (the sums do not depend on the pieces), 240 MiB less device memory everywhere else.
constexpr std::int64_t kWideLineBytes = std::int64_t{256} << 20;
constexpr std::int64_t kWideFallbackLineBytes = std::int64_t{16} << 20;

// The wide kernel (wide_sketch.cu) replaces the slice and cluster kernels for 2^14 <= b <= 2^17
// (bench/NOTES.md "sketch-cuda wide kernel"). PAGH_SKETCH_WIDE=0 turns it off (then
// PAGH_SKETCH_CLUSTER chooses as before, and 16-bit precisions take the general path).
bool wide_allowed(int log2b, std::int64_t m, std::int64_t p) {
  if (const char* knob = std::getenv("PAGH_SKETCH_WIDE"); knob && std::string(knob) == "0") return false;
  return log2b >= kWideLog && log2b <= kWideMaxLog && m <= kWideMaxLine && p <= kWideMaxLine;
}

}  // namespace

Engine::Engine(std::int64_t m, std::int64_t K, std::int64_t p, const SketchParams& params, bool dense, bool force_general,
               cudaStream_t stream)
    : m_(m), K_(K), p_(p), b_(sketch_length(m, p, params)), d_(params.repetitions), params_(params), stream_(stream) {
  if (params.repetitions < 1) throw Error(kWhere, "repetitions = " + std::to_string(params.repetitions) + " must be at least 1");
  if (fwht::is_integer(params.precision))
    throw Error(kWhere, "precision " + std::string(fwht::to_string(params.precision)) + " is not supported (use f64, f32, f16 or bf16)");
  log2b_ = std::countr_zero(static_cast<std::uint64_t>(b_));
  const fwht::Options forward_options{.stabilization = params.stabilization, .algorithm = params.algorithm, .compute = params.compute};
  // The forward plan validates the FWHT options with the same message as the CPU engine.
  const bool plain = params.stabilization == fwht::Stabilization::none && params.algorithm == fwht::Algorithm::folklore;
  // 16-bit storage (either compute type): only the wide kernel rounds like the CPU engine
  // (wide_sketch.cu).
  const bool sixteen = fwht::size_of(params.precision) == 2;
  const bool fused_precision = params.precision == fwht::DType::f32 || (sixteen && wide_allowed(log2b_, m, p));
  fused_ = dense && !force_general && fused_precision && plain && log2b_ >= kSliceLog && log2b_ <= 27 && m <= INT32_MAX &&
           p <= INT32_MAX;
  acc_bytes_ = params.precision == fwht::DType::f64 ? 8 : 4;
  const std::string precision_name(fwht::to_string(params.precision));
  if (fused_) path_ = "fused";
  else if (force_general) path_ = "general (forced)";
  else if (!dense) path_ = "general (sparse inputs)";
  else if (params.precision == fwht::DType::f64) path_ = "general (precision f64)";
  else if (!plain) path_ = "general (stabilized or Alman-Rao transform)";
  else if (sixteen) path_ = "general (precision " + precision_name + ": b = 2^" + std::to_string(log2b_) + " or lines outside the wide kernel's range)";
  else path_ = "general (b = 2^" + std::to_string(log2b_) + " outside the fused kernel's 2^12..2^27)";

  tables_ = draw_device_tables(params.seed, d_, m, p, b_, stream);
  const fwht::DType acc_type = acc_bytes_ == 8 ? fwht::DType::f64 : fwht::DType::f32;
  inverse_.emplace(fwht::Shape{.n = b_, .batch = d_}, acc_type,
                   fwht::Options{.normalization = fwht::Normalization::inverse, .stabilization = params.stabilization,
                                 .algorithm = params.algorithm},
                   fwht::Backend::cuda);
  const auto db = static_cast<std::size_t>(d_ * b_);
  spectrum_ = DeviceArray<char>(db * static_cast<std::size_t>(acc_bytes_), "sketch spectra");

  if (fused_ && prepare_wide(stream)) {
    path_ = "fused, wide slices of 2^" + std::to_string(kWideLog) + (wide_gather_ ? ", staged lines" : ", permuted lines");
  } else if (fused_ && prepare_clusters(stream)) {
    path_ = "fused, clusters of " + std::to_string(1 << cluster_);
  } else if (fused_) {
    code_a_ = DeviceArray<std::uint32_t>(static_cast<std::size_t>(d_ * m), "scatter codes of A");
    code_b_ = DeviceArray<std::uint32_t>(static_cast<std::size_t>(d_ * p), "scatter codes of B");
    DeviceArray<int> overflow(1, "scatter check");
    PAGH_CUDA_CHECK(cudaMemsetAsync(overflow.data(), 0, sizeof(int), stream), kWhere);
    prepare_fused_tables(tables_.bucket_a.data(), tables_.sign_a.data(), m, d_, code_a_.data(), overflow.data(), stream);
    prepare_fused_tables(tables_.bucket_b.data(), tables_.sign_b.data(), p, d_, code_b_.data(), overflow.data(), stream);
    int overflowed = 0;
    PAGH_CUDA_CHECK(cudaMemcpyAsync(&overflowed, overflow.data(), sizeof(int), cudaMemcpyDeviceToHost, stream), kWhere);
    PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);
    if (overflowed) {  // 17+ entries of one warp instruction on one slot: astronomically rare
      fused_ = false;
      path_ = "general (scatter collisions beyond the fused kernel's encoding)";
      code_a_ = {}, code_b_ = {};
    }
  }
  if (fused_) {
    int device = 0, sms = 0;
    PAGH_CUDA_CHECK(cudaGetDevice(&device), kWhere);
    PAGH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), kWhere);
    // Enough groups of k for one full wave of resident blocks (groups x slices x d blocks).
    const std::int64_t slices = b_ >> (wide_ ? kWideLog : kSliceLog);
    const std::int64_t resident = wide_           ? std::int64_t{wide_blocks_per_sm()} * sms
                                  : cluster_ > 0 ? cluster_resident_blocks(cluster_)
                                                 : std::int64_t{fused_blocks_per_sm()} * sms;
    groups_ = static_cast<int>(std::clamp<std::int64_t>(resident / (slices * d_), 1, std::max<std::int64_t>(K, 1)));
    path_ += " (" + std::to_string(groups_) + " groups x " + std::to_string(slices) + " slices x " + std::to_string(d_) + " repetitions)";
    partials_ = DeviceArray<float>(static_cast<std::size_t>(groups_) * db, "partial spectra");
  } else {
    const std::int64_t storage = static_cast<std::int64_t>(fwht::size_of(params.precision));
    pairs_per_batch_ = std::clamp<std::int64_t>(kBatchBytes / (2 * b_ * std::max<std::int64_t>(storage, acc_bytes_)), 1,
                                                std::max<std::int64_t>(K, 1));
    const auto vector_count = static_cast<std::size_t>(2 * pairs_per_batch_ * b_);
    vectors_ = DeviceArray<char>(vector_count * static_cast<std::size_t>(storage), "sketch vectors");
    if (storage == 2) scratch_ = DeviceArray<char>(vector_count * 4, "scatter buffer");
    forward_.emplace(fwht::Shape{.n = b_, .batch = 2 * pairs_per_batch_}, params.precision, forward_options, fwht::Backend::cuda);
  }
  reset();
}

// The cluster kernel scatters each entry once per cluster of 2^c slices instead of once per slice,
// but pays two cluster barriers and remote reads per k: it wins only when the slice kernel's
// replication (b / 2^12) is large. Measured on the H200 (bench/NOTES.md): c = 3 from b = 2^16 on;
// c = 4 (non-portable clusters of 16) halves the scatter but not the time (barrier waits grow).
// PAGH_SKETCH_CLUSTER = 0 (slices only) or 1..4 (the cluster size's log2, for any b >= 2^(12+c))
// overrides the choice.
static int cluster_log_for(int log2b) {
  if (const char* knob = std::getenv("PAGH_SKETCH_CLUSTER")) {
    const int c = std::atoi(knob);
    return c >= 1 && c <= kMaxLogCluster && log2b >= kSliceLog + c ? c : 0;
  }
  return log2b >= 16 ? 3 : 0;
}

bool Engine::prepare_wide(cudaStream_t stream) {
  if (!wide_allowed(log2b_, m_, p_)) return false;
  const auto bucket_a = copy_back(tables_.bucket_a, stream), bucket_b = copy_back(tables_.bucket_b, stream);
  const auto sign_a = copy_back(tables_.sign_a, stream), sign_b = copy_back(tables_.sign_b, stream);
  PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);
  // The dummy cells follow both buffers in the kernel's shared memory (wide_layout.hpp).
  WideLayout a, b;
  constexpr std::uint32_t buffer_bytes = std::uint32_t{4} << kWideLog;
  build_wide_layout(bucket_a.data(), sign_a.data(), m_, d_, 2 * buffer_bytes, a);
  build_wide_layout(bucket_b.data(), sign_b.data(), p_, d_, buffer_bytes, b);
  upload(a.source, wide_source_a_, "wide layout of A", stream), upload(a.code, wide_code_a_, "wide layout of A", stream);
  upload(a.segment, wide_segment_a_, "wide layout of A", stream);
  upload(b.source, wide_source_b_, "wide layout of B", stream), upload(b.code, wide_code_b_, "wide layout of B", stream);
  upload(b.segment, wide_segment_b_, "wide layout of B", stream);
  wide_ld_a_ = a.padded, wide_ld_b_ = b.padded;
  // Short lines are staged in shared memory and gathered in the kernel (no permutation pass) when
  // they are 16-byte aligned at execution; PAGH_SKETCH_WIDE_GATHER=0 always permutes (tests).
  const char* gather_knob = std::getenv("PAGH_SKETCH_WIDE_GATHER");
  wide_gather_ = !(gather_knob && std::string(gather_knob) == "0") && wide_gather_fits(m_, p_);
  const std::int64_t per_k = d_ * (wide_ld_a_ + wide_ld_b_) * static_cast<std::int64_t>(sizeof(float));
  const std::int64_t line_bytes = wide_gather_ ? kWideFallbackLineBytes : kWideLineBytes;
  wide_chunk_ = std::clamp<std::int64_t>(line_bytes / per_k, 1, std::max<std::int64_t>(K_, 1));
  if (const char* knob = std::getenv("PAGH_SKETCH_WIDE_PIECE"))  // tests: pieces of this many k
    wide_chunk_ = std::clamp<std::int64_t>(std::atoll(knob), 1, wide_chunk_);
  wide_lines_ = DeviceArray<float>(static_cast<std::size_t>(wide_chunk_ * d_ * (wide_ld_a_ + wide_ld_b_)), "permuted lines");
  PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);  // the host vectors go out of scope
  wide_ = true;
  return true;
}

bool Engine::prepare_clusters(cudaStream_t stream) {
  const int log_cluster = cluster_log_for(log2b_);
  if (log_cluster == 0) return false;
  int device = 0, supported = 0;
  PAGH_CUDA_CHECK(cudaGetDevice(&device), kWhere);
  PAGH_CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrClusterLaunch, device), kWhere);
  if (!supported || cluster_resident_blocks(log_cluster) == 0) return false;
  const auto bucket_a = copy_back(tables_.bucket_a, stream), bucket_b = copy_back(tables_.bucket_b, stream);
  const auto sign_a = copy_back(tables_.sign_a, stream), sign_b = copy_back(tables_.sign_b, stream);
  PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);
  ClusterLists a, b;
  if (!build_cluster_lists(bucket_a.data(), sign_a.data(), m_, d_, log_cluster, a) ||
      !build_cluster_lists(bucket_b.data(), sign_b.data(), p_, d_, log_cluster, b))
    return false;
  upload(a.index, list_index_a_, "cluster lists of A", stream), upload(a.code, list_code_a_, "cluster lists of A", stream);
  upload(a.start, list_start_a_, "cluster lists of A", stream);
  upload(b.index, list_index_b_, "cluster lists of B", stream), upload(b.code, list_code_b_, "cluster lists of B", stream);
  upload(b.start, list_start_b_, "cluster lists of B", stream);
  PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);  // the host vectors go out of scope
  cluster_ = log_cluster;
  return true;
}

void Engine::reset() {
  started_ = false;
  if (!fused_) PAGH_CUDA_CHECK(cudaMemsetAsync(spectrum_.data(), 0, spectrum_.bytes(), stream_), kWhere);
  if (direct_used_) PAGH_CUDA_CHECK(cudaMemsetAsync(direct_.data(), 0, direct_.bytes(), stream_), kWhere);
  direct_used_ = false;
}

void Engine::reserve_direct(std::int64_t max_pairs) {
  if (max_pairs <= direct_max_pairs_) return;
  if (direct_.size() == 0) {
    direct_ = DeviceArray<double>(static_cast<std::size_t>(d_ * b_), "time-domain sketches");
    PAGH_CUDA_CHECK(cudaMemsetAsync(direct_.data(), 0, direct_.bytes(), stream_), kWhere);
  }
  direct_workspace_ = DeviceArray<char>(direct_workspace_bytes(max_pairs, log2b_), "direct-path workspace");
  direct_max_pairs_ = max_pairs;
}

void Engine::add_direct(const Lines& a, const Lines& b, const std::int64_t* pair_start, std::int64_t count, std::int64_t pairs) {
  if (count <= 0 || pairs <= 0) return;
  if (pairs > direct_max_pairs_) throw Error(kWhere, "internal: reserve_direct was not called for this batch");
  for (int t = 0; t < d_; ++t) {
    DirectArgs args;
    args.a = a, args.b = b, args.pair_start = pair_start, args.lines = count, args.pairs = pairs;
    args.bucket_a = tables_.bucket_a.data() + t * m_, args.sign_a = tables_.sign_a.data() + t * m_;
    args.bucket_b = tables_.bucket_b.data() + t * p_, args.sign_b = tables_.sign_b.data() + t * p_;
    args.log2b = log2b_, args.time_domain = direct_.data() + t * b_;
    launch_direct(args, direct_workspace_.data(), direct_workspace_.bytes(), direct_max_pairs_, stream_);
  }
  direct_used_ = true;
}

void Engine::add_dense(const float* a, std::int64_t lda, const float* bt, std::int64_t ldbt, std::int64_t k_first,
                       std::int64_t count) {
  if (count <= 0) return;
  if (fused_ && wide_) {
    WideArgs args;
    args.code_a = wide_code_a_.data(), args.code_b = wide_code_b_.data();
    args.segment_a = wide_segment_a_.data(), args.segment_b = wide_segment_b_.data();
    args.ld_a = wide_ld_a_, args.ld_b = wide_ld_b_;
    args.partials = partials_.data();
    args.log2b = log2b_, args.repetitions = d_, args.groups = groups_;
    args.storage = params_.precision == fwht::DType::f16    ? WideStorage::f16
                   : params_.precision == fwht::DType::bf16 ? WideStorage::bf16
                                                            : WideStorage::f32;
    args.storage_arithmetic = args.storage != WideStorage::f32 && params_.compute == fwht::Compute::storage;
    const auto aligned = [](const float* x, std::int64_t ld) { return reinterpret_cast<std::uintptr_t>(x) % 16 == 0 && ld % 4 == 0; };
    if (wide_gather_ && aligned(a, lda) && aligned(bt, ldbt)) {  // one launch, lines staged in the kernel
      args.gather = true;
      args.a = a, args.lda = lda, args.bt = bt, args.ldbt = ldbt, args.m = static_cast<int>(m_), args.p = static_cast<int>(p_);
      args.source_a = wide_source_a_.data(), args.source_b = wide_source_b_.data();
      args.k_first = k_first, args.k_count = count, args.accumulate = started_;
      launch_wide(args, stream_);
      started_ = true;
      return;
    }
    // Pieces of at most wide_chunk_ k: permute their lines (every repetition), then sketch them.
    float* lines_a = wide_lines_.data();
    float* lines_b = lines_a + wide_chunk_ * d_ * wide_ld_a_;
    for (std::int64_t done = 0; done < count; done += wide_chunk_) {
      const std::int64_t piece = std::min(wide_chunk_, count - done);
      launch_permute_lines(a + done * lda, lda, m_, wide_source_a_.data(), wide_ld_a_, d_, piece, lines_a, stream_);
      launch_permute_lines(bt + done * ldbt, ldbt, p_, wide_source_b_.data(), wide_ld_b_, d_, piece, lines_b, stream_);
      args.lines_a = lines_a, args.lines_b = lines_b;
      args.k_first = k_first + done, args.k_count = piece, args.accumulate = started_;
      launch_wide(args, stream_);
      started_ = true;
    }
    return;
  }
  if (fused_ && cluster_ > 0) {
    ClusterArgs args;
    args.a = a, args.lda = lda, args.bt = bt, args.ldbt = ldbt;
    args.index_a = list_index_a_.data(), args.code_a = list_code_a_.data(), args.start_a = list_start_a_.data();
    args.index_b = list_index_b_.data(), args.code_b = list_code_b_.data(), args.start_b = list_start_b_.data();
    args.partials = partials_.data();
    args.k_first = k_first, args.k_count = count;
    args.log2b = log2b_, args.repetitions = d_, args.groups = groups_, args.log_cluster = cluster_, args.accumulate = started_;
    launch_cluster(args, stream_);
    started_ = true;
    return;
  }
  if (fused_) {
    FusedArgs args;
    args.a = a, args.lda = lda, args.bt = bt, args.ldbt = ldbt;
    args.code_a = code_a_.data(), args.code_b = code_b_.data();
    args.partials = partials_.data();
    args.m = m_, args.p = p_, args.k_first = k_first, args.k_count = count;
    args.log2b = log2b_, args.repetitions = d_, args.groups = groups_, args.accumulate = started_;
    launch_fused(args, stream_);
    started_ = true;
    return;
  }
  Lines la, lb;
  la.values_f32 = a, la.ld = lda, la.length = m_;
  lb.values_f32 = bt, lb.ld = ldbt, lb.length = p_;
  general_batches(la, lb, count);
}

void Engine::add_dense(const double* a, std::int64_t lda, const double* bt, std::int64_t ldbt, std::int64_t count) {
  if (fused_) throw Error(kWhere, "internal: double chunk on the fused path");
  if (count <= 0) return;
  Lines la, lb;
  la.values_f64 = a, la.ld = lda, la.length = m_;
  lb.values_f64 = bt, lb.ld = ldbt, lb.length = p_;
  general_batches(la, lb, count);
}

void Engine::add_sparse(const Lines& a, const Lines& b, std::int64_t count) {
  if (fused_) throw Error(kWhere, "internal: sparse chunk on the fused path");
  if (count > 0) general_batches(a, b, count);
}

// For each repetition and batch: zero, scatter (in Acc), round to 16 bits if that is the storage,
// transform, and add the pairs' products to the repetition's spectrum in k order.
void Engine::general_batches(const Lines& a, const Lines& b, std::int64_t count) {
  const int dtype = dtype_code(params_.precision);
  const bool rounded = fwht::size_of(params_.precision) == 2;
  void* target = rounded ? static_cast<void*>(scratch_.data()) : static_cast<void*>(vectors_.data());
  const std::size_t target_bytes = static_cast<std::size_t>(2 * pairs_per_batch_ * b_) * static_cast<std::size_t>(acc_bytes_);
  for (int t = 0; t < d_; ++t) {
    char* spectrum = spectrum_.data() + static_cast<std::size_t>(t * b_) * static_cast<std::size_t>(acc_bytes_);
    for (std::int64_t first = 0; first < count; first += pairs_per_batch_) {
      const std::int64_t n = std::min(pairs_per_batch_, count - first);
      PAGH_CUDA_CHECK(cudaMemsetAsync(target, 0, target_bytes, stream_), kWhere);
      launch_scatter(a, b, tables_.bucket_a.data() + t * m_, tables_.sign_a.data() + t * m_, tables_.bucket_b.data() + t * p_,
                     tables_.sign_b.data() + t * p_, first, n, b_, target, acc_bytes_, stream_);
      if (rounded) launch_round_to_16bit(static_cast<const float*>(target), vectors_.data(), 2 * pairs_per_batch_ * b_, dtype, stream_);
      forward_->execute(vectors_.data(), vectors_.data(), stream_);
      launch_multiply_accumulate(vectors_.data(), n, b_, dtype, spectrum, stream_);
    }
  }
}

void Engine::finish(double* sketches, double* frobenius) {
  const std::int64_t db = d_ * b_;
  if (fused_) {
    if (!started_) PAGH_CUDA_CHECK(cudaMemsetAsync(partials_.data(), 0, partials_.bytes(), stream_), kWhere);
    launch_reduce_partials(partials_.data(), groups_, db, reinterpret_cast<float*>(spectrum_.data()), stream_);
  }
  inverse_->execute(spectrum_.data(), spectrum_.data(), stream_);
  launch_widen(spectrum_.data(), acc_bytes_, db, sketches, stream_);
  if (direct_used_) launch_add(direct_.data(), db, sketches, stream_);  // c_t = H P_t / b + direct part
  launch_frobenius(sketches, db, d_, frobenius, stream_);
}

}  // namespace pagh::cuda
