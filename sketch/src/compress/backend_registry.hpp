// How pagh::sketch (CPU library) reaches the CUDA backend without depending on it: pagh_sketch_cuda
// registers its entry points when it is linked into the program (cuda_backend.cpp; its CMake target
// makes every consumer link that object), and pagh::sketch looks them up.
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include <string>

#include "sketch/compressed_product.hpp"
#include "sketch/params.hpp"

namespace pagh::detail {

struct CudaBackendEntryPoints {
  CompressedProduct (*dense_f64)(const Eigen::MatrixXd&, const Eigen::MatrixXd&, const SketchParams&) = nullptr;
  CompressedProduct (*dense_f32)(const Eigen::MatrixXf&, const Eigen::MatrixXf&, const SketchParams&) = nullptr;
  CompressedProduct (*sparse_f64)(const Eigen::SparseMatrix<double>&, const Eigen::SparseMatrix<double>&, const SketchParams&) = nullptr;
  bool (*available)(std::string* reason) = nullptr;
};

// Called once, during static initialization of pagh_sketch_cuda.
int register_cuda_backend(const CudaBackendEntryPoints& entry_points);

}  // namespace pagh::detail
