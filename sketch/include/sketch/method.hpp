// Sketch or exact: a compressed product pays only where the exact product is too expensive to form
// or to hold. choose_method() weighs the two by a cost model of operation counts and a backend's
// throughputs (typed, with defaults measured on the machines bench/RESULTS.md names), and says why.
//
//   sketch: per inner index k and repetition, the cheaper of two transforms of length b (the units
//           of hybrid_rule.hpp: b (log2 b + 4) each) and the direct outer product (nnz_a nnz_b
//           random-access adds, at their own rate), plus d inverse transforms, the passes over the
//           d * b buckets (partial sketches, recovery), and a fixed start-up cost;
//   exact:  dense 2 m K p flops of GEMM and a scan of the m * p entries; sparse
//           sum_k nnz(A[:,k]) nnz(B[k,:]) scalar products and a scan of the nonzeros, whose memory
//           (16 bytes per product, an upper bound) must fit.
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include <cstdint>
#include <string>
#include <vector>

#include "sketch/params.hpp"

namespace pagh {

enum class Method { automatic, sketch, exact };

// The counts of A (m x K) and B (K x p) the model needs.
struct ProductCounts {
  std::int64_t rows = 0, inner = 0, cols = 0;
  bool sparse = false;               // both operands sparse: the exact product is formed sparsely
  std::vector<double> nnz_a, nnz_b;  // per inner index k: nnz(A[:,k]), nnz(B[k,:])
  double products() const;           // sum_k nnz_a[k] nnz_b[k] (dense: m K p)
};
ProductCounts count_product(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);
ProductCounts count_dense_product(std::int64_t m, std::int64_t K, std::int64_t p);
ProductCounts count_product(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B);

// Operations per second of one backend, all its threads together.
struct Throughput {
  double gemm_flops = 0;       // dense exact product
  double sparse_products = 0;  // sparse exact product (scalar products formed)
  double sketch_units = 0;     // the sketch's transform units
  double direct_products = 0;  // the sketch's direct path: products added bucket by bucket, per repetition
  double sketch_fixed = 0;     // seconds every sketch costs whatever its size (hash tables, buffers, start-up)
  double bucket_seconds = 0;   // seconds per bucket and repetition of the passes over the sketch (partial
                               // sketches of the thread partitions, their sum, recovery)
  double scanned_entries = 0;  // the exact selection's pass over C
  double transfer_bytes = 0;   // bytes per second moved from where C is formed to where it is scanned (0: no move)
  double exact_fixed = 0;      // seconds every exact product costs whatever its size (library start-up, copies)
  std::string exact_engine;    // "Eigen GEMM on the CPU", ...
};
// Eigen as this project builds it, and the CPU sketch, on `threads` threads (0 = all).
Throughput cpu_throughput(int threads, fwht::DType precision);
// cuBLAS DGEMM and the CUDA sketch on one H100-class GPU, C copied to the host to be scanned.
Throughput cuda_throughput();

struct MethodChoice {
  Method method = Method::sketch;  // sketch or exact (never automatic)
  double sketch_seconds = 0, exact_seconds = 0;  // the model's estimates
  double exact_bytes = 0;          // memory the exact product needs beyond the inputs
  std::string reason;              // one sentence, for reports
};

// requested: automatic weighs the two; sketch and exact are honoured (exact throws pagh::Error
// when it cannot fit in memory_bytes, 0 = no limit), with the estimates filled in either way.
MethodChoice choose_method(Method requested, const ProductCounts& counts, const SketchParams& params, const Throughput& rates,
                           double memory_bytes = 0);

}  // namespace pagh
