// The sketch values of A B without the CompressedProduct around them, for callers that add partial
// sketches up and build one product from the sum (a distributed rank sketching its share of the
// inner indices: distributed/mpi_compress.hpp). A CompressedProduct measures its d * b values when
// it is built (frobenius_estimate: one pass over them), which a partial that is only summed never
// needs.
//
//   pagh::SketchValues part = pagh::compress_values(A_part, B_part, params);
//   ... sum part.values with the other parts' ...
//   pagh::CompressedProduct C = std::move(part).product(std::move(summed));
//
// The values are pagh::compress's bit for bit (the same engine, the same sum order).
#pragma once

#include <cstdint>
#include <vector>

#include "sketch/compress.hpp"

namespace pagh {

struct SketchValues {
  std::int64_t rows = 0, cols = 0, inner = 0;
  SketchParams params;
  HashTables tables;
  std::vector<double> values;  // d * b: sketch t at [t * b, (t + 1) * b), as CompressedProduct holds them
  CompressTimings timings;

  // The product of these values (measured now), or of `sum` (d * b values, for instance the sum of
  // several parts) over `inner` inner indices, with these tables and parameters.
  CompressedProduct product() && { return CompressedProduct(rows, cols, inner, params, std::move(tables), std::move(values), timings); }
  CompressedProduct product(std::int64_t sum_inner, std::vector<double> sum) && {
    return CompressedProduct(rows, cols, sum_inner, params, std::move(tables), std::move(sum), timings);
  }
};

// As pagh::compress (compress.hpp), every overload; throws the same errors.
SketchValues compress_values(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const SketchParams& params = {});
SketchValues compress_values(const Eigen::MatrixXf& A, const Eigen::MatrixXf& B, const SketchParams& params = {});
SketchValues compress_values(const Eigen::MatrixXd& A, const RowMajorMatrixXd& B, const SketchParams& params = {});
SketchValues compress_values(const Eigen::MatrixXf& A, const RowMajorMatrixXf& B, const SketchParams& params = {});
SketchValues compress_values(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B, const SketchParams& params = {});
SketchValues compress_values(const Eigen::SparseMatrix<float>& A, const Eigen::SparseMatrix<float>& B, const SketchParams& params = {});

// The same with the hash tables given (moved into the result) instead of drawn: they must be
// draw_hash_tables(params.seed, d, m, p, b)'s (as pagh::mpi::shared_hash_tables gathers them); only
// their shape is checked (pagh::Error otherwise). timings.hashing_ms is then 0.
SketchValues compress_values(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const SketchParams& params, HashTables tables);
SketchValues compress_values(const Eigen::MatrixXf& A, const Eigen::MatrixXf& B, const SketchParams& params, HashTables tables);
SketchValues compress_values(const Eigen::MatrixXd& A, const RowMajorMatrixXd& B, const SketchParams& params, HashTables tables);
SketchValues compress_values(const Eigen::MatrixXf& A, const RowMajorMatrixXf& B, const SketchParams& params, HashTables tables);
SketchValues compress_values(const Eigen::SparseMatrix<double>& A, const Eigen::SparseMatrix<double>& B, const SketchParams& params,
                             HashTables tables);
SketchValues compress_values(const Eigen::SparseMatrix<float>& A, const Eigen::SparseMatrix<float>& B, const SketchParams& params,
                             HashTables tables);

}  // namespace pagh
