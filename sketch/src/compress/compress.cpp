// pagh::compress on the CPU: checks, the memory plan, the inputs as lines (cpu_lines.hpp), the hash
// tables, then the engine (cpu_engine.hpp).
#include "sketch/compress.hpp"
#include "sketch/compress_values.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "compress/compress_memory.hpp"
#include "compress/cpu_engine.hpp"
#include "compress/cpu_lines.hpp"
#include "fwht/fwht.hpp"
#include "pagh/error.hpp"

namespace pagh {
namespace {

using index = std::int64_t;
using cpu_sketch::columns_of;
using cpu_sketch::columns_of_sparse;
using cpu_sketch::rows_of;
using cpu_sketch::rows_of_sparse;
constexpr const char* kWhere = "pagh::compress";

// What arranging the inputs into lines allocates: B transposed when it is column-major (dense); an
// (index, value) pair per nonzero of each, the row-major copy of B while converting, and the line
// starts (sparse).
template <class Scalar, int OrderB>
double dense_lines_bytes(const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, OrderB>& B) {
  return OrderB == Eigen::RowMajor ? 0.0 : static_cast<double>(B.size()) * sizeof(Scalar);
}
template <class Scalar>
double sparse_lines_bytes(const Eigen::SparseMatrix<Scalar>& A, const Eigen::SparseMatrix<Scalar>& B) {
  const double nnz = static_cast<double>(A.nonZeros()) + static_cast<double>(B.nonZeros());
  return nnz * (sizeof(index) + sizeof(double)) + static_cast<double>(A.cols() + 2 * B.rows() + 2) * sizeof(index);
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

std::string planned_what(index buckets, const SketchParams& params) {
  return "the sketch (d = " + std::to_string(params.repetitions) + ", b = " + std::to_string(buckets) +
         ") with its hash tables and working buffers";
}

// Before the inputs are rearranged into lines: their copies plus the least the sketch itself needs
// (the d sketches and the summed spectrum), so that an impossible request fails before any copy.
void check_memory_before_lines(index m, index p, double lines_bytes, const SketchParams& params) {
  if (params.max_memory_bytes == 0 || params.repetitions < 1) return;
  const index buckets = sketch_length(m, p, params);
  const double d = params.repetitions;
  compress_memory::check(lines_bytes + compress_memory::table_bytes(m, p, params.repetitions) +
                             d * static_cast<double>(buckets) * (8 + compress_memory::accumulator_bytes(params.precision)),
                         params, kWhere, planned_what(buckets, params));
}

// lines_bytes: what arranging the inputs into lines allocated (compress_memory's plan counts it).
// given: the hash tables, when the caller has them (checked against the shape), else drawn here.
template <class LinesA, class LinesB>
SketchValues compress_lines(const LinesA& a, const LinesB& b, index m, index p, index K, const SketchParams& params,
                                 double lines_bytes, std::chrono::steady_clock::time_point start, std::optional<HashTables>& given) {
  const index buckets = sketch_length(m, p, params);
  if (params.repetitions < 1) throw Error(kWhere, "repetitions = " + std::to_string(params.repetitions) + " must be at least 1");
  if (params.threads < 0) throw Error(kWhere, "threads = " + std::to_string(params.threads) + " is negative");
  if (fwht::is_integer(params.precision))
    throw Error(kWhere, "precision " + std::string(fwht::to_string(params.precision)) + " is not supported (use f64, f32, f16 or bf16)");
  // Validate the FWHT options once, with a clear message, before any work.
  fwht::Plan({.n = buckets}, params.precision,
             {.stabilization = params.stabilization, .algorithm = params.algorithm, .compute = params.compute, .threads = 1});

  const int threads = params.threads > 0 ? params.threads : omp_get_max_threads();
  compress_memory::check(lines_bytes + compress_memory::table_bytes(m, p, params.repetitions) +
                             compress_memory::engine_bytes(a, b, K, buckets, params, threads, cpu_sketch::partitions_for(K, params)),
                         params, kWhere, planned_what(buckets, params));

  CompressTimings timings;
  const auto hash_start = std::chrono::steady_clock::now();
  if (given && (given->m != m || given->p != p || given->buckets != buckets || given->repetitions != params.repetitions))
    throw Error(kWhere, "the hash tables given are for " + std::to_string(given->m) + " x " + std::to_string(given->p) + ", b = " +
                            std::to_string(given->buckets) + ", d = " + std::to_string(given->repetitions) + ", not " +
                            std::to_string(m) + " x " + std::to_string(p) + ", b = " + std::to_string(buckets) + ", d = " +
                            std::to_string(params.repetitions));
  HashTables tables = given ? std::move(*given) : draw_hash_tables(params.seed, params.repetitions, m, p, buckets);
  timings.hashing_ms = elapsed_ms(hash_start);
  std::vector<double> sketches;
  switch (params.precision) {
    case fwht::DType::f64: sketches = cpu_sketch::Engine<double, LinesA, LinesB>(a, b, K, params, buckets, tables).run(timings, kWhere); break;
    case fwht::DType::f32: sketches = cpu_sketch::Engine<float, LinesA, LinesB>(a, b, K, params, buckets, tables).run(timings, kWhere); break;
    case fwht::DType::f16: sketches = cpu_sketch::Engine<fwht::f16, LinesA, LinesB>(a, b, K, params, buckets, tables).run(timings, kWhere); break;
    case fwht::DType::bf16: sketches = cpu_sketch::Engine<fwht::bf16, LinesA, LinesB>(a, b, K, params, buckets, tables).run(timings, kWhere); break;
    default: break;
  }
  timings.total_ms = elapsed_ms(start);
  return {m, p, K, params, std::move(tables), std::move(sketches), timings};
}

}  // namespace

void check_inner_dimensions(std::int64_t m, std::int64_t K, std::int64_t K2, std::int64_t p, const char* where) {
  if (K != K2)
    throw Error(where, "dimension mismatch: A is " + std::to_string(m) + " x " + std::to_string(K) + " but B is " +
                           std::to_string(K2) + " x " + std::to_string(p) + " (cols(A) must equal rows(B))");
}

std::int64_t sketch_length(std::int64_t m, std::int64_t p, const SketchParams& params) {
  if (m < 0 || p < 0) throw Error("pagh::sketch_length", "negative dimensions");
  if (params.buckets != 0) {
    if (!fwht::is_power_of_two(params.buckets) || params.buckets > (std::int64_t{1} << 32))
      throw Error("pagh::sketch_length", "buckets = " + std::to_string(params.buckets) + " is not a power of two <= 2^32");
    return params.buckets;
  }
  if (!(params.pad > 0) || !std::isfinite(params.pad))
    throw Error("pagh::sketch_length", "pad = " + std::to_string(params.pad) + " must be positive");
  const double want = std::max(1.0, std::ceil(params.pad * static_cast<double>(std::max(m, p))));
  if (want > 4294967296.0)
    throw Error("pagh::sketch_length", "pad * max(m, p) = " + std::to_string(want) + " exceeds the largest sketch, 2^32");
  return static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(want)));
}

// The timed region starts before the inputs are arranged into lines: that is part of the cost.
namespace {
template <class Scalar, int OrderB>
SketchValues values_dense(const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>& A,
                          const Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, OrderB>& B, const SketchParams& params,
                          std::optional<HashTables> tables = std::nullopt) {
  const auto start = std::chrono::steady_clock::now();
  check_inner_dimensions(A.rows(), A.cols(), B.rows(), B.cols(), kWhere);
  const int threads = params.threads > 0 ? params.threads : omp_get_max_threads();
  const double lines_bytes = dense_lines_bytes(B);
  check_memory_before_lines(A.rows(), B.cols(), lines_bytes, params);
  return compress_lines(columns_of(A), rows_of(B, threads), A.rows(), B.cols(), A.cols(), params, lines_bytes, start, tables);
}
template <class Scalar>
SketchValues values_sparse(const Eigen::SparseMatrix<Scalar>& A, const Eigen::SparseMatrix<Scalar>& B, const SketchParams& params,
                           std::optional<HashTables> tables = std::nullopt) {
  const auto start = std::chrono::steady_clock::now();
  check_inner_dimensions(A.rows(), A.cols(), B.rows(), B.cols(), kWhere);
  const double lines_bytes = sparse_lines_bytes(A, B);
  check_memory_before_lines(A.rows(), B.cols(), lines_bytes, params);
  const int threads = params.threads > 0 ? params.threads : omp_get_max_threads();
  return compress_lines(columns_of_sparse(A, threads), rows_of_sparse(B, threads), A.rows(), B.cols(), A.cols(), params, lines_bytes,
                        start, tables);
}
}  // namespace

SketchValues compress_values(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const SketchParams& params) {
  return values_dense(A, B, params);
}
SketchValues compress_values(const Eigen::MatrixXf& A, const Eigen::MatrixXf& B, const SketchParams& params) {
  return values_dense(A, B, params);
}
SketchValues compress_values(const Eigen::MatrixXd& A, const RowMajorMatrixXd& B, const SketchParams& params) {
  return values_dense(A, B, params);
}
SketchValues compress_values(const Eigen::MatrixXf& A, const RowMajorMatrixXf& B, const SketchParams& params) {
  return values_dense(A, B, params);
}
SketchValues compress_values(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B, const SketchParams& params) {
  return values_sparse(A, B, params);
}
SketchValues compress_values(const Eigen::SparseMatrix<float>& A, const Eigen::SparseMatrix<float>& B, const SketchParams& params) {
  return values_sparse(A, B, params);
}

SketchValues compress_values(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const SketchParams& params, HashTables tables) {
  return values_dense(A, B, params, std::move(tables));
}
SketchValues compress_values(const Eigen::MatrixXf& A, const Eigen::MatrixXf& B, const SketchParams& params, HashTables tables) {
  return values_dense(A, B, params, std::move(tables));
}
SketchValues compress_values(const Eigen::MatrixXd& A, const RowMajorMatrixXd& B, const SketchParams& params, HashTables tables) {
  return values_dense(A, B, params, std::move(tables));
}
SketchValues compress_values(const Eigen::MatrixXf& A, const RowMajorMatrixXf& B, const SketchParams& params, HashTables tables) {
  return values_dense(A, B, params, std::move(tables));
}
SketchValues compress_values(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B, const SketchParams& params,
                             HashTables tables) {
  return values_sparse(A, B, params, std::move(tables));
}
SketchValues compress_values(const Eigen::SparseMatrix<float>& A, const Eigen::SparseMatrix<float>& B, const SketchParams& params,
                             HashTables tables) {
  return values_sparse(A, B, params, std::move(tables));
}

CompressedProduct compress(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const SketchParams& params) {
  return compress_values(A, B, params).product();
}
CompressedProduct compress(const Eigen::MatrixXf& A, const Eigen::MatrixXf& B, const SketchParams& params) {
  return compress_values(A, B, params).product();
}
CompressedProduct compress(const Eigen::MatrixXd& A, const RowMajorMatrixXd& B, const SketchParams& params) {
  return compress_values(A, B, params).product();
}
CompressedProduct compress(const Eigen::MatrixXf& A, const RowMajorMatrixXf& B, const SketchParams& params) {
  return compress_values(A, B, params).product();
}
CompressedProduct compress(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B, const SketchParams& params) {
  return compress_values(A, B, params).product();
}
CompressedProduct compress(const Eigen::SparseMatrix<float>& A, const Eigen::SparseMatrix<float>& B, const SketchParams& params) {
  return compress_values(A, B, params).product();
}

}  // namespace pagh
