// Rank 0 on its node's cores while the workers wait (mpi_node_cores.hpp).
#include "mpi_node_cores.hpp"

#include <omp.h>

#include <cstring>

namespace pagh_mm {

NodeCores::NodeCores(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int ranks = 1;
  MPI_Comm_size(node, &ranks);
  CPU_ZERO(&own_);
  int mine = sched_getaffinity(0, sizeof own_, &own_) == 0, everywhere = mine;
  MPI_Allreduce(&mine, &everywhere, 1, MPI_INT, MPI_MIN, node);
  // The union of the ranks' sets: a bitwise OR of their bytes (cpu_set_t is a plain bit array).
  unsigned char bits[sizeof(cpu_set_t)];
  MPI_Allreduce(&own_, bits, static_cast<int>(sizeof bits), MPI_UNSIGNED_CHAR, MPI_BOR, node);
  MPI_Comm_free(&node);
  std::memcpy(&node_, bits, sizeof bits);
  node_count_ = CPU_COUNT(&node_);
  more_ = everywhere && node_count_ > CPU_COUNT(&own_);
}

void NodeCores::widen(int threads) {
  if (!more_ || threads > 0 || widened_) return;
  own_threads_ = omp_get_max_threads();
  if (sched_setaffinity(0, sizeof node_, &node_) != 0) return;
  omp_set_num_threads(node_count_);
  widened_ = true;
}

void NodeCores::narrow() {
  if (!widened_) return;
  (void)sched_setaffinity(0, sizeof own_, &own_);
  omp_set_num_threads(own_threads_);
  widened_ = false;
}

}  // namespace pagh_mm
