// Backend::cuda of pagh::sketch: pagh::cuda::compress, returned as a CompressedProduct that keeps the
// sketches on the device (kept_on_device: DeviceSketches answers there; the host copy comes when needed). Registered with the CPU library
// during static initialization; sketch/CMakeLists.txt makes every consumer of pagh_sketch_cuda link
// this object (the symbol pagh_sketch_cuda_backend), so registration does not depend on which other
// pagh::cuda functions a program calls.
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "compress/backend_registry.hpp"
#include "sketch/cuda.hpp"

namespace pagh::cuda {
namespace {

class DeviceCopy final : public DeviceSketches {
 public:
  explicit DeviceCopy(DeviceProduct product) : product_(std::move(product)) {}
  std::vector<Entry> top_k(std::size_t k, Recovery how, RecoveryStats* stats) const override {
    return product_.top_k(k, how, stats);
  }
  std::vector<Entry> above(double threshold, std::size_t max_entries, Recovery how, RecoveryStats* stats) const override {
    return product_.above(threshold, max_entries, how, stats);
  }
  Eigen::MatrixXd decompress(std::size_t max_bytes) const override { return product_.decompress(max_bytes); }
  const double* device_values() const override { return product_.device_sketches(); }
  void copy_to_host(std::span<double> out) const override { product_.copy_to_host(out); }
  void values_at(std::span<const std::int64_t> positions, std::span<double> out) const override { product_.values_at(positions, out); }
  SketchStatistics statistics() const override { return product_.statistics(); }
  std::shared_ptr<const DeviceSketches> minus(std::span<const Entry> known) const override {
    return std::make_shared<const DeviceCopy>(product_.minus(known));
  }

 private:
  DeviceProduct product_;
};

template <class MatrixA, class MatrixB>
CompressedProduct on_device(const MatrixA& A, const MatrixB& B, const SketchParams& params) {
  // The sketches stay on the device: what reads them (queries, the noise model's statistics, single
  // entries) runs there, and the host copy is made only when something needs every value.
  return kept_on_device(compress(A, B, params, DeviceOptions{.device = params.device}));
}

CompressedProduct dense_f64(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const SketchParams& p) { return on_device(A, B, p); }
CompressedProduct dense_f32(const Eigen::MatrixXf& A, const Eigen::MatrixXf& B, const SketchParams& p) { return on_device(A, B, p); }
CompressedProduct sparse_f64(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B, const SketchParams& p) {
  return on_device(A, B, p);
}
bool usable(std::string* reason) { return available(reason); }

}  // namespace

CompressedProduct with_device_queries(CompressedProduct host, DeviceProduct device) {
  return CompressedProduct::with_device_sketches(std::move(host), std::make_shared<const DeviceCopy>(std::move(device)));
}

CompressedProduct kept_on_device(DeviceProduct device, const HashTables* tables) {
  const std::int64_t rows = device.rows(), cols = device.cols(), inner = device.inner();
  const SketchParams params = device.params();
  const CompressTimings timings = device.timings();
  HashTables host = tables ? *tables : device.host_tables();
  return CompressedProduct::kept_on_device(rows, cols, inner, params, std::move(host),
                                           std::make_shared<const DeviceCopy>(std::move(device)), timings);
}
}  // namespace pagh::cuda

extern "C" {
// Referenced by the link option of pagh_sketch_cuda's consumers; its initializer registers the backend.
extern const int pagh_sketch_cuda_backend;
const int pagh_sketch_cuda_backend = pagh::detail::register_cuda_backend({
    .dense_f64 = pagh::cuda::dense_f64,
    .dense_f32 = pagh::cuda::dense_f32,
    .sparse_f64 = pagh::cuda::sparse_f64,
    .available = pagh::cuda::usable,
});
}
