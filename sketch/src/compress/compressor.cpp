// pagh::cuda::Compressor: the plan for device-resident dense FP32 inputs (sketch/cuda.hpp).
#include <chrono>
#include <string>

#include "estimate/device_state.hpp"
#include "compress/engine.hpp"
#include "pagh/error.hpp"

namespace pagh::cuda {
namespace {
constexpr const char* kWhere = "pagh::cuda::Compressor";
}  // namespace

struct Compressor::Impl {
  int device = 0;
  cudaStream_t stream = nullptr;
  std::int64_t m = 0, K = 0, p = 0;
  SketchParams params;
  CompressTimings timings;
  std::unique_ptr<Engine> engine;
  DeviceArray<float> rows_of_b;  // B^T for execute(): row k of B contiguous (none if b_by_rows_only)
  bool b_by_rows_only = false;
  DeviceArray<double> sketches, frobenius;
  bool executed = false;

  ~Impl() {
    engine.reset();
    if (stream) cudaStreamDestroy(stream);
  }
};

Compressor::Compressor(std::int64_t m, std::int64_t K, std::int64_t p, const SketchParams& params, const DeviceOptions& options)
    : impl_(std::make_unique<Impl>()) {
  if (m < 0 || K < 0 || p < 0) throw Error(kWhere, "negative dimensions");
  DeviceScope scope(options.device);
  Impl& s = *impl_;
  s.device = options.device, s.m = m, s.K = K, s.p = p, s.params = params;
  PAGH_CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), kWhere);
  const auto start = std::chrono::steady_clock::now();
  s.engine = std::make_unique<Engine>(m, K, p, params, true, options.force_general, options.tuning, s.stream);
  s.timings.hashing_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  s.b_by_rows_only = options.b_by_rows_only;
  if (!s.b_by_rows_only) s.rows_of_b = DeviceArray<float>(static_cast<std::size_t>(K * p), "rows of B");
  s.sketches = DeviceArray<double>(static_cast<std::size_t>(params.repetitions * s.engine->buckets()), "sketches");
  s.frobenius = DeviceArray<double>(1, "Frobenius estimate");
  s.timings.transformed_k = K;
}

Compressor::Compressor(Compressor&&) noexcept = default;
Compressor& Compressor::operator=(Compressor&&) noexcept = default;
Compressor::~Compressor() = default;

void Compressor::execute(const float* A, std::int64_t lda, const float* B, std::int64_t ldb) {
  Impl& s = *impl_;
  if (s.b_by_rows_only)
    throw Error(kWhere, "this plan was made with DeviceOptions::b_by_rows_only (no buffer to transpose B into): use execute_rows");
  if (ldb < std::max<std::int64_t>(s.K, 1)) throw Error(kWhere, "ldb = " + std::to_string(ldb) + " is less than K = " + std::to_string(s.K));
  DeviceScope scope(s.device);
  launch_transpose(B, ldb, s.K, s.p, s.rows_of_b.data(), s.p, s.stream);
  execute_rows(A, lda, s.rows_of_b.data(), std::max<std::int64_t>(s.p, 1));
}

void Compressor::execute_rows(const float* A, std::int64_t lda, const float* Bt, std::int64_t ldbt) {
  Impl& s = *impl_;
  if (lda < std::max<std::int64_t>(s.m, 1)) throw Error(kWhere, "lda = " + std::to_string(lda) + " is less than m = " + std::to_string(s.m));
  if (ldbt < std::max<std::int64_t>(s.p, 1)) throw Error(kWhere, "ldbt = " + std::to_string(ldbt) + " is less than p = " + std::to_string(s.p));
  if ((A == nullptr || Bt == nullptr) && s.K > 0 && (s.m > 0 || s.p > 0)) throw Error(kWhere, "null input pointer");
  DeviceScope scope(s.device);
  s.engine->reset();
  s.engine->add_dense(A, lda, Bt, ldbt, 0, s.K);
  s.engine->finish(s.sketches.data(), s.frobenius.data());
  s.executed = true;
}

void Compressor::synchronize() const {
  DeviceScope scope(impl_->device);
  PAGH_CUDA_CHECK(cudaStreamSynchronize(impl_->stream), kWhere);
}

cudaStream_t Compressor::stream() const { return impl_->stream; }

std::string Compressor::path() const { return impl_->engine->path(); }

DeviceProduct Compressor::product() const {
  const Impl& s = *impl_;
  if (!s.executed) throw Error(kWhere, "product() before execute()");
  DeviceScope scope(s.device);
  auto state = std::make_unique<DeviceProduct::State>();
  state->device = s.device, state->rows = s.m, state->cols = s.p, state->inner = s.K;
  state->params = s.params, state->timings = s.timings;
  const DeviceTables& from = s.engine->tables();
  DeviceTables& to = state->tables;
  to.m = from.m, to.p = from.p, to.buckets = from.buckets, to.repetitions = from.repetitions;
  to.bucket_a = DeviceArray<std::uint32_t>(from.bucket_a.size(), "hash table h1");
  to.sign_a = DeviceArray<std::int8_t>(from.sign_a.size(), "hash table s1");
  to.bucket_b = DeviceArray<std::uint32_t>(from.bucket_b.size(), "hash table h2");
  to.sign_b = DeviceArray<std::int8_t>(from.sign_b.size(), "hash table s2");
  state->sketches = DeviceArray<double>(s.sketches.size(), "sketches");
  auto copy = [&](void* dst, const void* src, std::size_t bytes) {
    if (bytes) PAGH_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s.stream), kWhere);
  };
  copy(to.bucket_a.data(), from.bucket_a.data(), from.bucket_a.bytes());
  copy(to.sign_a.data(), from.sign_a.data(), from.sign_a.bytes());
  copy(to.bucket_b.data(), from.bucket_b.data(), from.bucket_b.bytes());
  copy(to.sign_b.data(), from.sign_b.data(), from.sign_b.bytes());
  copy(state->sketches.data(), s.sketches.data(), s.sketches.bytes());
  PAGH_CUDA_CHECK(cudaMemcpyAsync(&state->frobenius, s.frobenius.data(), sizeof(double), cudaMemcpyDeviceToHost, s.stream), kWhere);
  PAGH_CUDA_CHECK(cudaStreamSynchronize(s.stream), kWhere);
  return DeviceProduct(std::move(state));
}

}  // namespace pagh::cuda
