// Backend selection: the one place that knows which backends this build has.
#include "backend.hpp"

#include "cli_error.hpp"
#include "cuda_info.hpp"
#include "sketch/sketch.hpp"
#include "version.hpp"

#include <cstdio>

namespace pagh_mm {

pagh::CompressedProduct sketch_operands(const MatrixData& a, const MatrixData& b, const pagh::SketchParams& params) {
  if (a.index() == 0 && b.index() == 0) return pagh::sketch(std::get<0>(a), std::get<0>(b), params);
  const auto as_sparse = [](const MatrixData& m) -> Eigen::SparseMatrix<double> {
    if (m.index() == 1) return std::get<1>(m);
    return std::get<0>(m).sparseView();
  };
  return pagh::sketch(as_sparse(a), as_sparse(b), params);
}

#ifdef PAGH_MM_HAVE_SKETCH_CUDA
constexpr bool kHaveCudaSketchBackend = true;
std::unique_ptr<SketchBackend> make_cuda_backend(int device, int threads);  // cuda_backend.cpp
#else
constexpr bool kHaveCudaSketchBackend = false;
#endif

BackendChoice parse_backend_choice(const std::string& option, const std::string& text) {
  if (text == "auto") return BackendChoice::automatic;
  if (text == "cpu") return BackendChoice::cpu;
  if (text == "cuda") return BackendChoice::cuda;
  usage_error(option, "unknown backend '" + text + "' (expected auto, cpu or cuda)");
}

const char* to_string(BackendChoice choice) {
  switch (choice) {
    case BackendChoice::automatic: return "auto";
    case BackendChoice::cpu: return "cpu";
    case BackendChoice::cuda: return "cuda";
  }
  return "?";
}

pagh::Throughput with_cheaper_exact(pagh::Throughput device, const pagh::Throughput& host, const pagh::ProductCounts& counts,
                                    const pagh::SketchParams& params, bool* on_host) {
  const auto exact_seconds = [&](const pagh::Throughput& rates) {
    return pagh::choose_method(pagh::Method::sketch, counts, params, rates).exact_seconds;
  };
  const bool host_cheaper = exact_seconds(host) < exact_seconds(device);
  if (host_cheaper) {
    device.gemm_flops = host.gemm_flops, device.sparse_products = host.sparse_products, device.scanned_entries = host.scanned_entries;
    device.transfer_bytes = host.transfer_bytes, device.exact_fixed = host.exact_fixed, device.exact_engine = host.exact_engine;
  }
  if (on_host) *on_host = host_cheaper;
  return device;
}

BackendWeighing weigh_backends(const DenseShape& shape, const pagh::SketchParams& params, pagh::Method method, int threads,
                               const GpuProcessCosts& costs) {
  const pagh::ProductCounts counts = pagh::count_dense_product(shape.m, shape.K, shape.p);
  const pagh::Throughput host = pagh::cpu_throughput(threads, params.precision);
  const pagh::Throughput gpu = with_cheaper_exact(pagh::cuda_throughput(), host, counts, params);
  const auto seconds = [&](const pagh::Throughput& rates) {
    const pagh::MethodChoice choice = pagh::choose_method(method, counts, params, rates);
    return choice.method == pagh::Method::exact ? choice.exact_seconds : choice.sketch_seconds;
  };
  BackendWeighing w;
  w.cpu_seconds = seconds(host);
  w.gpu_seconds = seconds(gpu) + costs.seconds;
  w.prefer_cpu = w.cpu_seconds < w.gpu_seconds;
  char note[200];
  std::snprintf(note, sizeof note, "backend cpu (auto: estimated %.3g s here, %.3g s on a GPU with its start and exit)",
                w.cpu_seconds, w.gpu_seconds);
  w.note = note;
  return w;
}

BackendSelection select_backend(BackendChoice choice, int threads, const BackendWeighing* weighed) {
  if (choice == BackendChoice::cpu) return {make_cpu_backend(threads), "", ""};
  if (choice == BackendChoice::cuda) {
    if constexpr (!kHaveCudaSketchBackend) {
      throw CliError(ExitCode::unavailable, "--backend cuda",
                     "the CUDA backend is not available in this build (pagh-mm " + std::string(version_string()) +
                         " has only the CPU backend; use --backend cpu or auto)");
    }
#ifdef PAGH_MM_HAVE_SKETCH_CUDA
    const CudaInfo cuda = query_cuda();
    if (cuda.devices.empty())
      throw CliError(ExitCode::unavailable, "--backend cuda",
                     "no usable CUDA device: " + cuda.device_problem +
                         (cuda.device_problem == cuda.device_error ? "" : " (" + cuda.device_error + ")"));
    return {make_cuda_backend(0, threads), "", ""};
#endif
  }
  // auto: the CPU when it is expected to answer sooner than a GPU would (no CUDA call at all then: the
  // driver's start and teardown are what it saves), else a usable GPU when this build can use one,
  // otherwise the CPU; say which and why. A build without the CUDA backend has nothing to weigh
  // against, so it does not quote the GPU's estimate.
  if (kHaveCudaSketchBackend && weighed && weighed->prefer_cpu) return {make_cpu_backend(threads), weighed->note, ""};
#ifdef PAGH_MM_HAVE_SKETCH_CUDA
  const CudaInfo cuda = query_cuda();
  if (!cuda.devices.empty())
    return {make_cuda_backend(0, threads), "backend cuda (auto: " + cuda.devices.front() + ")", ""};
  return {make_cpu_backend(threads), "backend cpu (auto: " + cuda.device_problem + ")",
          cuda.device_problem == cuda.device_error ? "" : cuda.device_error};
#else
  // Listed by the kernel driver, not asked of CUDA: starting the CUDA driver to name an unused GPU
  // would cost this process the driver's teardown at exit.
  std::string note = "backend cpu (auto: this build has no CUDA sketch backend";
  if (const int gpus = nvidia_gpus_listed(); gpus > 0)
    note += "; " + std::to_string(gpus) + (gpus == 1 ? " NVIDIA GPU is" : " NVIDIA GPUs are") + " present but unused";
  return {make_cpu_backend(threads), note + ")", ""};
#endif
}

}  // namespace pagh_mm
