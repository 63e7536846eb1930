// The CUDA compression engine (engine.hpp): prepares the path that choose_path (path_choice.hpp)
// picks and finishes with one inverse transform per repetition, as the CPU engine does.
#include "compress/engine.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "compress/path_choice.hpp"
#include "pagh/error.hpp"

namespace pagh::cuda {
namespace {

constexpr const char* kWhere = "pagh::cuda::compress";

bool device_clusters() {
  int device = 0, supported = 0;
  PAGH_CUDA_CHECK(cudaGetDevice(&device), kWhere);
  PAGH_CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrClusterLaunch, device), kWhere);
  return supported != 0;
}

}  // namespace

Engine::Engine(std::int64_t m, std::int64_t K, std::int64_t p, const SketchParams& params, bool dense, bool force_general,
               const PathTuning& tuning, cudaStream_t stream)
    : m_(m), p_(p), b_(sketch_length(m, p, params)), d_(params.repetitions), stream_(stream) {
  if (params.repetitions < 1) throw Error(kWhere, "repetitions = " + std::to_string(params.repetitions) + " must be at least 1");
  if (fwht::is_integer(params.precision))
    throw Error(kWhere, "precision " + std::string(fwht::to_string(params.precision)) + " is not supported (use f64, f32, f16 or bf16)");
  validate(tuning);
  log2b_ = std::countr_zero(static_cast<std::uint64_t>(b_));
  const PathChoice choice = choose_path(m, p, log2b_, params, dense, force_general, tuning, device_clusters());
  acc_bytes_ = params.precision == fwht::DType::f64 ? 8 : 4;
  path_ = choice.reason;

  tables_ = draw_device_tables(params.seed, d_, m, p, b_, stream);
  const fwht::DType acc_type = acc_bytes_ == 8 ? fwht::DType::f64 : fwht::DType::f32;
  inverse_.emplace(fwht::Shape{.n = b_, .batch = d_}, acc_type,
                   fwht::Options{.normalization = fwht::Normalization::inverse, .stabilization = params.stabilization,
                                 .algorithm = params.algorithm},
                   fwht::Backend::cuda);
  const auto db = static_cast<std::size_t>(d_ * b_);
  spectrum_ = DeviceArray<char>(db * static_cast<std::size_t>(acc_bytes_), "sketch spectra");

  if (choice.path == Path::wide) fused_ = make_wide_path(tables_, log2b_, K, params, tuning, choice.tensor_cores, stream);
  if (choice.path == Path::clusters) fused_ = make_cluster_path(tables_, log2b_, choice.cluster_log, stream);
  if (choice.path != Path::general && !fused_) {
    fused_ = make_slice_path(tables_, log2b_, stream);
    if (!fused_) path_ = "general (scatter collisions beyond the fused kernel's encoding)";
  }
  if (fused_) {
    int device = 0, sms = 0;
    PAGH_CUDA_CHECK(cudaGetDevice(&device), kWhere);
    PAGH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), kWhere);
    // Groups of k that fill the resident blocks (groups x slices x d blocks): one wave, or a few.
    const std::int64_t slices = b_ >> fused_->slice_log();
    groups_ = group_count(fused_->resident_blocks(sms), slices * d_, K, static_cast<std::int64_t>(db * sizeof(float)));
    path_ = fused_->name() + " (" + std::to_string(groups_) + " groups x " + std::to_string(slices) + " slices x " +
            std::to_string(d_) + " repetitions)";
    partials_ = DeviceArray<float>(static_cast<std::size_t>(groups_) * db, "partial spectra");
  } else {
    general_.emplace(tables_, K, params, acc_bytes_);
  }
  reset();
}

void Engine::reset() {
  started_ = false;
  if (!fused_) PAGH_CUDA_CHECK(cudaMemsetAsync(spectrum_.data(), 0, spectrum_.bytes(), stream_), kWhere);
  direct_.reset(stream_);
}

void Engine::add_dense(const float* a, std::int64_t lda, const float* bt, std::int64_t ldbt, std::int64_t k_first,
                       std::int64_t count) {
  if (count <= 0) return;
  if (fused_) {
    fused_->add(a, lda, bt, ldbt, k_first, count, {.data = partials_.data(), .groups = groups_, .accumulate = started_}, stream_);
    started_ = true;
    return;
  }
  Lines la, lb;
  la.values_f32 = a, la.ld = lda, la.length = m_;
  lb.values_f32 = bt, lb.ld = ldbt, lb.length = p_;
  general_->add(la, lb, count, tables_, spectrum_.data(), stream_);
}

void Engine::add_dense(const double* a, std::int64_t lda, const double* bt, std::int64_t ldbt, std::int64_t count) {
  if (fused_) throw Error(kWhere, "internal: double chunk on the fused path");
  if (count <= 0) return;
  Lines la, lb;
  la.values_f64 = a, la.ld = lda, la.length = m_;
  lb.values_f64 = bt, lb.ld = ldbt, lb.length = p_;
  general_->add(la, lb, count, tables_, spectrum_.data(), stream_);
}

void Engine::add_sparse(const Lines& a, const Lines& b, std::int64_t count) {
  if (fused_) throw Error(kWhere, "internal: sparse chunk on the fused path");
  if (count > 0) general_->add(a, b, count, tables_, spectrum_.data(), stream_);
}

void Engine::finish(double* sketches, double* frobenius) {
  const std::int64_t db = d_ * b_;
  if (fused_) {
    if (!started_) PAGH_CUDA_CHECK(cudaMemsetAsync(partials_.data(), 0, partials_.bytes(), stream_), kWhere);
    launch_reduce_partials(partials_.data(), groups_, db, reinterpret_cast<float*>(spectrum_.data()), stream_);
  }
  inverse_->execute(spectrum_.data(), spectrum_.data(), stream_);
  launch_widen(spectrum_.data(), acc_bytes_, db, sketches, stream_);
  direct_.add_to(sketches, stream_);  // c_t = H P_t / b + direct part
  launch_frobenius(sketches, db, d_, frobenius, stream_);
}

}  // namespace pagh::cuda
