// DeviceProduct: ownership, transfers to and from the host, and the Eigen-facing side of its
// queries (the kernels are in device_product.cu, behind device_queries.hpp).
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <utility>

#include "compress/huge_pages.hpp"
#include "compress/paths/kernels.hpp"
#include "estimate/device_statistics.hpp"
#include "estimate/device_subtract.hpp"
#include "estimate/product_view_of.hpp"
#include "sketch/cuda.hpp"

namespace pagh::cuda {
namespace {

template <class T>
DeviceArray<T> upload_vector(const std::vector<T>& host, const char* what, const char* where) {
  DeviceArray<T> device(host.size(), what);
  if (!host.empty()) PAGH_CUDA_CHECK(cudaMemcpy(device.data(), host.data(), device.bytes(), cudaMemcpyHostToDevice), where);
  return device;
}

template <class T>
std::vector<T> download_array(const DeviceArray<T>& device, std::size_t count, const char* where) {
  if (device.size() < count) throw Error(where, "device array smaller than its recorded size");
  std::vector<T> host;
  cpu_sketch::assign_zeroed(host, count);  // a sketch of hundreds of MB: a page fault per 2 MiB, not per 4 KiB
  if (count) PAGH_CUDA_CHECK(cudaMemcpy(host.data(), device.data(), count * sizeof(T), cudaMemcpyDeviceToHost), where);
  return host;
}

}  // namespace

bool available(std::string* reason) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    // Without a driver this is an error (e.g. 35, cudaErrorInsufficientDriver), not zero devices.
    (void)cudaGetLastError();
    if (reason) *reason = std::string("no usable CUDA device: ") + cudaGetErrorName(status) + ": " + cudaGetErrorString(status);
    return false;
  }
  if (count == 0) {
    if (reason) *reason = "no usable CUDA device: the driver reports none";
    return false;
  }
  std::string why;
  if (!device_kernels_usable(0, &why)) {
    if (reason) *reason = "no usable CUDA device: " + why;
    return false;
  }
  return true;
}

DeviceProduct::DeviceProduct(std::unique_ptr<State> state) : state_(std::move(state)) {
  if (!state_) throw Error("pagh::cuda::DeviceProduct", "null state");
}
DeviceProduct::DeviceProduct(DeviceProduct&&) noexcept = default;
DeviceProduct& DeviceProduct::operator=(DeviceProduct&&) noexcept = default;
DeviceProduct::~DeviceProduct() {
  // Device memory must be freed on the device it was allocated on.
  if (!state_) return;
  int previous = 0;
  const bool switched = cudaGetDevice(&previous) == cudaSuccess && previous != state_->device &&
                        cudaSetDevice(state_->device) == cudaSuccess;
  state_.reset();
  if (switched) cudaSetDevice(previous);
}

std::int64_t DeviceProduct::rows() const { return state_->rows; }
std::int64_t DeviceProduct::cols() const { return state_->cols; }
std::int64_t DeviceProduct::inner() const { return state_->inner; }
std::int64_t DeviceProduct::buckets() const { return state_->tables.buckets; }
int DeviceProduct::repetitions() const { return state_->tables.repetitions; }
const SketchParams& DeviceProduct::params() const { return state_->params; }
const CompressTimings& DeviceProduct::timings() const { return state_->timings; }
double DeviceProduct::frobenius_estimate() const { return state_->frobenius; }
double DeviceProduct::sigma() const { return state_->frobenius / std::sqrt(static_cast<double>(buckets())); }
const double* DeviceProduct::device_sketches() const { return state_->sketches.data(); }

DeviceProduct DeviceProduct::upload(const CompressedProduct& host, int device) {
  constexpr const char* kWhere = "pagh::cuda::DeviceProduct::upload";
  DeviceScope scope(device);
  auto s = std::make_unique<State>();
  s->device = device;
  s->rows = host.rows(), s->cols = host.cols(), s->inner = host.inner();
  s->params = host.params();
  s->timings = host.timings();
  s->frobenius = host.frobenius_estimate();
  const HashTables& t = host.tables();
  s->tables.m = t.m, s->tables.p = t.p, s->tables.buckets = t.buckets, s->tables.repetitions = t.repetitions;
  s->tables.bucket_a = upload_vector(t.bucket_a, "hash table h1", kWhere);
  s->tables.bucket_b = upload_vector(t.bucket_b, "hash table h2", kWhere);
  s->tables.sign_a = upload_vector(t.sign_a, "sign table s1", kWhere);
  s->tables.sign_b = upload_vector(t.sign_b, "sign table s2", kWhere);
  const std::size_t b = static_cast<std::size_t>(host.buckets());
  s->sketches = DeviceArray<double>(b * static_cast<std::size_t>(host.repetitions()), "sketches");
  for (int r = 0; r < host.repetitions(); ++r) {
    const auto sketch = host.sketch(r);
    if (b) PAGH_CUDA_CHECK(cudaMemcpy(s->sketches.data() + r * b, sketch.data(), b * sizeof(double), cudaMemcpyHostToDevice), kWhere);
  }
  return DeviceProduct(std::move(s));
}

DeviceProduct DeviceProduct::from_device_values(std::int64_t rows, std::int64_t cols, std::int64_t inner, std::int64_t buckets,
                                                const SketchParams& params, const double* values, int device,
                                                const CompressTimings& timings) {
  constexpr const char* kWhere = "pagh::cuda::DeviceProduct::from_device_values";
  DeviceScope scope(device);
  auto s = std::make_unique<State>();
  s->device = device;
  s->rows = rows, s->cols = cols, s->inner = inner;
  s->params = params;
  s->timings = timings;
  // On the default stream, which need not wait for the stream that wrote `values`: the caller hands
  // them over complete (cuda.hpp).
  s->tables = draw_device_tables(params.seed, params.repetitions, rows, cols, buckets, nullptr);
  const std::size_t count = static_cast<std::size_t>(buckets) * static_cast<std::size_t>(params.repetitions);
  s->sketches = DeviceArray<double>(count, "sketches");
  if (count) PAGH_CUDA_CHECK(cudaMemcpyAsync(s->sketches.data(), values, count * sizeof(double), cudaMemcpyDeviceToDevice, nullptr), kWhere);
  DeviceArray<double> frobenius(1, "Frobenius estimate");
  launch_frobenius(s->sketches.data(), static_cast<std::int64_t>(count), params.repetitions, frobenius.data(), nullptr);
  PAGH_CUDA_CHECK(cudaMemcpy(&s->frobenius, frobenius.data(), sizeof(double), cudaMemcpyDeviceToHost), kWhere);
  return DeviceProduct(std::move(s));
}

HashTables DeviceProduct::host_tables() const {
  constexpr const char* kWhere = "pagh::cuda::DeviceProduct::host_tables";
  const State& s = *state_;
  DeviceScope scope(s.device);
  const std::size_t d = static_cast<std::size_t>(s.tables.repetitions);
  HashTables tables;
  tables.m = s.rows, tables.p = s.cols, tables.buckets = s.tables.buckets, tables.repetitions = s.tables.repetitions;
  tables.bucket_a = download_array(s.tables.bucket_a, d * static_cast<std::size_t>(s.rows), kWhere);
  tables.sign_a = download_array(s.tables.sign_a, d * static_cast<std::size_t>(s.rows), kWhere);
  tables.bucket_b = download_array(s.tables.bucket_b, d * static_cast<std::size_t>(s.cols), kWhere);
  tables.sign_b = download_array(s.tables.sign_b, d * static_cast<std::size_t>(s.cols), kWhere);
  return tables;
}

CompressedProduct DeviceProduct::to_host() const {
  constexpr const char* kWhere = "pagh::cuda::DeviceProduct::to_host";
  const State& s = *state_;
  DeviceScope scope(s.device);
  const std::size_t d = static_cast<std::size_t>(s.tables.repetitions);
  std::vector<double> sketches = download_array(s.sketches, d * static_cast<std::size_t>(s.tables.buckets), kWhere);
  return CompressedProduct(s.rows, s.cols, s.inner, s.params, host_tables(), std::move(sketches), s.timings);
}

void DeviceProduct::copy_to_host(std::span<double> out) const {
  constexpr const char* kWhere = "pagh::cuda::DeviceProduct::copy_to_host";
  const State& s = *state_;
  const std::size_t count = static_cast<std::size_t>(s.tables.repetitions) * static_cast<std::size_t>(s.tables.buckets);
  if (out.size() != count) throw Error(kWhere, "the host buffer does not hold d * b values");
  DeviceScope scope(s.device);
  if (count) PAGH_CUDA_CHECK(cudaMemcpy(out.data(), s.sketches.data(), count * sizeof(double), cudaMemcpyDeviceToHost), kWhere);
}

void DeviceProduct::values_at(std::span<const std::int64_t> positions, std::span<double> out) const {
  constexpr const char* kWhere = "pagh::cuda::DeviceProduct::values_at";
  const State& s = *state_;
  const std::int64_t count = static_cast<std::int64_t>(s.tables.repetitions) * s.tables.buckets;
  if (out.size() != positions.size()) throw Error(kWhere, "as many outputs as positions are needed");
  for (std::int64_t at : positions)
    if (at < 0 || at >= count) throw Error(kWhere, "position " + std::to_string(at) + " is outside the d * b values");
  DeviceScope scope(s.device);
  device_values_at(s.sketches.data(), positions, out, nullptr);
}

namespace {
template <class T>
DeviceArray<T> device_copy(const DeviceArray<T>& from, const char* what, const char* where) {
  DeviceArray<T> to(from.size(), what);
  if (from.size()) PAGH_CUDA_CHECK(cudaMemcpy(to.data(), from.data(), from.bytes(), cudaMemcpyDeviceToDevice), where);
  return to;
}
}  // namespace

DeviceProduct DeviceProduct::minus(std::span<const Entry> known) const {
  constexpr const char* kWhere = "pagh::cuda::DeviceProduct::minus";
  const State& from = *state_;
  for (const Entry& e : known)
    if (e.row < 0 || e.row >= from.rows || e.col < 0 || e.col >= from.cols)
      throw Error(kWhere, "entry (" + std::to_string(e.row) + ", " + std::to_string(e.col) + ") out of range");
  DeviceScope scope(from.device);
  auto s = std::make_unique<State>();
  s->device = from.device;
  s->rows = from.rows, s->cols = from.cols, s->inner = from.inner;
  s->params = from.params, s->timings = from.timings;
  s->tables.m = from.tables.m, s->tables.p = from.tables.p, s->tables.buckets = from.tables.buckets;
  s->tables.repetitions = from.tables.repetitions;
  s->tables.bucket_a = device_copy(from.tables.bucket_a, "hash table h1", kWhere);
  s->tables.bucket_b = device_copy(from.tables.bucket_b, "hash table h2", kWhere);
  s->tables.sign_a = device_copy(from.tables.sign_a, "sign table s1", kWhere);
  s->tables.sign_b = device_copy(from.tables.sign_b, "sign table s2", kWhere);
  s->sketches = device_copy(from.sketches, "sketches", kWhere);
  device_subtract(s->sketches.data(), s->tables, known, nullptr);
  DeviceArray<double> frobenius(1, "Frobenius estimate");
  launch_frobenius(s->sketches.data(), static_cast<std::int64_t>(s->sketches.size()), s->tables.repetitions, frobenius.data(), nullptr);
  PAGH_CUDA_CHECK(cudaMemcpy(&s->frobenius, frobenius.data(), sizeof(double), cudaMemcpyDeviceToHost), kWhere);
  return DeviceProduct(std::move(s));
}

SketchStatistics DeviceProduct::statistics() const {
  const State& s = *state_;
  DeviceScope scope(s.device);
  return device_sketch_statistics(s.sketches.data(), static_cast<std::int64_t>(s.tables.repetitions) * s.tables.buckets, nullptr);
}

// The query kernels keep the d single estimates of an entry in registers, so they take at most
// kMaxDeviceRepetitions; products with more repetitions answer from the host copy (the same
// semantics: the device answers equal the host's, tests/sketch/cuda_product_test.cpp).
bool DeviceProduct::queries_on_device() const { return repetitions() >= 1 && repetitions() <= kMaxDeviceRepetitions; }

std::vector<Entry> DeviceProduct::top_k(std::size_t k, Recovery how, RecoveryStats* stats) const {
  if (!queries_on_device()) return to_host().top_k(k, how, stats);
  DeviceScope scope(state_->device);
  RecoveryStats local;
  return device_recover_top_k(view_of(*state_), k, how, stats ? *stats : local, nullptr);
}

std::vector<Entry> DeviceProduct::above(double threshold, std::size_t max_entries, Recovery how, RecoveryStats* stats) const {
  if (!queries_on_device()) return to_host().above(threshold, max_entries, how, stats);
  DeviceScope scope(state_->device);
  RecoveryStats local;
  return device_recover_above(view_of(*state_), threshold, max_entries, how, stats ? *stats : local, nullptr);
}

Eigen::MatrixXd DeviceProduct::decompress(std::size_t max_bytes) const {
  const double bytes = 8.0 * static_cast<double>(rows()) * static_cast<double>(cols());
  if (bytes > static_cast<double>(max_bytes))
    throw Error("pagh::cuda::DeviceProduct::decompress", "the " + std::to_string(rows()) + " x " + std::to_string(cols()) +
                                                             " estimate needs " + std::to_string(bytes / 1e9) +
                                                             " GB, more than the allowed " + std::to_string(max_bytes / 1e9) +
                                                             " GB");
  if (!queries_on_device()) return to_host().decompress(max_bytes);
  DeviceScope scope(state_->device);
  Eigen::MatrixXd out(rows(), cols());
  device_decompress(view_of(*state_), out.data(), nullptr);
  return out;
}

}  // namespace pagh::cuda
