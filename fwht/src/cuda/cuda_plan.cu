// The CUDA plan: executes the PlanLayout that the planner (planner.hpp) decides once, with device
// scratch allocated once; execute enqueues one kernel per pass on the caller's stream (no
// allocation, no synchronization).
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
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/arithmetic.cuh"
#include "pagh/cuda_check.hpp"
#include "cuda/cuda_plan.hpp"
#include "cuda/device_caps.hpp"
#include "cuda/fast_pass.hpp"
#include "cuda/planner.hpp"
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
    const DeviceCaps& caps = device_caps();
    layout_ = plan_layout(shape, types(), o, caps);
    const Stabilization st = o.stabilization;
    if (layout_.gathered) packed_bytes_ = round_up(static_cast<std::size_t>(shape.n * shape.batch) * sizeof(S), 256);
    std::size_t passes = 0;
    if (layout_.route != Route::tile && !layout_.small) {
      passes = layout_.fast.size();
      for (std::size_t k = 0; k < passes; ++k) {
        const FastPass& p = layout_.fast[k];
        if (p.cluster_log > 0) launch_cluster<Tr>(FastArgs{}, p.cluster_log, k == 0, k + 1 == passes, 0, nullptr, true);
        else launch_fast<Tr>(FastArgs{}, st, p.block_log, k == 0, k + 1 == passes, 0, nullptr, true);
      }
      if (layout_.fused.fused) {
        int per_sm = 0;
        launch_fused<Tr>(FusedArgs{}, st, layout_.fused.block_log, true, 0, nullptr, true, &per_sm);
        if (caps.sms <= 0) throw pagh::Error(kWhere, "cudaDevAttrMultiProcessorCount: the query failed");
        fused_blocks_ = std::max(1, per_sm) * static_cast<std::int64_t>(caps.sms);
        layout_.fused.lag = fused_lag(layout_.fused, fused_blocks_, o.tuning);
        counter_bytes_ = round_up(static_cast<std::size_t>(1 + layout_.fused.strips) * sizeof(unsigned), 256);
      }
    } else if (layout_.route == Route::tile) {
      if constexpr (!Tr::kPairs) {
        passes = layout_.tile.passes.size();
        for (const PassGeometry& p : layout_.tile.passes)
          for (bool first : {false, true})
            for (bool last : {false, true})
              launch_pass<Tr>(PassArgs{}, o.stabilization, o.algorithm, first, last, 0, shared_bytes(p), nullptr, true);
      }
    }
    const bool multi = passes > 1;
    const auto plane = static_cast<std::size_t>(shape.n * shape.batch) * sizeof(W);
    work_bytes_ = (multi && !kDirect) ? round_up(plane, 256) : 0;
    error_bytes_ = (multi && stabilized_ && layout_.route == Route::tile) ? round_up(plane, 256) : 0;
    // wide_carry: one residual byte per element between passes (stage groups).
    carry_bytes_ = (multi && st == Stabilization::wide_carry) ? round_up(static_cast<std::size_t>(shape.n * shape.batch), 256) : 0;
    if (workspace_bytes() > 0) PAGH_CUDA_CHECK(cudaMalloc(&owned_, workspace_bytes()), kWhere);
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
    if (layout_.route == Route::fast) {
      execute_fast(in, out, work, counters, stream);
      return;
    }
    if (layout_.route == Route::wide) {
      execute_wide(in, out, ws, counters, stream);
      return;
    }
    if constexpr (!Tr::kPairs) execute_tile(in, out, work, errors, stream);
  }

  std::size_t workspace_bytes() const override {
    return work_bytes_ + error_bytes_ + counter_bytes_ + packed_bytes_ + carry_bytes_;
  }

  PlanDescription describe() const override {
    return {.memory_passes = layout_.memory_passes(), .text = cuda::describe(layout_, shape_)};
  }

 private:
  static constexpr bool kWideCapable = !Tr::kInteger && !Tr::kPairs && sizeof(C) == 4;

  static PlanTypes types() {
    return {.storage_bytes = static_cast<int>(sizeof(S)),
            .compute_bytes = static_cast<int>(sizeof(C)),
            .work_bytes = static_cast<int>(sizeof(W)),
            .bf16_storage = std::is_same_v<Tr, SixteenStorageTraits<BFloatFormat>>,
            .paired = Tr::kPairs,
            .integer = Tr::kInteger};
  }

  void execute_tile(const void* in, void* out, void* work, void* errors, cudaStream_t stream) {
    const index work_distance = kDirect ? shape_.distance : shape_.n;
    const index work_stride = kDirect ? shape_.stride : 1;
    const std::size_t count = layout_.tile.passes.size();
    for (std::size_t k = 0; k < count; ++k) {
      const PassGeometry& p = layout_.tile.passes[k];
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
      a.alman_rao_r = layout_.tile.log2n % 3;
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
      if (layout_.small) {
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
    const std::size_t count = layout_.fast.size();
    const FusedGeometry& fused = layout_.fused;
    for (std::size_t k = 0; k < count; ++k) {
      const bool first = k == 0, last = k + 1 == count;
      if (fused.fused && k + 2 == count) {  // the last two passes in one launch
        FusedArgs f;
        f.a = fast_args(in, out, work, k, carry);
        f.b = fast_args(in, out, work, k + 1, carry);
        f.counters = reinterpret_cast<unsigned*>(counters);
        f.strips = fused.strips;
        f.strips_per_transform = fused.strips_per_transform;
        f.strip_columns = fused.strip_columns;
        f.tiles_a = fused.tiles_a;
        f.tiles_b = fused.tiles_b;
        f.lag = fused.lag;
        f.hints = layout_.fuse_hints;
        PAGH_CUDA_CHECK(cudaMemsetAsync(counters, 0, counter_bytes_, stream), "fwht::Plan::execute (cuda)");
        launch_fused<Tr>(f, options_.stabilization, fused.block_log, true, fused_blocks_, stream, false, nullptr);
        return;
      }
      const FastPass& p = layout_.fast[k];
      if (p.cluster_log > 0)
        launch_cluster<Tr>(fast_args(in, out, work, k, carry), p.cluster_log, first, last, p.blocks, stream, false);
      else
        launch_fast<Tr>(fast_args(in, out, work, k, carry), options_.stabilization, p.block_log, first, last, p.blocks,
                        stream, false);
    }
  }

  FastArgs fast_args(const void* in, void* out, void* work, std::size_t k, signed char* carry = nullptr) const {
    const std::size_t count = std::max<std::size_t>(1, layout_.fast.size());
    {
      const FastPass p = k < layout_.fast.size() ? layout_.fast[k] : FastPass{};
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
      // 2-byte storage: staged only in blocks of 2^14 elements (there it measured faster, in
      // 2^13-element blocks slower).
      const int stage = layout_.stage_mode;
      a.staged = stage == 2 || (stage == 1 && (sizeof(S) == 4 || p.block_log == 14));
      a.carry = carry;
      a.dependent = !first && layout_.dependent_launch;
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
  PlanLayout layout_;
  std::int64_t fused_blocks_ = 0;
  std::size_t work_bytes_ = 0, error_bytes_ = 0, counter_bytes_ = 0, packed_bytes_ = 0, carry_bytes_ = 0;
  void* owned_ = nullptr;
};

template <class Tr>
std::unique_ptr<PlanImpl> make(const Shape& shape, const Options& o) {
  return std::make_unique<CudaPlan<Tr>>(shape, o);
}

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
  PlanDescription describe() const override {
    PlanDescription d = words_->describe();
    d.text = "paired 16-bit words (4-byte aligned buffers; else the element plan):\n" + d.text;
    return d;
  }

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

}  // namespace

std::unique_ptr<PlanImpl> make_cuda_plan(const Shape& shape, DType dtype, const Options& o) {
  if (is_integer(dtype) && o.check_overflow)
    throw pagh::Error(kWhere, "check_overflow is not supported by the CUDA backend (checked 128-bit arithmetic "
                              "would need a host synchronization inside execute); use Backend::cpu");
  validate(o.tuning);
  const bool storage = o.compute == Compute::storage;
  const bool pairs = paired_words(shape, dtype, o);
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
