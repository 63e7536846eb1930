#include "compress/paths/general_path.hpp"

#include <algorithm>

namespace pagh::cuda {
namespace {

constexpr const char* kWhere = "pagh::cuda::compress";
// Vectors of one batch: about this many bytes (the fwht plan runs them as one batch).
constexpr std::int64_t kBatchBytes = std::int64_t{256} << 20;

int dtype_code(fwht::DType t) {
  switch (t) {
    case fwht::DType::f64: return 0;
    case fwht::DType::f32: return 1;
    case fwht::DType::f16: return 2;
    default: return 3;
  }
}

}  // namespace

GeneralPath::GeneralPath(const DeviceTables& tables, std::int64_t K, const SketchParams& params, int acc_bytes)
    : b_(tables.buckets), d_(tables.repetitions), acc_bytes_(acc_bytes), precision_(params.precision) {
  const std::int64_t storage = static_cast<std::int64_t>(fwht::size_of(params.precision));
  pairs_per_batch_ = std::clamp<std::int64_t>(kBatchBytes / (2 * b_ * std::max<std::int64_t>(storage, acc_bytes_)), 1,
                                              std::max<std::int64_t>(K, 1));
  const auto vector_count = static_cast<std::size_t>(2 * pairs_per_batch_ * b_);
  vectors_ = DeviceArray<char>(vector_count * static_cast<std::size_t>(storage), "sketch vectors");
  if (storage == 2) scratch_ = DeviceArray<char>(vector_count * 4, "scatter buffer");
  const fwht::Options forward_options{.stabilization = params.stabilization, .algorithm = params.algorithm, .compute = params.compute};
  forward_.emplace(fwht::Shape{.n = b_, .batch = 2 * pairs_per_batch_}, params.precision, forward_options, fwht::Backend::cuda);
}

// For each repetition and batch: zero, scatter (in the accumulation type), round to 16 bits if
// that is the storage, transform, and add the pairs' products to the repetition's spectrum.
void GeneralPath::add(const Lines& a, const Lines& b, std::int64_t count, const DeviceTables& tables, char* spectrum_base,
                      cudaStream_t stream) {
  const std::int64_t m = tables.m, p = tables.p;
  const int dtype = dtype_code(precision_);
  const bool rounded = fwht::size_of(precision_) == 2;
  void* target = rounded ? static_cast<void*>(scratch_.data()) : static_cast<void*>(vectors_.data());
  const std::size_t target_bytes = static_cast<std::size_t>(2 * pairs_per_batch_ * b_) * static_cast<std::size_t>(acc_bytes_);
  for (int t = 0; t < d_; ++t) {
    char* spectrum = spectrum_base + static_cast<std::size_t>(t * b_) * static_cast<std::size_t>(acc_bytes_);
    for (std::int64_t first = 0; first < count; first += pairs_per_batch_) {
      const std::int64_t n = std::min(pairs_per_batch_, count - first);
      PAGH_CUDA_CHECK(cudaMemsetAsync(target, 0, target_bytes, stream), kWhere);
      launch_scatter(a, b, tables.bucket_a.data() + t * m, tables.sign_a.data() + t * m, tables.bucket_b.data() + t * p,
                     tables.sign_b.data() + t * p, first, n, b_, target, acc_bytes_, stream);
      if (rounded) launch_round_to_16bit(static_cast<const float*>(target), vectors_.data(), 2 * pairs_per_batch_ * b_, dtype, stream);
      forward_->execute(vectors_.data(), vectors_.data(), stream);
      launch_multiply_accumulate(vectors_.data(), n, b_, dtype, spectrum, stream);
    }
  }
}

}  // namespace pagh::cuda
