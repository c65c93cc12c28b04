// slowestRankSeconds: how long `body` takes on the slowest rank of
// MPI_COMM_WORLD, the ranks started together (a barrier first). The MPI
// benches' one timer (bench allreduce, bench alltoall).
//
// Contract: collective over MPI_COMM_WORLD: every rank calls it, in the same
// order, and gets the same value.
#pragma once

#include <mpi.h>

namespace bubblescope::cli {

template <class F>
double slowestRankSeconds(F&& body) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  body();
  double mine = MPI_Wtime() - t0, slowest = 0.0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

}  // namespace bubblescope::cli
