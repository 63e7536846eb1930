// The cores of rank 0's node for the work rank 0 does alone. Under mpirun with a binding (e.g.
// --map-by slot:PE=2 --bind-to core) every rank may run only on its own cores, and OpenMP starts as
// many threads as the rank has cores. The distributed pagh-mm sketches on every rank, but after the
// sum rank 0 selects the entries alone while the workers sleep (pagh::mpi::wait_without_spinning):
// with 8 ranks of 2 cores on a 16-core node that selection ran on 2 cores. NodeCores lets rank 0
// take the cores of every rank on its node for that stretch and give them back before the next
// sketch (the ranks' own cores again, so that the ranks do not sketch on each other's cores).
#pragma once

#include <mpi.h>
#include <sched.h>

namespace pagh_mm {

class NodeCores {
 public:
  // Collective over comm, every rank: gathers the cores every rank on this node may run on.
  explicit NodeCores(MPI_Comm comm);
  // Local: this thread (and the OpenMP threads it starts from now on) may run on the node's ranks'
  // cores, and OpenMP's default thread count becomes their number. Does nothing where the ranks
  // are not bound (the node's cores are this rank's already) or where --threads (threads > 0) set
  // the count.
  void widen(int threads);
  // Local: back to this rank's own cores and thread count (after widen; else nothing).
  void narrow();
  bool widened() const { return widened_; }
  int node_cores() const { return node_count_; }

 private:
  cpu_set_t own_{}, node_{};
  int own_threads_ = 0, node_count_ = 0;
  bool more_ = false, widened_ = false;  // more_: the node offers more cores than this rank's
};

}  // namespace pagh_mm
