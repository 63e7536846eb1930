// The CUDA plan: a schedule of passes (schedule.hpp) built once, device scratch allocated once, and
// execute enqueues one kernel per pass on the caller's stream (no allocation, no synchronization).
//
// Work between passes stays in the output buffer whenever the work type W has the storage type's
// bits (f64, f32, integers, and f16/bf16 computed in storage precision: see arithmetic.cuh), so
// those plans need workspace only for error terms. f16/bf16 computed in float keep a float work
// buffer. Kahan/Neumaier plans of more than one pass carry the error plane between passes (full
// stabilization: the same algorithm as the CPU and the reference, bit for bit) on the general tile
// kernel; single-pass ones of 4-byte compute types with n <= 2^13 run on the register-tile kernel
// with the error terms in registers and shared memory only. wide_onchip plans always run on the
// register-tile kernel, one pass per stage group (packed layouts directly; other layouts gathered
// into a packed workspace buffer and scattered back; n <= 8 by one thread per transform).
// Plain folklore f16/bf16 computed in storage precision on packed layouts run as transforms of n/2
// 32-bit words of two elements each (Pair16, arithmetic.cuh: paired 16-bit instructions, half the
// instructions per element and f32's schedule and kernels), with the element plan as the fallback
// for buffers that are not 4-byte aligned (PairedPlan).
#include <cuda_runtime.h>

#include <bit>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/arithmetic.cuh"
#include "cuda/check.hpp"
#include "cuda/cuda_plan.hpp"
#include "cuda/fast_pass.hpp"
#include "cuda/schedule.hpp"
#include "cuda/tile_pass.hpp"
#include "cuda/wide_small.cuh"
#include "common/arithmetic.hpp"
#include "pagh/error.hpp"

namespace fwht::cuda {
namespace {

constexpr const char* kWhere = "fwht::Plan (cuda)";
using index = std::int64_t;

std::size_t round_up(std::size_t v, std::size_t m) { return (v + m - 1) / m * m; }

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

// Which kernels run a plan. The register-tile kernel (fast_pass.cuh) takes folklore transforms of
// 4-byte compute types on packed layouts with 16 <= n <= 2^31 (32-bit element offsets inside a
// tile): plain ones, and Kahan/Neumaier ones that fit one pass (n <= 2^13); everything else runs
// the general tile pass (tile_pass.cuh). PAGH_FWHT_CUDA_FAST=0 turns the register-tile kernel off
// for plain and Kahan/Neumaier plans (benchmarks compare the two in one run). wide_onchip exists
// only on the register-tile kernel (route wide; see wide_small.cuh for the other layouts).
enum class Route { fast, tile, wide };

bool packed(const Shape& shape) { return shape.stride == 1 && shape.distance == shape.n; }

Route route_of(const Shape& shape, int compute_bytes, const Options& o) {
  if (is_wide(o.stabilization)) return Route::wide;
  if (const char* env = std::getenv("PAGH_FWHT_CUDA_FAST"); env && env[0] == '0') return Route::tile;
  const bool fits = compute_bytes == 4 && o.algorithm == Algorithm::folklore && packed(shape) && shape.n >= 16 &&
                    shape.n <= (std::int64_t{1} << 31);
  if (!fits) return Route::tile;
  if (o.stabilization == Stabilization::none) return Route::fast;
  return shape.n <= (std::int64_t{1} << 13) ? Route::fast : Route::tile;
}

// Largest cluster_log of the cluster passes (cluster_pass.cuh) on the current device: 3 (clusters
// of 8, the portable limit) where thread-block clusters exist (sm_90 and later), else 0.
int device_cluster_log() {
  int device = 0, supported = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&supported, cudaDevAttrClusterLaunch, device) != cudaSuccess) {
    cudaGetLastError();  // clear the non-sticky error: no clusters
    return 0;
  }
  return supported ? 3 : 0;
}

// Whether the current device's memory is slow next to its SMs (schedule.hpp, ClusterContext):
// below 15 bytes per SM cycle at peak (2 x memory clock x bus width over SMs x SM clock: an H100
// SXM has 12.8, an H200 18.4). PAGH_FWHT_CUDA_SLOW_MEMORY=0/1 overrides it (benchmarks and tests
// compare the two classes' schedules; results do not depend on it).
bool device_slow_memory() {
  if (const char* env = std::getenv("PAGH_FWHT_CUDA_SLOW_MEMORY"); env && (env[0] == '0' || env[0] == '1'))
    return env[0] == '1';
  int device = 0, memory_khz = 0, bus_bits = 0, sm_khz = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    cudaGetLastError();  // clear the non-sticky error: the default class
    return false;
  }
  if (sm_khz <= 0 || sms <= 0) return false;
  return 2.0 * memory_khz * (bus_bits / 8.0) / (static_cast<double>(sms) * sm_khz) < 15.0;
}

// The cluster context of a plan (schedule.hpp). bf16 computed in storage precision (integer
// rounding after every operation) is instruction-bound and measured 8% slower with a cluster pass
// (2^15 x 16384: 2.49 vs 2.30 ms; f16: 1.52 vs 2.00): no clusters for it.
ClusterContext cluster_context(bool bf16_storage, bool paired) {
  return {.max_cluster_log = bf16_storage ? 0 : device_cluster_log(), .paired = paired, .slow_memory = device_slow_memory()};
}

// Whether passes after the first launch as programmatic dependents of the previous one
// (pass_dependency.cuh): compute capability 9.0 and later, unless PAGH_FWHT_CUDA_PDL=0 (benchmarks
// compare the two; results do not depend on it).
bool device_dependent_launch() {
  if (const char* env = std::getenv("PAGH_FWHT_CUDA_PDL"); env && env[0] == '0') return false;
  int device = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return major >= 9;
}

template <class Tr>
class CudaPlan final : public PlanImpl {
  using S = typename Tr::S;
  using C = typename Tr::C;
  using W = typename Tr::W;
  static constexpr bool kDirect = std::is_same_v<S, W>;  // work in the output buffer

 public:
  // scale_n: the n of the normalization (the element count of a transform of Pair16 words).
  CudaPlan(const Shape& shape, const Options& o, std::int64_t scale_n = 0)
      : shape_(shape), options_(o), scale_n_(scale_n ? scale_n : shape.n) {
    stabilized_ = o.stabilization != Stabilization::none;
    route_ = route_of(shape, sizeof(C), o);
    if (Tr::kPairs && route_ != Route::fast) throw pagh::Error(kWhere, "paired 16-bit words need the register-tile path");
    std::size_t passes = 0;
    const Stabilization st = o.stabilization;
    if (route_ == Route::wide) {
      if constexpr (!kWideCapable) throw pagh::Error(kWhere, std::string(to_string(st)) + " needs a floating 4-byte compute type");
      if (shape.n > (std::int64_t{1} << 31))
        throw pagh::Error(kWhere, std::string(to_string(st)) + ": n > 2^31 is not supported on cuda");
      small_ = shape.n < 16;
      if (!small_ && !packed(shape))
        packed_bytes_ = round_up(static_cast<std::size_t>(shape.n * shape.batch) * sizeof(S), 256);
    }
    if ((route_ == Route::fast || route_ == Route::wide) && !small_) {
      if (st == Stabilization::none)
        fast_schedule_ = make_fast_schedule(
            shape.n, shape.batch, static_cast<int>(sizeof(S)),
            cluster_context(std::is_same_v<Tr, SixteenStorageTraits<BFloatFormat>>, Tr::kPairs));
      else if (is_wide(st)) fast_schedule_ = make_wide_schedule(shape.n, shape.batch);
      else fast_schedule_ = make_stabilized_single(shape.n, shape.batch);
      if (st == Stabilization::none || is_wide(st))
        fused_ = make_fused(fast_schedule_, shape.n, shape.batch, static_cast<int>(sizeof(W)), st);
      passes = fast_schedule_.size();
      for (std::size_t k = 0; k < passes; ++k) {
        const FastPass& p = fast_schedule_[k];
        if (p.cluster_log > 0) launch_cluster<Tr>(FastArgs{}, p.cluster_log, k == 0, k + 1 == passes, 0, nullptr, true);
        else launch_fast<Tr>(FastArgs{}, st, p.block_log, k == 0, k + 1 == passes, 0, nullptr, true);
      }
      if (fused_.fused) {
        int per_sm = 0, device = 0, sms = 0;
        launch_fused<Tr>(FusedArgs{}, st, fused_.block_log, true, 0, nullptr, true, &per_sm);
        FWHT_CUDA_CHECK(cudaGetDevice(&device), kWhere);
        FWHT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), kWhere);
        fused_blocks_ = std::max(1, per_sm) * static_cast<std::int64_t>(sms);
        fused_.lag = fused_lag(fused_, fused_blocks_);
        counter_bytes_ = round_up(static_cast<std::size_t>(1 + fused_.strips) * sizeof(unsigned), 256);
      }
    } else if (route_ == Route::tile) {
      if constexpr (!Tr::kPairs) {
        schedule_ = make_schedule(shape.n, shape.batch, sizeof(C), stabilized_, o.algorithm == Algorithm::alman_rao);
        passes = schedule_.passes.size();
        for (const PassGeometry& p : schedule_.passes)
          for (bool first : {false, true})
            for (bool last : {false, true})
              launch_pass<Tr>(PassArgs{}, o.stabilization, o.algorithm, first, last, 0, shared_bytes(p), nullptr, true);
      }
    }
    const bool multi = passes > 1;
    const auto plane = static_cast<std::size_t>(shape.n * shape.batch) * sizeof(W);
    work_bytes_ = (multi && !kDirect) ? round_up(plane, 256) : 0;
    error_bytes_ = (multi && stabilized_ && route_ == Route::tile) ? round_up(plane, 256) : 0;
    // wide_carry: one residual byte per element between passes (stage groups).
    carry_bytes_ = (multi && st == Stabilization::wide_carry) ? round_up(static_cast<std::size_t>(shape.n * shape.batch), 256) : 0;
    if (workspace_bytes() > 0) FWHT_CUDA_CHECK(cudaMalloc(&owned_, workspace_bytes()), kWhere);
  }
  ~CudaPlan() override {
    if (owned_) cudaFree(owned_);  // destructor: nothing useful to do with an error
  }

  void execute(const void*, void*) override {
    throw pagh::Error("fwht::Plan::execute", "this is a CUDA plan: call execute(in, out, stream) with device pointers");
  }

  void execute(const void* in, void* out, cudaStream_t stream, void* workspace) override {
    unsigned char* ws = static_cast<unsigned char*>(workspace ? workspace : owned_);
    if (workspace_bytes() > 0 && ws == nullptr) throw pagh::Error("fwht::Plan::execute", "no workspace");
    void* work = kDirect ? out : static_cast<void*>(ws);
    void* errors = error_bytes_ ? static_cast<void*>(ws + work_bytes_) : nullptr;
    unsigned char* counters = counter_bytes_ ? ws + work_bytes_ + error_bytes_ : nullptr;
    if (route_ == Route::fast) {
      execute_fast(in, out, work, counters, stream);
      return;
    }
    if (route_ == Route::wide) {
      execute_wide(in, out, ws, counters, stream);
      return;
    }
    if constexpr (!Tr::kPairs) execute_tile(in, out, work, errors, stream);
  }

  std::size_t workspace_bytes() const override {
    return work_bytes_ + error_bytes_ + counter_bytes_ + packed_bytes_ + carry_bytes_;
  }

 private:
  static constexpr bool kWideCapable = !Tr::kInteger && !Tr::kPairs && sizeof(C) == 4;

  void execute_tile(const void* in, void* out, void* work, void* errors, cudaStream_t stream) {
    const index work_distance = kDirect ? shape_.distance : shape_.n;
    const index work_stride = kDirect ? shape_.stride : 1;
    const std::size_t count = schedule_.passes.size();
    for (std::size_t k = 0; k < count; ++k) {
      const PassGeometry& p = schedule_.passes[k];
      const bool first = k == 0, last = k + 1 == count;
      PassArgs a;
      a.src = first ? in : work;
      a.src_distance = first ? shape_.distance : work_distance;
      a.src_stride = first ? shape_.stride : work_stride;
      a.dst = last ? out : work;
      a.dst_distance = last ? shape_.distance : work_distance;
      a.dst_stride = last ? shape_.stride : work_stride;
      a.err_in = errors;
      a.err_out = errors;
      a.n = shape_.n;
      a.s = p.s, a.g = p.g, a.column_log = p.column_log;
      a.tiles_per_transform_log = p.tiles_per_transform_log;
      a.column_blocks_log = p.column_blocks_log;
      a.tiles_per_block_log = p.tiles_per_block_log;
      a.total_tiles = p.total_tiles;
      a.alman_rao_r = schedule_.log2n % 3;
      a.scale = detail::normalization_factor(options_.normalization, scale_n_);
      a.scaled = !Tr::kInteger && options_.normalization != Normalization::none;
      a.inverse = Tr::kInteger && options_.normalization == Normalization::inverse;
      a.vec_src = vectorizable(a.src, a.src_distance, a.src_stride, first ? sizeof(S) : sizeof(W), p);
      a.vec_dst = vectorizable(a.dst, a.dst_distance, a.dst_stride, last ? sizeof(S) : sizeof(W), p);
      a.vec_err = errors != nullptr && vectorizable(errors, shape_.n, 1, sizeof(W), p);
      launch_pass<Tr>(a, options_.stabilization, options_.algorithm, first, last, p.blocks, shared_bytes(p), stream,
                      false);
    }
  }

  // wide_onchip: packed layouts directly; others through the packed buffer at the end of the
  // workspace (gather, passes in place, scatter); n <= 8 in one thread per transform.
  void execute_wide(const void* in, void* out, unsigned char* ws, unsigned char* counters, cudaStream_t stream) {
    if constexpr (kWideCapable) {
      LayoutCopy layout{in, out, shape_.n, shape_.batch, shape_.stride, shape_.distance, shape_.stride, shape_.distance};
      if (small_) {
        launch_wide_small<Tr>(layout, fast_args(in, out, out, 0), stream);
        return;
      }
      // wide_carry: the residual plane at the end of the workspace.
      signed char* carry =
          carry_bytes_ ? reinterpret_cast<signed char*>(ws + work_bytes_ + error_bytes_ + counter_bytes_ + packed_bytes_) : nullptr;
      if (packed_bytes_ == 0) {
        execute_fast(in, out, kDirect ? out : static_cast<void*>(ws), counters, stream, carry);
        return;
      }
      void* buffer = ws + work_bytes_ + error_bytes_ + counter_bytes_;
      LayoutCopy gather = layout;
      gather.dst = buffer, gather.dst_stride = 1, gather.dst_distance = shape_.n;
      launch_layout_copy(gather, sizeof(S), stream);
      execute_fast(buffer, buffer, kDirect ? buffer : static_cast<void*>(ws), counters, stream, carry);
      LayoutCopy scatter = layout;
      scatter.src = buffer, scatter.src_stride = 1, scatter.src_distance = shape_.n;
      launch_layout_copy(scatter, sizeof(S), stream);
    }
  }

  void execute_fast(const void* in, void* out, void* work, unsigned char* counters, cudaStream_t stream,
                    signed char* carry = nullptr) {
    const std::size_t count = fast_schedule_.size();
    for (std::size_t k = 0; k < count; ++k) {
      const bool first = k == 0, last = k + 1 == count;
      if (fused_.fused && k + 2 == count) {  // the last two passes in one launch
        FusedArgs f;
        f.a = fast_args(in, out, work, k, carry);
        f.b = fast_args(in, out, work, k + 1, carry);
        f.counters = reinterpret_cast<unsigned*>(counters);
        f.strips = fused_.strips;
        f.strips_per_transform = fused_.strips_per_transform;
        f.strip_columns = fused_.strip_columns;
        f.tiles_a = fused_.tiles_a;
        f.tiles_b = fused_.tiles_b;
        f.lag = fused_.lag;
        f.hints = fused_hints_;
        FWHT_CUDA_CHECK(cudaMemsetAsync(counters, 0, counter_bytes_, stream), "fwht::Plan::execute (cuda)");
        launch_fused<Tr>(f, options_.stabilization, fused_.block_log, true, fused_blocks_, stream, false, nullptr);
        return;
      }
      const FastPass& p = fast_schedule_[k];
      if (p.cluster_log > 0)
        launch_cluster<Tr>(fast_args(in, out, work, k, carry), p.cluster_log, first, last, p.blocks, stream, false);
      else
        launch_fast<Tr>(fast_args(in, out, work, k, carry), options_.stabilization, p.block_log, first, last, p.blocks,
                        stream, false);
    }
  }

  FastArgs fast_args(const void* in, void* out, void* work, std::size_t k, signed char* carry = nullptr) const {
    const std::size_t count = std::max<std::size_t>(1, fast_schedule_.size());
    {
      const FastPass p = k < fast_schedule_.size() ? fast_schedule_[k] : FastPass{};
      const bool first = k == 0, last = k + 1 == count;
      FastArgs a;
      a.src = first ? in : work;
      a.dst = last ? out : work;
      a.total = shape_.n * shape_.batch;
      a.n = shape_.n;
      a.log2n = std::countr_zero(static_cast<std::uint64_t>(shape_.n));
      a.s = p.s, a.g = p.g - p.cluster_log, a.w = p.w;  // g: the stages on chip of each block
      a.scale = detail::normalization_factor(options_.normalization, scale_n_);
      a.scaled = !Tr::kInteger && options_.normalization != Normalization::none;
      a.inverse = Tr::kInteger && options_.normalization == Normalization::inverse;
      a.vec_src = first && aligned16(a.src);
      a.vec_dst = (first || p.cluster_log > 0) && aligned16(a.dst);
      // 2-byte storage: staged only in blocks of 2^14 elements (H200, f16/bf16 batches: 10-12% faster
      // at 2^11, 2^12, 2^14, 2^15; 2^13-element blocks 2-11% slower staged; bench/NOTES.md).
      a.staged = stage_mode_ == 2 || (stage_mode_ == 1 && (sizeof(S) == 4 || p.block_log == 14));
      a.carry = carry;
      a.dependent = !first && dependent_launch_;
      return a;
    }
  }

  std::size_t shared_bytes(const PassGeometry& p) const {
    return pass_shared_bytes(p.block_elements_log(), sizeof(C), stabilized_ ? 2 : 1);
  }

  // 16-byte accesses need unit stride, aligned addresses for every transform, and runs of at least
  // one vector inside a tile (W >= V columns, or >= V rows of a first-pass tile).
  static bool vectorizable(const void* base, index distance, index stride, std::size_t bytes, const PassGeometry& p) {
    const index v = static_cast<index>(16 / bytes);
    const index run = p.column_log > 0 ? (index{1} << p.column_log) : (index{1} << p.g);
    return stride == 1 && aligned16(base) && distance % v == 0 && run >= v;
  }

  Shape shape_;
  Options options_;
  std::int64_t scale_n_;
  bool stabilized_ = false;
  Schedule schedule_;
  Route route_ = Route::tile;
  bool small_ = false;  // wide_onchip / wide_carry, n <= 8 (one stage group)
  // Benchmark knob: PAGH_FWHT_CUDA_FAST_STAGE=0 loads first-pass tiles straight into registers
  // (16-byte loads of consecutive elements per thread) instead of through cp.async; =2 stages 2-byte
  // storage in every block size too (default 1: 4-byte storage, and 2-byte in 2^14-element blocks).
  int stage_mode_ = [] {
    const char* env = std::getenv("PAGH_FWHT_CUDA_FAST_STAGE");
    return env && (env[0] == '0' || env[0] == '2') ? env[0] - '0' : 1;
  }();
  std::vector<FastPass> fast_schedule_;
  bool dependent_launch_ = device_dependent_launch();
  FusedGeometry fused_;
  // Benchmark knob: PAGH_FWHT_CUDA_FUSE_HINTS=0 drops the L2 eviction hints of the fused passes.
  bool fused_hints_ = [] {
    const char* env = std::getenv("PAGH_FWHT_CUDA_FUSE_HINTS");
    return !(env && env[0] == '0');
  }();
  std::int64_t fused_blocks_ = 0;
  std::size_t work_bytes_ = 0, error_bytes_ = 0, counter_bytes_ = 0, packed_bytes_ = 0, carry_bytes_ = 0;
  void* owned_ = nullptr;
};

template <class Tr>
std::unique_ptr<PlanImpl> make(const Shape& shape, const Options& o) {
  return std::make_unique<CudaPlan<Tr>>(shape, o);
}

// The paired path (Pair16 words) applies: plain folklore f16/bf16 computed in storage precision, on
// the register-tile path, packed layout, n >= 32 (16 words), unless PAGH_FWHT_CUDA_PAIRS=0 (a
// benchmark knob: the element plan; results do not depend on it).
bool paired(const Shape& shape, DType dtype, const Options& o) {
  if (const char* env = std::getenv("PAGH_FWHT_CUDA_PAIRS"); env && env[0] == '0') return false;
  const bool sixteen = dtype == DType::f16 || dtype == DType::bf16;
  return sixteen && o.compute == Compute::storage && o.stabilization == Stabilization::none && shape.n >= 32 &&
         route_of(shape, 4, o) == Route::fast;
}
Shape word_shape(const Shape& shape) { return Shape{.n = shape.n / 2, .batch = shape.batch, .stride = 1, .distance = shape.n / 2}; }

// A paired plan and the element plan of the same transform: execute takes the paired one when both
// buffers are 4-byte aligned (whole words), else the element one (same bits, slower).
class PairedPlan final : public PlanImpl {
 public:
  PairedPlan(std::unique_ptr<PlanImpl> words, std::unique_ptr<PlanImpl> elements)
      : words_(std::move(words)), elements_(std::move(elements)) {}
  void execute(const void* in, void* out) override { elements_->execute(in, out); }
  void execute(const void* in, void* out, cudaStream_t stream, void* workspace) override {
    const bool whole_words = ((reinterpret_cast<std::uintptr_t>(in) | reinterpret_cast<std::uintptr_t>(out)) & 3u) == 0;
    (whole_words ? words_ : elements_)->execute(in, out, stream, workspace);
  }
  std::size_t workspace_bytes() const override { return std::max(words_->workspace_bytes(), elements_->workspace_bytes()); }

 private:
  std::unique_ptr<PlanImpl> words_, elements_;
};

template <class F>
std::unique_ptr<PlanImpl> make_sixteen_storage(const Shape& shape, const Options& o, bool pairs) {
  auto elements = make<SixteenStorageTraits<F>>(shape, o);
  if (!pairs) return elements;
  return std::make_unique<PairedPlan>(std::make_unique<CudaPlan<SixteenPairTraits<F>>>(word_shape(shape), o, shape.n),
                                      std::move(elements));
}

int compute_bytes(DType dtype) { return dtype == DType::f64 || dtype == DType::i64 ? 8 : 4; }

}  // namespace

std::unique_ptr<PlanImpl> make_cuda_plan(const Shape& shape, DType dtype, const Options& o) {
  if (is_integer(dtype) && o.check_overflow)
    throw pagh::Error(kWhere, "check_overflow is not supported by the CUDA backend (checked 128-bit arithmetic "
                              "would need a host synchronization inside execute); use Backend::cpu");
  const bool storage = o.compute == Compute::storage;
  const bool pairs = paired(shape, dtype, o);
  switch (dtype) {
    case DType::f64: return make<NativeTraits<double>>(shape, o);
    case DType::f32: return make<NativeTraits<float>>(shape, o);
    case DType::f16:
      return storage ? make_sixteen_storage<HalfFormat>(shape, o, pairs) : make<Sixteen32Traits<HalfFormat>>(shape, o);
    case DType::bf16:
      return storage ? make_sixteen_storage<BFloatFormat>(shape, o, pairs) : make<Sixteen32Traits<BFloatFormat>>(shape, o);
    case DType::i32: return make<IntegerTraits<std::int32_t>>(shape, o);
    case DType::i64: return make<IntegerTraits<std::int64_t>>(shape, o);
  }
  throw pagh::Error(kWhere, "unknown dtype");
}

int pass_count(const Shape& shape, DType dtype, const Options& o) {
  const Route route = route_of(shape, compute_bytes(dtype), o);
  if (route == Route::wide) {
    if (shape.n < 16) return 1;
    auto passes = make_wide_schedule(shape.n, shape.batch);
    const int work = dtype == DType::f16 || dtype == DType::bf16 ? (o.compute == Compute::f32 ? 4 : 2) : 4;
    const bool fused = make_fused(passes, shape.n, shape.batch, work, o.stabilization).fused;
    return static_cast<int>(passes.size()) - (fused ? 1 : 0) + (packed(shape) ? 0 : 2);
  }
  if (route == Route::fast && o.stabilization != Stabilization::none) return 1;
  if (paired(shape, dtype, o)) {  // the word plan (aligned buffers)
    const Shape words = word_shape(shape);
    auto passes = make_fast_schedule(words.n, words.batch, 4, cluster_context(false, true));
    const bool fused = make_fused(passes, words.n, words.batch, 4, o.stabilization).fused;
    return static_cast<int>(passes.size()) - (fused ? 1 : 0);
  }
  if (route == Route::fast) {
    // A fused pair of passes is one launch and, through L2, about one pass of device memory.
    auto passes = make_fast_schedule(shape.n, shape.batch, static_cast<int>(size_of(dtype)),
                                     cluster_context(dtype == DType::bf16 && o.compute == Compute::storage, false));
    const int work = dtype == DType::f16 || dtype == DType::bf16 ? (o.compute == Compute::f32 ? 4 : 2) : 4;
    const bool fused = make_fused(passes, shape.n, shape.batch, work, o.stabilization).fused;
    return static_cast<int>(passes.size()) - (fused ? 1 : 0);
  }
  return static_cast<int>(make_schedule(shape.n, shape.batch, compute_bytes(dtype), o.stabilization != Stabilization::none,
                                        o.algorithm == Algorithm::alman_rao)
                              .passes.size());
}

bool device_usable(std::string* why) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess) {
    if (why) *why = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(status);
    cudaGetLastError();  // clear the non-sticky error
    return false;
  }
  if (devices == 0) {
    if (why) *why = "no CUDA device";
    return false;
  }
  // The kernels are built for CMAKE_CUDA_ARCHITECTURES only; make sure this device can run them.
  const cudaError_t image = probe_kernel_image();
  if (image != cudaSuccess) {
    if (why) *why = std::string("the fwht kernels cannot run on this device: ") + cudaGetErrorString(image);
    cudaGetLastError();
    return false;
  }
  return true;
}

}  // namespace fwht::cuda
