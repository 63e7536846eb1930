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
#include "sketch/method.hpp"
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

// --backend auto weighs the CPU against the GPU before the inputs are read, for a dense product
// whose shape their headers declare (Matrix Market array files, .npy): A is m x K, B is K x p.
struct DenseShape {
  std::int64_t m = 0, K = 0, p = 0;
};

// What a GPU run costs once per process beyond the cost model's estimate of its sketch or exact
// product (pagh::cuda_throughput): the CUDA context's teardown when the process exits, 148-173 ms
// on the H100 host however small the product (bench/RESULTS.md, "pagh-mm's covariance run"). The
// context's start (~230 ms there) runs beside reading and is counted as hidden by it, which leans
// towards the GPU where the two are close.
struct GpuProcessCosts {
  double seconds = 0.15;
};

struct BackendWeighing {
  bool prefer_cpu = false;
  double cpu_seconds = 0;  // the model's estimate on the CPU (the method it would choose there)
  double gpu_seconds = 0;  // on the GPU, with GpuProcessCosts
  std::string note;        // why, in the words of --backend auto's note
};

// `device`'s throughputs, with the host's exact-product rates where the model computes the exact
// product sooner on the host: a device's exact product pays fixed costs (library handles, copies)
// whatever the size. on_host (if given) says which side the exact product's rates are from.
pagh::Throughput with_cheaper_exact(pagh::Throughput device, const pagh::Throughput& host, const pagh::ProductCounts& counts,
                                    const pagh::SketchParams& params, bool* on_host = nullptr);

// The CPU when its estimated time (pagh::choose_method with pagh::cpu_throughput(threads)) is below
// the GPU's (pagh::cuda_throughput through with_cheaper_exact) plus `costs`; method: the method that will be asked for (automatic
// weighs sketch against exact on each backend). threads: 0 = all.
BackendWeighing weigh_backends(const DenseShape& shape, const pagh::SketchParams& params, pagh::Method method, int threads,
                               const GpuProcessCosts& costs = {});

// --backend cuda without a usable CUDA backend throws CliError (69). threads: 0 = all. weighed: for
// auto, weigh_backends's answer when the shape was known; a preferred CPU is then taken without
// starting CUDA at all.
BackendSelection select_backend(BackendChoice choice, int threads, const BackendWeighing* weighed = nullptr);

std::unique_ptr<SketchBackend> make_cpu_backend(int threads);

BackendChoice parse_backend_choice(const std::string& option, const std::string& text);
const char* to_string(BackendChoice choice);

}  // namespace pagh_mm
