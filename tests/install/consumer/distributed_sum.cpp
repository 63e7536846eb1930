// The distributed library through an installed pagh::distributed: the headers, MPI and the library
// link (the install test builds it; running it needs mpirun).
#include <cstdio>

#include "distributed/mpi_compress.hpp"
#include "distributed/mpi_read.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    const auto share = pagh::mpi::read_inner_share(argv[1], argv[2], MPI_COMM_WORLD);
    const auto product = pagh::mpi::compress(share.a, share.b, {.seed = 1}, MPI_COMM_WORLD, /*root=*/0);
    if (product)
      for (const pagh::Entry& e : product->top_k(3)) std::printf("%lld %lld %g\n", (long long)e.row, (long long)e.col, e.value);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "distributed_sum: %s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
