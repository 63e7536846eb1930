#include "cuda_info.hpp"

#include <filesystem>
#include <system_error>

#ifdef PAGH_MM_HAVE_CUDART
#include <cuda_runtime_api.h>
#endif

namespace pagh_mm {
namespace {

// CUDA encodes versions as 1000 * major + 10 * minor.
std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

}  // namespace

CudaInfo query_cuda() {
  CudaInfo info;
#ifdef PAGH_MM_HAVE_CUDART
  info.runtime_linked = true;
  int runtime = 0, driver = 0;
  info.runtime_version = cudaRuntimeGetVersion(&runtime) == cudaSuccess ? cuda_version_text(runtime) : "unknown";
  // cudaDriverGetVersion reports 0 (with success) when no driver is installed.
  info.driver_version = cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0 ? cuda_version_text(driver) : "no driver";
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    // With no driver this is an error (35 or 100), not zero devices; it is an answer, not a failure.
    info.device_error = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    // cudaErrorInsufficientDriver also means "no driver at all", which its text ("driver version is
    // insufficient") hides: say which it is.
    if (driver == 0 || status == cudaErrorNoDevice) info.device_problem = "no NVIDIA driver or GPU found";
    else if (status == cudaErrorInsufficientDriver)
      info.device_problem = "the NVIDIA driver (CUDA " + info.driver_version + ") is older than this build's CUDA runtime (" +
                            info.runtime_version + ")";
    else info.device_problem = info.device_error;
    (void)cudaGetLastError();  // reset the runtime's last-error state for any later CUDA user
    return info;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) continue;
    const double gib = static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0);
    info.devices.push_back(std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) +
                           ", " + std::to_string(static_cast<int>(gib + 0.5)) + " GiB)");
  }
  if (info.devices.empty()) info.device_error = info.device_problem = "no CUDA devices";
#else
  info.runtime_version = "not linked";
  info.driver_version = "unknown (no CUDA runtime in this build)";
  info.device_error = info.device_problem = "built without the CUDA runtime";
#endif
  return info;
}

int nvidia_gpus_listed() {
  std::error_code error;
  int gpus = 0;
  for (std::filesystem::directory_iterator it("/proc/driver/nvidia/gpus", error), end; !error && it != end; it.increment(error)) ++gpus;
  return gpus;
}

}  // namespace pagh_mm
