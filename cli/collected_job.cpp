#include "cli/collected_job.h"

namespace bubblescope::cli {

MPI_Comm splitTrainers(bool isCollector) {
  int worldRank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm trainers = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, isCollector ? MPI_UNDEFINED : 0, worldRank, &trainers);
  return trainers;
}

bool agreeToStart(bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

}  // namespace bubblescope::cli
