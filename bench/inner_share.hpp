// One rank's equal share of the inner indices for the distributed benchmarks (distributed_scaling,
// distributed_gpu_scaling): columns [k0, k1) of A and the same rows of B, k0 = K * rank / parts, k1 =
// K * (rank + 1) / parts, with parts the number of ranks unless given (more parts than ranks: a rank
// sketches the share it would have among that many, e.g. one rank alone with a share of 8).
#pragma once

#include <mpi.h>

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <cstdint>
#include <type_traits>
#include <utility>

template <class MA, class MB>
std::pair<MA, MB> equal_inner_share(const MA& A, const MB& B, MPI_Comm comm, int parts = 0) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (parts < size) parts = size;
  const std::int64_t K = A.cols(), k0 = K * rank / parts, k1 = K * (rank + 1) / parts;
  if constexpr (std::is_same_v<MB, Eigen::SparseMatrix<double>>) {
    const Eigen::SparseMatrix<double> bt = B.transpose();  // rows of a column-major sparse B by columns of its transpose
    return {MA(A.middleCols(k0, k1 - k0)), Eigen::SparseMatrix<double>(bt.middleCols(k0, k1 - k0).transpose())};
  } else {
    return {MA(A.middleCols(k0, k1 - k0)), MB(B.middleRows(k0, k1 - k0))};
  }
}
