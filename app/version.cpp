#include "version.hpp"

#include <cstdio>

#include "cuda_info.hpp"

#ifndef PAGH_VERSION
#define PAGH_VERSION "unknown"
#endif
#ifndef PAGH_GIT_COMMIT
#define PAGH_GIT_COMMIT "unknown"
#endif

namespace pagh_mm {

const char* version_string() { return PAGH_VERSION; }
const char* git_commit() { return PAGH_GIT_COMMIT; }

void print_version() {
  const CudaInfo cuda = query_cuda();
  std::printf("pagh-mm %s (git %s)\n", version_string(), git_commit());
  std::printf("CUDA runtime: %s\n", cuda.runtime_version.c_str());
  std::printf("CUDA driver: %s\n", cuda.driver_version.c_str());
  if (cuda.devices.empty()) {
    std::printf("GPU: none (%s)\n", cuda.device_error.c_str());
  } else {
    for (const auto& d : cuda.devices) std::printf("GPU: %s\n", d.c_str());
  }
#ifdef PAGH_MM_HAVE_SKETCH_CUDA
  std::printf("sketch backends: cpu, cuda\n");
#else
  std::printf("sketch backends: cpu (the CUDA sketch backend is not in this build)\n");
#endif
}

}  // namespace pagh_mm
