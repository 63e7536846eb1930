// Reading a product's inputs across MPI ranks, each rank keeping the inner indices it sketches:
//
//   pagh::mpi::InnerShare share = pagh::mpi::read_inner_share("A.mtx", "B.mtx", MPI_COMM_WORLD);
//   pagh::CompressedProduct C = pagh::mpi::compress(share.a, share.b, params, MPI_COMM_WORLD);
//
// Each rank parses one line-aligned byte range of each Matrix Market coordinate file (matrix_io's
// entry parser, the same checks and messages as a whole-file read), then MPI_Alltoallv moves every
// entry to the rank that owns its inner index k (the column of A, the row of B). Ranks own contiguous
// ranges of k balanced by stored entries (of A and B together), so no rank holds the whole file.
//
// Entries keep their file order within a k, so duplicates are summed in the order a one-process read
// sums them; symmetric and skew-symmetric files are expanded as matrix_io expands them. Array files
// and gzip files are read whole on every rank (their values' places follow from every line before
// them, or the bytes cannot be cut), and each rank keeps its columns or rows.
//
// Failures end the collective on every rank with the same exception: a reader's error (a missing
// file, a bad line, a count that differs from the size line) as the matrix_io::MatrixMarketError of
// the first failure in file order, with the file, line and message a one-process read would give;
// anything else (A's columns unlike B's rows, ranks whose copies of a file differ in shape, declared
// entries or length) as RankFailure or the same pagh::Error.
#pragma once

#include <mpi.h>

#include <Eigen/SparseCore>
#include <cstdint>
#include <filesystem>

#include "matrix_io/header.hpp"
#include "matrix_io/read.hpp"

namespace pagh::mpi {

struct InnerShare {
  Eigen::SparseMatrix<double> a;  // A[:, k0:k1]: m x (k1 - k0)
  Eigen::SparseMatrix<double> b;  // B[k0:k1, :]: (k1 - k0) x p
  std::int64_t k0 = 0, k1 = 0;    // this rank's inner indices
  matrix_io::Header header_a, header_b;
  std::int64_t m = 0, K = 0, p = 0;
  // Where this rank's read went (ms): parsing its byte ranges, the shuffle by k (the ranks' bounds
  // included), and the assembly of its share.
  struct Timings {
    double parse_ms = 0, shuffle_ms = 0, assemble_ms = 0;
  } timings;
};

// Collective. options: allow_non_finite and max_result_bytes (for this rank's share) apply; threads
// and chunk_bytes parse a rank's byte range in pieces on that many threads (the same entries and
// errors for any count), and a file read whole as matrix_io reads it.
InnerShare read_inner_share(const std::filesystem::path& a_path, const std::filesystem::path& b_path, MPI_Comm comm,
                            const matrix_io::ReadOptions& options = {});

}  // namespace pagh::mpi
