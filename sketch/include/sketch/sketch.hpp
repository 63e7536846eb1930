// Pagh's compressed product on the backend SketchParams::backend names: one call, one result type.
//
//   pagh::CompressedProduct C = pagh::sketch(A, B, {.repetitions = 3, .backend = pagh::Backend::cuda});
//   for (const pagh::Entry& e : C.top_k(10)) ...   // on the GPU: computed there, k entries copied back
//
// Backend::cpu runs pagh::compress (compress.hpp). Backend::cuda runs pagh::cuda::compress (cuda.hpp)
// on SketchParams::device and returns the host copy of its sketches holding the device copy as well
// (CompressedProduct::on_device()): top_k, above and decompress then run on the GPU with the same
// answers as on the host, until subtract() changes the sketches. Backend::cuda needs the library
// pagh::sketch_cuda linked into the program; without it, or without a usable device, pagh::sketch
// throws pagh::Error saying why (backend_available tells beforehand).
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include <string>

#include "sketch/compressed_product.hpp"
#include "sketch/params.hpp"

namespace pagh {

CompressedProduct sketch(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const SketchParams& params = {});
CompressedProduct sketch(const Eigen::MatrixXf& A, const Eigen::MatrixXf& B, const SketchParams& params = {});
CompressedProduct sketch(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B,
                         const SketchParams& params = {});

// Whether pagh::sketch can run on `backend` in this program; if not, *reason says why.
bool backend_available(Backend backend, std::string* reason = nullptr);

const char* to_string(Backend backend);

}  // namespace pagh
