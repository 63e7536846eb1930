// The CPU and CUDA backends of fwht_accuracy.
#include "accuracy_backend.hpp"

#include <cstring>
#include <string>

#include "fwht/fwht.hpp"

#if defined(FWHT_HAVE_CUDA_BACKEND)
#include <cuda_runtime.h>
#endif

namespace fwht::bench {
namespace {

template <class T>
std::vector<T> to_format(const std::vector<double>& v) {
  std::vector<T> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>)
      out[i] = T(static_cast<float>(v[i]));
    else
      out[i] = static_cast<T>(v[i]);
  }
  return out;
}

template <class T>
void from_format(const std::vector<T>& x, std::vector<double>& v) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>)
      v[i] = static_cast<float>(x[i]);
    else
      v[i] = static_cast<double>(x[i]);
  }
}

// Calls f.template operator()<T>() for the storage type T of the format.
template <class F>
void with_type(DType format, F&& f) {
  switch (format) {
    case DType::f64: f.template operator()<double>(); break;
    case DType::f32: f.template operator()<float>(); break;
    case DType::f16: f.template operator()<f16>(); break;
    case DType::bf16: f.template operator()<bf16>(); break;
    default: throw pagh::Error("fwht_accuracy", "unsupported format " + std::string(to_string(format)));
  }
}

class CpuBackend final : public AccuracyBackend {
 public:
  void transform(std::vector<double>& v, DType format, const Options& options) override {
    with_type(format, [&]<class T>() {
      auto x = to_format<T>(v);
      fwht::transform(std::span<T>(x), options);
      from_format(x, v);
    });
  }
};

#if defined(FWHT_HAVE_CUDA_BACKEND)
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw pagh::Error("fwht_accuracy (cuda)", std::string(what) + ": " + cudaGetErrorString(e));
}

class CudaBackend final : public AccuracyBackend {
 public:
  void transform(std::vector<double>& v, DType format, const Options& options) override {
    with_type(format, [&]<class T>() {
      auto x = to_format<T>(v);
      const std::size_t bytes = x.size() * sizeof(T);
      void* d = nullptr;
      check(cudaMalloc(&d, bytes), "cudaMalloc");
      try {
        check(cudaMemcpy(d, x.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device");
        Plan plan({.n = static_cast<std::int64_t>(x.size())}, format, options, Backend::cuda);
        plan.execute(d, d, nullptr);
        check(cudaDeviceSynchronize(), "transform");
        check(cudaMemcpy(x.data(), d, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
      } catch (...) {
        cudaFree(d);
        throw;
      }
      cudaFree(d);
      from_format(x, v);
    });
  }
};
#endif

}  // namespace

std::unique_ptr<AccuracyBackend> make_accuracy_backend(Backend backend) {
  if (backend == Backend::cpu) return std::make_unique<CpuBackend>();
#if defined(FWHT_HAVE_CUDA_BACKEND)
  std::string why;
  if (!cuda_available(&why)) throw pagh::Error("fwht_accuracy", "--backend cuda: " + why);
  return std::make_unique<CudaBackend>();
#else
  throw pagh::Error("fwht_accuracy", "--backend cuda: this build has no CUDA backend");
#endif
}

}  // namespace fwht::bench
