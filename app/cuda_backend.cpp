// The CUDA backend: pagh::sketch with pagh::Backend::cuda for the compressed product (the host copy
// of its sketches, holding the device copy that answers top-k, threshold and dense decompression on
// the GPU), cuBLAS DGEMM for the exact product.
#include <cuda_runtime_api.h>

#include <string>

#include "backend.hpp"
#include "cli_error.hpp"
#include "sketch/cuda.hpp"

namespace pagh_mm {
namespace {

class CudaBackend final : public SketchBackend {
 public:
  CudaBackend(int device, int threads) : device_(device), threads_(threads) {
    // select_backend saw a device; this also catches one this build's kernels cannot run on.
    std::string why;
    if (!pagh::cuda::available(&why)) throw CliError(ExitCode::unavailable, "--backend cuda", why);
  }

  std::string name() const override { return "cuda"; }

  std::string device() const override {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device_) != cudaSuccess) {
      (void)cudaGetLastError();
      return "CUDA device " + std::to_string(device_);
    }
    const double gib = static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0);
    return std::string(prop.name) + " (device " + std::to_string(device_) + ", sm_" + std::to_string(prop.major) +
           std::to_string(prop.minor) + ", " + std::to_string(prop.multiProcessorCount) + " SMs, " +
           std::to_string(static_cast<int>(gib + 0.5)) + " GiB)";
  }

  std::string exact_method() const override { return "cuBLAS DGEMM on the GPU"; }

  pagh::CompressedProduct compress(const MatrixData& a, const MatrixData& b, const pagh::SketchParams& params) override {
    pagh::SketchParams p = params;
    p.threads = threads_;  // host-side staging threads
    p.backend = pagh::Backend::cuda;
    p.device = device_;
    return sketch_operands(a, b, p);
  }

  Eigen::MatrixXd exact_product(const MatrixData& a, const MatrixData& b, double& ms) override {
    if (a.index() == 1 && b.index() == 1) return pagh::cuda::exact_product(std::get<1>(a), std::get<1>(b), &ms, device_);
    // A dense side makes the product dense anyway, and DGEMM needs both sides dense on the device:
    // densify the sparse side here (no more memory than the device copy takes).
    return pagh::cuda::exact_product(as_dense(a), as_dense(b), &ms, device_);
  }

 private:
  static Eigen::MatrixXd as_dense(const MatrixData& m) {
    if (m.index() == 0) return std::get<0>(m);
    return Eigen::MatrixXd(std::get<1>(m));
  }

  int device_, threads_;
};

}  // namespace

std::unique_ptr<SketchBackend> make_cuda_backend(int device, int threads) {
  return std::make_unique<CudaBackend>(device, threads);
}

}  // namespace pagh_mm
