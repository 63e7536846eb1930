// fwht::Plan: argument checking and dispatch to a backend.
#include "fwht/plan.hpp"

#include <string>

#include "common/validate.hpp"
#include "cpu/cpu_plan.hpp"
#include "pagh/error.hpp"

#if defined(FWHT_HAVE_CUDA_BACKEND)
#include "cuda/cuda_plan.hpp"
#endif

namespace fwht {

namespace detail {

void validate(std::int64_t n, DType dtype, const Options& o, const char* where) {
  if (!is_power_of_two(n))
    throw pagh::Error(where, "n = " + std::to_string(n) +
                                 " is not a power of two (fwht never pads: pad the input explicitly)");
  if (is_integer(dtype)) {
    if (o.stabilization != Stabilization::none)
      throw pagh::Error(where, "stabilization " + std::string(to_string(o.stabilization)) +
                                   " applies to floating types only, not " + std::string(to_string(dtype)));
    if (o.normalization == Normalization::orthonormal)
      throw pagh::Error(where, "orthonormal normalization (1/sqrt(n)) is not exact for integer type " +
                                   std::string(to_string(dtype)) + "; use inverse or a floating type");
  }
  if (is_wide(o.stabilization) && dtype == DType::f64)
    throw pagh::Error(where, "stabilization " + std::string(to_string(o.stabilization)) +
                                 " needs a wider type than the compute type, and f64 has none on chip; use kahan or neumaier");
  if (o.algorithm == Algorithm::alman_rao && o.stabilization != Stabilization::none)
    throw pagh::Error(where, "alman_rao has no stabilized variant; use algorithm folklore with stabilization " +
                                 std::string(to_string(o.stabilization)));
  if (o.threads < 0) throw pagh::Error(where, "threads = " + std::to_string(o.threads) + " is negative");
}

}  // namespace detail

namespace {

constexpr const char* kWhere = "fwht::Plan";

// log2 of size_of(t), inline: execute() is on the path of every transform, 2^4 ones included.
constexpr int element_log2_bytes(DType t) {
  return t == DType::f64 || t == DType::i64 ? 3 : t == DType::f32 || t == DType::i32 ? 2 : 1;
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw pagh::Error(kWhere, std::string(what) + " overflows 64-bit indexing");
  return r;
}
std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw pagh::Error(kWhere, std::string(what) + " overflows 64-bit indexing");
  return r;
}

}  // namespace

Plan::Plan(Shape shape, DType dtype, Options options, Backend backend)
    : shape_(shape), dtype_(dtype), options_(options), backend_(backend) {
  detail::validate(shape.n, dtype, options, kWhere);
  if (shape.batch < 1) throw pagh::Error(kWhere, "batch = " + std::to_string(shape.batch) + " must be at least 1");
  if (shape.stride < 1) throw pagh::Error(kWhere, "stride = " + std::to_string(shape.stride) + " must be at least 1");
  if (shape.distance < 0) throw pagh::Error(kWhere, "distance = " + std::to_string(shape.distance) + " is negative");
  const std::int64_t span = checked_add(checked_mul(shape.n - 1, shape.stride, "(n-1)*stride"), 1, "extent");
  if (shape_.distance == 0) shape_.distance = checked_mul(shape.n, shape.stride, "n*stride");
  extent_ = checked_add(checked_mul(shape.batch - 1, shape_.distance, "(batch-1)*distance"), span, "extent");
  checked_mul(extent_, static_cast<std::int64_t>(size_of(dtype)), "extent in bytes");
  // Transforms must not share elements: either each lies beyond the previous one (distance >=
  // span), or they interleave inside one stride (stride >= (batch-1)*distance + 1, distance >= 1).
  const bool blocks = shape_.distance >= span;
  const bool interleaved = shape_.distance >= 1 && shape.stride >= (shape.batch - 1) * shape_.distance + 1;
  if (shape.batch > 1 && !blocks && !interleaved)
    throw pagh::Error(kWhere, "transforms overlap (n = " + std::to_string(shape.n) + ", stride = " +
                                  std::to_string(shape.stride) + ", distance = " + std::to_string(shape_.distance) +
                                  ", batch = " + std::to_string(shape.batch) + ")");
  switch (backend) {
    case Backend::cpu: impl_ = cpu::make_cpu_plan(shape_, dtype, options); break;
    case Backend::cuda:
#if defined(FWHT_HAVE_CUDA_BACKEND)
      impl_ = cuda::make_cuda_plan(shape_, dtype, options);
      break;
#else
      throw pagh::Error(kWhere, "backend cuda is not available: this build of fwht has no CUDA backend");
#endif
  }
  direct_ = impl_->direct();
}

Plan::~Plan() = default;
Plan::Plan(Plan&&) noexcept = default;
Plan& Plan::operator=(Plan&&) noexcept = default;

void Plan::execute(const void* in, void* out) {
  if (backend_ != Backend::cpu)
    throw pagh::Error("fwht::Plan::execute", "this is a CUDA plan: call execute(in, out, stream) with device pointers");
  if (in == nullptr || out == nullptr) throw pagh::Error("fwht::Plan::execute", "null data pointer");
  const auto bytes = static_cast<std::size_t>(extent_) << element_log2_bytes(dtype_);
  const auto* a = static_cast<const unsigned char*>(in);
  const auto* b = static_cast<const unsigned char*>(out);
  if (a != b && a < b + bytes && b < a + bytes)
    throw pagh::Error("fwht::Plan::execute", "in and out overlap without being the same buffer");
  if (direct_ != nullptr) return direct_(in, out);
  impl_->execute(in, out);
}

void Plan::execute(const void* in, void* out, cudaStream_t stream, void* workspace) {
  if (in == nullptr || out == nullptr) throw pagh::Error("fwht::Plan::execute", "null data pointer");
  impl_->execute(in, out, stream, workspace);
}

std::size_t Plan::workspace_bytes() const { return impl_->workspace_bytes(); }

PlanDescription Plan::describe() const { return impl_->describe(); }

void Plan::check_span(DType t, std::size_t in_size, std::size_t out_size) const {
  if (t != dtype_)
    throw pagh::Error("fwht::Plan::execute", "element type " + std::string(to_string(t)) + " does not match the plan's " +
                                                 std::string(to_string(dtype_)));
  const auto need = static_cast<std::size_t>(extent_);
  if (in_size < need || out_size < need)
    throw pagh::Error("fwht::Plan::execute", "buffer of " + std::to_string(std::min(in_size, out_size)) +
                                                 " elements is shorter than the plan's extent " + std::to_string(need));
}

bool cuda_available(std::string* why) {
#if defined(FWHT_HAVE_CUDA_BACKEND)
  return cuda::device_usable(why);
#else
  if (why) *why = "this build of fwht has no CUDA backend";
  return false;
#endif
}

}  // namespace fwht
