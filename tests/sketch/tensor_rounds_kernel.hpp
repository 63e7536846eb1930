// Test harness for the wide kernel's tensor-core rounds (tensor_rounds_kernel.cu).
#pragma once

#include <cuda_runtime.h>

namespace pagh::cuda_test {

// in, out: device arrays of vectors * 2^14 floats. out gets, for each vector and each of its 16
// runs of 1024 values, the unnormalized Walsh-Hadamard transform of that run. Returns the first
// CUDA error (launch or execution).
cudaError_t apply_tensor_rounds(const float* in, float* out, int vectors);

}  // namespace pagh::cuda_test
