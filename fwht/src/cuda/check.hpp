// FWHT_CUDA_CHECK: every CUDA runtime call goes through it; a failure throws pagh::Error naming the
// call and the runtime's reason (the library never prints and never exits).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "pagh/error.hpp"

namespace fwht::cuda {

inline void check(cudaError_t status, const char* call, const char* where) {
  if (status != cudaSuccess)
    throw pagh::Error(where, std::string(call) + " failed: " + cudaGetErrorString(status) + " (" +
                                 cudaGetErrorName(status) + ")");
}

}  // namespace fwht::cuda

#define FWHT_CUDA_CHECK(call, where) ::fwht::cuda::check((call), #call, (where))
