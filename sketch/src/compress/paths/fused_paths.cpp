#include "compress/paths/fused_paths.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "compress/paths/cluster_lists.hpp"
#include "compress/paths/kernels.hpp"
#include "compress/paths/wide_layout.hpp"
#include "pagh/error.hpp"

namespace pagh::cuda {
namespace {

constexpr const char* kWhere = "pagh::cuda::compress";

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

// The tables on the host, for building the cluster lists and wide layouts.
struct HostTables {
  std::vector<std::uint32_t> bucket_a, bucket_b;
  std::vector<std::int8_t> sign_a, sign_b;
  explicit HostTables(const DeviceTables& t, cudaStream_t stream)
      : bucket_a(copy_back(t.bucket_a, stream)), bucket_b(copy_back(t.bucket_b, stream)), sign_a(copy_back(t.sign_a, stream)),
        sign_b(copy_back(t.sign_b, stream)) {
    PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);
  }
};

class SlicePath final : public FusedPath {
 public:
  SlicePath(const DeviceTables& t, int log2b) : m_(t.m), p_(t.p), d_(t.repetitions), log2b_(log2b) {}

  // False when a rank does not fit the kernel's encoding.
  bool prepare(const DeviceTables& t, cudaStream_t stream) {
    code_a_ = DeviceArray<std::uint32_t>(static_cast<std::size_t>(d_ * m_), "scatter codes of A");
    code_b_ = DeviceArray<std::uint32_t>(static_cast<std::size_t>(d_ * p_), "scatter codes of B");
    DeviceArray<int> overflow(1, "scatter check");
    PAGH_CUDA_CHECK(cudaMemsetAsync(overflow.data(), 0, sizeof(int), stream), kWhere);
    prepare_fused_tables(t.bucket_a.data(), t.sign_a.data(), m_, d_, code_a_.data(), overflow.data(), stream);
    prepare_fused_tables(t.bucket_b.data(), t.sign_b.data(), p_, d_, code_b_.data(), overflow.data(), stream);
    int overflowed = 0;
    PAGH_CUDA_CHECK(cudaMemcpyAsync(&overflowed, overflow.data(), sizeof(int), cudaMemcpyDeviceToHost, stream), kWhere);
    PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);
    return !overflowed;
  }

  void add(const float* a, std::int64_t lda, const float* bt, std::int64_t ldbt, std::int64_t k_first, std::int64_t count,
           const PartialSpectra& out, cudaStream_t stream) override {
    FusedArgs args;
    args.a = a, args.lda = lda, args.bt = bt, args.ldbt = ldbt;
    args.code_a = code_a_.data(), args.code_b = code_b_.data();
    args.partials = out.data;
    args.m = m_, args.p = p_, args.k_first = k_first, args.k_count = count;
    args.log2b = log2b_, args.repetitions = d_, args.groups = out.groups, args.accumulate = out.accumulate;
    launch_fused(args, stream);
  }
  int slice_log() const override { return kSliceLog; }
  std::int64_t resident_blocks(int sms) const override { return std::int64_t{fused_blocks_per_sm()} * sms; }
  std::string name() const override { return "fused"; }

 private:
  std::int64_t m_, p_;
  int d_, log2b_;
  DeviceArray<std::uint32_t> code_a_, code_b_;
};

class ClusterPath final : public FusedPath {
 public:
  ClusterPath(const DeviceTables& t, int log2b, int log_cluster) : d_(t.repetitions), log2b_(log2b), log_cluster_(log_cluster) {}

  bool prepare(const DeviceTables& t, cudaStream_t stream) {
    const HostTables host(t, stream);
    ClusterLists a, b;
    if (!build_cluster_lists(host.bucket_a.data(), host.sign_a.data(), t.m, d_, log_cluster_, a) ||
        !build_cluster_lists(host.bucket_b.data(), host.sign_b.data(), t.p, d_, log_cluster_, b))
      return false;
    upload(a.index, index_a_, "cluster lists of A", stream), upload(a.code, code_a_, "cluster lists of A", stream);
    upload(a.start, start_a_, "cluster lists of A", stream);
    upload(b.index, index_b_, "cluster lists of B", stream), upload(b.code, code_b_, "cluster lists of B", stream);
    upload(b.start, start_b_, "cluster lists of B", stream);
    PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);  // the host vectors go out of scope
    return true;
  }

  void add(const float* a, std::int64_t lda, const float* bt, std::int64_t ldbt, std::int64_t k_first, std::int64_t count,
           const PartialSpectra& out, cudaStream_t stream) override {
    ClusterArgs args;
    args.a = a, args.lda = lda, args.bt = bt, args.ldbt = ldbt;
    args.index_a = index_a_.data(), args.code_a = code_a_.data(), args.start_a = start_a_.data();
    args.index_b = index_b_.data(), args.code_b = code_b_.data(), args.start_b = start_b_.data();
    args.partials = out.data;
    args.k_first = k_first, args.k_count = count;
    args.log2b = log2b_, args.repetitions = d_, args.groups = out.groups, args.log_cluster = log_cluster_;
    args.accumulate = out.accumulate;
    launch_cluster(args, stream);
  }
  int slice_log() const override { return kSliceLog; }
  std::int64_t resident_blocks(int) const override { return cluster_resident_blocks(log_cluster_); }
  std::string name() const override { return "fused, clusters of " + std::to_string(1 << log_cluster_); }

 private:
  int d_, log2b_, log_cluster_;
  DeviceArray<std::uint32_t> index_a_, code_a_, index_b_, code_b_;
  DeviceArray<std::int64_t> start_a_, start_b_;
};

// Permuted lines of one wide launch: about this many bytes (the chunk is cut into such pieces).
// When lines are staged in the kernel, the permuted lines serve only device inputs that are not
// 16-byte aligned (a Compressor's), so their buffer is kept small: more, shorter launches there
// (the sums do not depend on the pieces), 240 MiB less device memory everywhere else.
constexpr std::int64_t kWideLineBytes = std::int64_t{256} << 20;
constexpr std::int64_t kWideFallbackLineBytes = std::int64_t{16} << 20;

class WidePath final : public FusedPath {
 public:
  WidePath(const DeviceTables& t, int log2b, std::int64_t K, const SketchParams& params, const PathTuning& tuning, bool tensor_cores,
           cudaStream_t stream)
      : m_(t.m), p_(t.p), d_(t.repetitions), log2b_(log2b) {
    const HostTables host(t, stream);
    // The dummy cells follow both buffers in the kernel's shared memory (wide_layout.hpp).
    WideLayout a, b;
    constexpr std::uint32_t buffer_bytes = std::uint32_t{4} << kWideLog;
    build_wide_layout(host.bucket_a.data(), host.sign_a.data(), m_, d_, log2b, 2 * buffer_bytes, a);
    build_wide_layout(host.bucket_b.data(), host.sign_b.data(), p_, d_, log2b, buffer_bytes, b);
    upload(a.source, source_a_, "wide layout of A", stream), upload(a.code, code_a_, "wide layout of A", stream);
    upload(a.segment, segment_a_, "wide layout of A", stream);
    upload(b.source, source_b_, "wide layout of B", stream), upload(b.code, code_b_, "wide layout of B", stream);
    upload(b.segment, segment_b_, "wide layout of B", stream);
    ld_a_ = a.padded, ld_b_ = b.padded;
    // Short lines are staged in shared memory and gathered in the kernel (no permutation pass) when
    // they are 16-byte aligned at execution (PathTuning::wide_staged_lines false: always permuted).
    staged_ = tuning.wide_staged_lines.value_or(true) && wide_gather_fits(m_, p_);
    const std::int64_t per_k = d_ * (ld_a_ + ld_b_) * static_cast<std::int64_t>(sizeof(float));
    const std::int64_t line_bytes = staged_ ? kWideFallbackLineBytes : kWideLineBytes;
    chunk_ = std::clamp<std::int64_t>(line_bytes / per_k, 1, std::max<std::int64_t>(K, 1));
    if (tuning.wide_piece) chunk_ = std::clamp<std::int64_t>(*tuning.wide_piece, 1, chunk_);
    lines_ = DeviceArray<float>(static_cast<std::size_t>(chunk_ * d_ * (ld_a_ + ld_b_)), "permuted lines");
    PAGH_CUDA_CHECK(cudaStreamSynchronize(stream), kWhere);  // the host vectors go out of scope
    storage_ = params.precision == fwht::DType::f16    ? WideStorage::f16
               : params.precision == fwht::DType::bf16 ? WideStorage::bf16
                                                       : WideStorage::f32;
    storage_arithmetic_ = storage_ != WideStorage::f32 && params.compute == fwht::Compute::storage;
    tensor_cores_ = tensor_cores && storage_ == WideStorage::f32;
  }

  void add(const float* a, std::int64_t lda, const float* bt, std::int64_t ldbt, std::int64_t k_first, std::int64_t count,
           const PartialSpectra& out, cudaStream_t stream) override {
    WideArgs args;
    args.code_a = code_a_.data(), args.code_b = code_b_.data();
    args.segment_a = segment_a_.data(), args.segment_b = segment_b_.data();
    args.ld_a = ld_a_, args.ld_b = ld_b_;
    args.partials = out.data;
    args.log2b = log2b_, args.repetitions = d_, args.groups = out.groups;
    args.storage = storage_;
    args.storage_arithmetic = storage_arithmetic_;
    args.tensor_cores = tensor_cores_;
    const auto aligned = [](const float* x, std::int64_t ld) { return reinterpret_cast<std::uintptr_t>(x) % 16 == 0 && ld % 4 == 0; };
    if (staged_ && aligned(a, lda) && aligned(bt, ldbt)) {  // one launch, lines staged in the kernel
      args.gather = true;
      args.a = a, args.lda = lda, args.bt = bt, args.ldbt = ldbt, args.m = static_cast<int>(m_), args.p = static_cast<int>(p_);
      args.source_a = source_a_.data(), args.source_b = source_b_.data();
      args.k_first = k_first, args.k_count = count, args.accumulate = out.accumulate;
      launch_wide(args, stream);
      return;
    }
    // Pieces of at most chunk_ k: permute their lines (every repetition), then sketch them.
    float* lines_a = lines_.data();
    float* lines_b = lines_a + chunk_ * d_ * ld_a_;
    bool accumulate = out.accumulate;
    for (std::int64_t done = 0; done < count; done += chunk_) {
      const std::int64_t piece = std::min(chunk_, count - done);
      launch_permute_lines(a + done * lda, lda, m_, source_a_.data(), ld_a_, d_, piece, lines_a, stream);
      launch_permute_lines(bt + done * ldbt, ldbt, p_, source_b_.data(), ld_b_, d_, piece, lines_b, stream);
      args.lines_a = lines_a, args.lines_b = lines_b;
      args.k_first = k_first + done, args.k_count = piece, args.accumulate = accumulate;
      launch_wide(args, stream);
      accumulate = true;
    }
  }
  int slice_log() const override { return kWideLog; }
  std::int64_t resident_blocks(int sms) const override { return std::int64_t{wide_blocks_per_sm()} * sms; }
  std::string name() const override {
    return "fused, wide slices of 2^" + std::to_string(kWideLog) + (staged_ ? ", staged lines" : ", permuted lines") +
           (tensor_cores_ ? ", tensor cores" : "");
  }

 private:
  std::int64_t m_, p_;
  int d_, log2b_;
  DeviceArray<std::uint32_t> source_a_, code_a_, source_b_, code_b_;
  DeviceArray<std::int32_t> segment_a_, segment_b_;
  std::int64_t ld_a_ = 0, ld_b_ = 0, chunk_ = 1;
  bool staged_ = false;
  DeviceArray<float> lines_;
  WideStorage storage_ = WideStorage::f32;
  bool storage_arithmetic_ = false;
  bool tensor_cores_ = false;
};

}  // namespace

std::unique_ptr<FusedPath> make_slice_path(const DeviceTables& tables, int log2b, cudaStream_t stream) {
  auto path = std::make_unique<SlicePath>(tables, log2b);
  if (!path->prepare(tables, stream)) return nullptr;
  return path;
}

std::unique_ptr<FusedPath> make_cluster_path(const DeviceTables& tables, int log2b, int log_cluster, cudaStream_t stream) {
  if (cluster_resident_blocks(log_cluster) == 0) return nullptr;
  auto path = std::make_unique<ClusterPath>(tables, log2b, log_cluster);
  if (!path->prepare(tables, stream)) return nullptr;
  return path;
}

std::unique_ptr<FusedPath> make_wide_path(const DeviceTables& tables, int log2b, std::int64_t K, const SketchParams& params,
                                          const PathTuning& tuning, bool tensor_cores, cudaStream_t stream) {
  return std::make_unique<WidePath>(tables, log2b, K, params, tuning, tensor_cores, stream);
}

}  // namespace pagh::cuda
