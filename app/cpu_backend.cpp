// The CPU backend: sketch-cpu for the compressed product, Eigen for the exact product.
#include <omp.h>

#include <chrono>
#include <fstream>
#include <string>

#include "backend.hpp"
#include "sketch/verify.hpp"

namespace pagh_mm {
namespace {

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (!line.starts_with("model name")) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    std::string name = line.substr(colon + 1);
    name.erase(0, name.find_first_not_of(" \t"));
    return name;
  }
  return "CPU";
}

class CpuBackend final : public SketchBackend {
 public:
  explicit CpuBackend(int threads) : threads_(threads) {
    // Eigen's GEMM (the exact product) runs on OpenMP threads; the sketch takes params.threads.
    if (threads_ > 0) omp_set_num_threads(threads_);
  }

  std::string name() const override { return "cpu"; }

  std::string device() const override {
    const int used = threads_ > 0 ? threads_ : omp_get_max_threads();
    return cpu_model() + " (" + std::to_string(omp_get_num_procs()) + " hardware threads, " + std::to_string(used) +
           " used)";
  }

  std::string exact_method() const override { return "Eigen GEMM on the CPU"; }

  pagh::CompressedProduct compress(const MatrixData& a, const MatrixData& b, const pagh::SketchParams& params) override {
    pagh::SketchParams p = params;
    p.threads = threads_;
    p.backend = pagh::Backend::cpu;
    return sketch_operands(a, b, p);
  }

  Eigen::MatrixXd exact_product(const MatrixData& a, const MatrixData& b, double& ms) override {
    if (a.index() == 0 && b.index() == 0) return pagh::exact_product(std::get<0>(a), std::get<0>(b), &ms);
    if (a.index() == 1 && b.index() == 1) return pagh::exact_product(std::get<1>(a), std::get<1>(b), &ms);
    const auto start = std::chrono::steady_clock::now();
    Eigen::MatrixXd c = a.index() == 0 ? Eigen::MatrixXd(std::get<0>(a) * std::get<1>(b))
                                       : Eigen::MatrixXd(std::get<1>(a) * std::get<0>(b));
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return c;
  }

 private:
  int threads_;
};

}  // namespace

std::unique_ptr<SketchBackend> make_cpu_backend(int threads) { return std::make_unique<CpuBackend>(threads); }

}  // namespace pagh_mm
