// fwht::Plan — batched, strided transforms, planned once and executed many times (FFTW/cuFFT style).
//
//   fwht::Plan plan({.n = 1 << 20, .batch = 64}, fwht::DType::f32, {.normalization = ...});
//   plan.execute(in, out);                  // CPU plan: host pointers; in == out is allowed
//   plan.execute(d_in, d_out, stream);      // CUDA plan: device pointers, asynchronous on stream
//
// The constructor validates everything and allocates all working memory; execute never allocates
// and never prints. A Plan is not safe to execute from two threads at once (it owns its scratch).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "fwht/half.hpp"
#include "fwht/options.hpp"

// The CUDA runtime's stream handle, declared here so that this header needs no CUDA headers.
struct CUstream_st;
using cudaStream_t = CUstream_st*;

namespace fwht {

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<f16>() { return DType::f16; }
template <> constexpr DType dtype_of<bf16>() { return DType::bf16; }
template <> constexpr DType dtype_of<std::int32_t>() { return DType::i32; }
template <> constexpr DType dtype_of<std::int64_t>() { return DType::i64; }

// What a plan does, for reports and benchmarks (in the spirit of fftw_print_plan).
struct PlanDescription {
  // Passes over the data in device memory (a fused pair of passes counts as one); 0 where the
  // backend does not report them (CPU plans).
  int memory_passes = 0;
  std::string text;  // the route, then one line per pass with its geometry
};

// Implementation interface of one backend; users never see it.
class PlanImpl {
 public:
  virtual ~PlanImpl() = default;
  virtual void execute(const void* in, void* out) = 0;
  virtual void execute(const void* in, void* out, cudaStream_t stream, void* workspace) = 0;
  virtual std::size_t workspace_bytes() const = 0;
  virtual PlanDescription describe() const { return {.memory_passes = 0, .text = "cpu plan\n"}; }
  // A function that does all of execute(in, out) by itself (a small CPU plan's whole transform),
  // called by Plan::execute without the virtual call; null where there is none.
  using DirectFn = void (*)(const void* in, void* out);
  virtual DirectFn direct() const { return nullptr; }
};

class Plan {
 public:
  // Throws pagh::Error naming the bad argument: n not a power of two, batch/stride/distance out of
  // range or overlapping transforms, extents that overflow 64 bits, an option the dtype does not
  // support (stabilization or orthonormal on integers, stabilization with alman_rao), or a backend
  // that this build does not have.
  Plan(Shape shape, DType dtype, Options options = {}, Backend backend = Backend::cpu);
  ~Plan();
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  // CPU plans. `in` and `out` each span extent() elements of dtype(); they are either the same
  // pointer (in place) or do not overlap.
  void execute(const void* in, void* out);
  // CUDA plans: device pointers, enqueued on `stream`, no host synchronization. `workspace` may be
  // null (the plan then uses the device buffer it allocated at construction) or point to
  // workspace_bytes() bytes of device memory that the caller owns.
  void execute(const void* in, void* out, cudaStream_t stream, void* workspace = nullptr);

  // Typed conveniences for CPU plans: check the element type and that the spans cover extent().
  template <class T> void execute(std::span<const T> in, std::span<T> out) {
    check_span(dtype_of<T>(), in.size(), out.size());
    execute(static_cast<const void*>(in.data()), static_cast<void*>(out.data()));
  }
  template <class T> void execute(std::span<T> inout) {
    check_span(dtype_of<T>(), inout.size(), inout.size());
    execute(static_cast<const void*>(inout.data()), static_cast<void*>(inout.data()));
  }

  // Bytes of device workspace a CUDA plan needs (0 for CPU plans, whose scratch the plan owns).
  std::size_t workspace_bytes() const;
  // The kernels and passes the plan runs (the CUDA planner's decisions, Options::tuning included).
  PlanDescription describe() const;
  // Elements spanned by one buffer: (batch-1)*distance + (n-1)*stride + 1.
  std::int64_t extent() const { return extent_; }
  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  const Options& options() const { return options_; }
  Backend backend() const { return backend_; }

 private:
  void check_span(DType t, std::size_t in_size, std::size_t out_size) const;

  Shape shape_;
  DType dtype_;
  Options options_;
  Backend backend_;
  std::int64_t extent_ = 0;
  std::unique_ptr<PlanImpl> impl_;
  PlanImpl::DirectFn direct_ = nullptr;  // impl_->direct(), kept at hand for execute
};

// True when this build has the CUDA backend and a CUDA device is usable; `why` (if given) receives
// the reason when it is not.
bool cuda_available(std::string* why = nullptr);

}  // namespace fwht
