// Backend selection: the one place that knows which backends this build has.
#include "backend.hpp"

#include "cli_error.hpp"
#include "cuda_info.hpp"
#include "sketch/sketch.hpp"
#include "version.hpp"

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

BackendSelection select_backend(BackendChoice choice, int threads) {
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
  // auto: a usable GPU when this build can use one, otherwise the CPU; say which and why.
  const CudaInfo cuda = query_cuda();
#ifdef PAGH_MM_HAVE_SKETCH_CUDA
  if (!cuda.devices.empty())
    return {make_cuda_backend(0, threads), "backend cuda (auto: " + cuda.devices.front() + ")", ""};
  return {make_cpu_backend(threads), "backend cpu (auto: " + cuda.device_problem + ")",
          cuda.device_problem == cuda.device_error ? "" : cuda.device_error};
#else
  std::string note = "backend cpu (auto: this build has no CUDA sketch backend";
  if (!cuda.devices.empty()) note += "; GPU " + cuda.devices.front() + " is present but unused";
  return {make_cpu_backend(threads), note + ")", ""};
#endif
}

}  // namespace pagh_mm
