// cuBLAS, opened on first use instead of linked: loading libcublas (and libcublasLt, which it needs)
// at program start costs every run of a linking program tens of milliseconds before main, whether
// it multiplies exactly on the GPU or not (pagh-mm --help included). Only the exact product and
// verify on the device call cuBLAS; they reach it through cublas_library().
#pragma once

#include <cublas_v2.h>

namespace pagh::cuda {

// The cuBLAS entry points this library calls, resolved from the shared library of the toolkit it
// was built with (libcublas.so.CUBLAS_VER_MAJOR).
struct CublasLibrary {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasDgemm_v2_64) dgemm = nullptr;
  decltype(&cublasGetStatusName) status_name = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

// Opens cuBLAS once per process (thread-safe) and returns its entry points; throws pagh::Error
// naming the library and the loader's reason when it cannot be opened or lacks a symbol (every
// later call throws the same).
const CublasLibrary& cublas_library();

}  // namespace pagh::cuda
