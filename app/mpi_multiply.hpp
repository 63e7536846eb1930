// mpirun -np N pagh-mm [options] A B: the main command over N processes. Every rank reads its byte
// ranges of sparse coordinate files and keeps the inner indices k it owns (mpi_shares.hpp), or, where
// the run needs whole matrices (--verify and the rest that mpi_shares.hpp lists), reads the whole
// files and takes its range of k (mpi_inner_split.hpp); it sketches them with the backend rank 0
// selected (one GPU per rank on a node, by local rank). The sketches are summed on rank 0, which
// does everything else (selection, verification, outputs, the report) exactly as one process would,
// asking the ranks for what it needs of shared operands (exact values, the known diagonal).
// A failure on any rank ends every rank with the status of the first failing rank, printed once by
// rank 0 as the one line one process would print (mpirun -q keeps mpirun's own notice of a failed
// job off stderr).
#pragma once

#include <string>
#include <vector>

namespace pagh_mm {

// Whether mpirun (Open MPI, MPICH/Hydra) or a PMI launcher such as srun started this process.
bool launched_by_mpi();

// The main command as rank r of MPI_COMM_WORLD: rank 0 runs run_multiply, prints a failure as
// report_failure does and returns the status; the other ranks return the status rank 0 ended with.
int run_multiply_distributed(const std::vector<std::string>& args);

}  // namespace pagh_mm
