// Where pagh-mm computes (--backend): the sketch through pagh::sketch with the library's
// pagh::Backend (the product it returns answers its queries where its sketches are: on the GPU for
// the CUDA backend), and what the library leaves to the command: the exact product (Eigen or cuBLAS)
// for the operands as read, and the device's description for reports. select_backend() is the one
// place that knows which backends this build has; the distributed run (mpi_multiply.cpp) wraps one.
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include <memory>
#include <cstddef>
#include <string>
#include <variant>
#include <vector>

#include "sketch/compressed_product.hpp"
#include "sketch/params.hpp"

namespace pagh_mm {

// An operand as matrix_io's read_matrix returns it (the same variant), or as the study generates it.
using MatrixData = std::variant<Eigen::MatrixXd, Eigen::SparseMatrix<double>>;

enum class BackendChoice { automatic, cpu, cuda };

class SketchBackend {
 public:
  virtual ~SketchBackend() = default;
  virtual std::string name() const = 0;           // "cpu", "cuda": what --backend accepts
  virtual std::string device() const = 0;         // e.g. "AMD EPYC (2 hardware threads)"
  virtual std::string exact_method() const = 0;   // how exact_product computes, for reports
  // Pagh's compressed product of A and B (cols(A) == rows(B), checked by the caller): pagh::sketch
  // on this backend (sketch_operands).
  virtual pagh::CompressedProduct compress(const MatrixData& a, const MatrixData& b, const pagh::SketchParams& params) = 0;
  // The exact product A*B as a dense m x p matrix, and how long it took (ms).
  virtual Eigen::MatrixXd exact_product(const MatrixData& a, const MatrixData& b, double& ms) = 0;

};

// pagh::sketch of operands as read: dense x dense stays dense; anything with a sparse side goes
// sparse (converting the sparse side to dense could need far more memory than the inputs).
pagh::CompressedProduct sketch_operands(const MatrixData& a, const MatrixData& b, const pagh::SketchParams& params);

struct BackendSelection {
  std::unique_ptr<SketchBackend> backend;
  // What --backend auto decided and why (printed on stderr unless -q); empty for an explicit choice.
  std::string auto_note;
  // Its detail, for -v (the CUDA runtime's error behind "no NVIDIA driver or GPU found").
  std::string auto_detail;
};

// --backend cuda without a usable CUDA backend throws CliError (69). threads: 0 = all.
BackendSelection select_backend(BackendChoice choice, int threads);

std::unique_ptr<SketchBackend> make_cpu_backend(int threads);

BackendChoice parse_backend_choice(const std::string& option, const std::string& text);
const char* to_string(BackendChoice choice);

}  // namespace pagh_mm
