// pagh::sketch: the backend SketchParams names, the CPU engine or the registered CUDA backend.
#include "sketch/sketch.hpp"

#include "compress/backend_registry.hpp"
#include "pagh/error.hpp"
#include "sketch/compress.hpp"

namespace pagh {
namespace {

constexpr const char* kWhere = "pagh::sketch";

// Constant-initialized (no constructor runs), so registration during static initialization of
// another library is safe whatever the order.
detail::CudaBackendEntryPoints g_cuda;

const detail::CudaBackendEntryPoints& cuda_backend() {
  std::string why;
  if (!backend_available(Backend::cuda, &why)) throw Error(kWhere, "Backend::cuda: " + why);
  return g_cuda;
}

template <class MatrixA, class MatrixB, class Device>
CompressedProduct dispatch(const MatrixA& A, const MatrixB& B, const SketchParams& params, Device device_entry) {
  switch (params.backend) {
    case Backend::cpu: return compress(A, B, params);
    case Backend::cuda: return (cuda_backend().*device_entry)(A, B, params);
  }
  throw Error(kWhere, "unknown backend");
}

}  // namespace

int detail::register_cuda_backend(const CudaBackendEntryPoints& entry_points) {
  g_cuda = entry_points;
  return 1;
}

bool backend_available(Backend backend, std::string* reason) {
  if (backend == Backend::cpu) return true;
  if (!g_cuda.available) {
    if (reason) *reason = "the CUDA backend is not linked into this program (link the library pagh::sketch_cuda)";
    return false;
  }
  return g_cuda.available(reason);
}

const char* to_string(Backend backend) { return backend == Backend::cuda ? "cuda" : "cpu"; }

CompressedProduct sketch(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const SketchParams& params) {
  return dispatch(A, B, params, &detail::CudaBackendEntryPoints::dense_f64);
}
CompressedProduct sketch(const Eigen::MatrixXf& A, const Eigen::MatrixXf& B, const SketchParams& params) {
  return dispatch(A, B, params, &detail::CudaBackendEntryPoints::dense_f32);
}
CompressedProduct sketch(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B, const SketchParams& params) {
  return dispatch(A, B, params, &detail::CudaBackendEntryPoints::sparse_f64);
}

}  // namespace pagh
