// What the tests run under mpirun share: this rank, the rank count, and a main in which every rank
// runs every test and the process fails if any rank saw a failure.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <functional>

namespace pagh::test {

inline int rank_of() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int ranks() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// cleanup (optional) runs on every rank after the tests, before MPI_Finalize. threads: the level of
// thread support asked of MPI (MPI_Query_thread tells what was granted).
inline int run_mpi_tests(int argc, char** argv, const std::function<void()>& cleanup = {}, int threads = MPI_THREAD_SINGLE) {
  int granted = 0;
  MPI_Init_thread(&argc, &argv, threads, &granted);
  ::testing::InitGoogleTest(&argc, argv);
  int failed = RUN_ALL_TESTS();
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  if (cleanup) cleanup();
  MPI_Finalize();
  return failed;
}

}  // namespace pagh::test
