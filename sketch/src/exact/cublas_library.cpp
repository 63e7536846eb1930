#include "exact/cublas_library.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <filesystem>
#include <string>

#include "pagh/error.hpp"

namespace pagh::cuda {
namespace {

constexpr const char* kWhere = "pagh::cuda::cublas_library";

// The soname of the toolkit this file was compiled against: its headers and the library must agree.
std::string soname() { return "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR); }

// By soname (the program's run path, LD_LIBRARY_PATH, the system's cache), then beside the CUDA
// runtime this program uses when that is a shared library (the toolkit's lib directory).
void* open_cublas(std::string& why) {
  if (void* handle = dlopen(soname().c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  why = dlerror();
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cudaRuntimeGetVersion), &info) != 0 && info.dli_fname) {
    const std::filesystem::path beside = std::filesystem::path(info.dli_fname).parent_path() / soname();
    if (void* handle = dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  }
  return nullptr;
}

template <class Function>
void resolve(void* handle, const char* name, Function& out, std::string& missing) {
  out = reinterpret_cast<Function>(dlsym(handle, name));
  if (!out && missing.empty()) missing = name;
}

struct Loaded {
  CublasLibrary library;
  std::string error;  // empty when every entry point was found
};

Loaded load() {
  Loaded loaded;
  std::string why;
  void* handle = open_cublas(why);
  if (!handle) {
    loaded.error = "cannot open cuBLAS (" + soname() + "), needed for the exact product on the GPU: " + why;
    return loaded;
  }
  std::string missing;
  CublasLibrary& l = loaded.library;
  resolve(handle, "cublasCreate_v2", l.create, missing);
  resolve(handle, "cublasDestroy_v2", l.destroy, missing);
  resolve(handle, "cublasDgemm_v2_64", l.dgemm, missing);
  resolve(handle, "cublasGetStatusName", l.status_name, missing);
  resolve(handle, "cublasGetStatusString", l.status_string, missing);
  if (!missing.empty()) loaded.error = soname() + " has no " + missing + " (a cuBLAS older than this build's headers?)";
  return loaded;  // the handle stays open for the process's life
}

}  // namespace

const CublasLibrary& cublas_library() {
  static const Loaded loaded = load();
  if (!loaded.error.empty()) throw Error(kWhere, loaded.error);
  return loaded.library;
}

}  // namespace pagh::cuda
