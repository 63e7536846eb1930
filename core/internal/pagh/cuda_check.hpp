// PAGH_CUDA_CHECK: every CUDA runtime call of the CUDA backends goes through it; a failure throws
// pagh::Error naming the call and the runtime's reason (the libraries never print and never exit).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "pagh/error.hpp"

namespace pagh::cuda {

inline void check_cuda(cudaError_t status, const char* call, const char* where) {
  if (status != cudaSuccess)
    throw Error(where, std::string(call) + " failed: " + cudaGetErrorString(status) + " (" + cudaGetErrorName(status) + ")");
}

}  // namespace pagh::cuda

#define PAGH_CUDA_CHECK(call, where) ::pagh::cuda::check_cuda((call), #call, (where))
