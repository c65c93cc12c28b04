#include "tracer/mpi_clock_sync.h"

#include <vector>

#include "tracer/clock.h"

namespace bubblescope::tracer {
namespace {
constexpr int kTagPing = 7101;
constexpr int kTagPong = 7102;
}  // namespace

Result<OffsetEstimate> measureOffsetTo(MPI_Comm comm, int reference, int rounds,
                                       const std::function<int64_t()>& localNow) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  OffsetEstimate estimate;
  if (rank == reference) {
    estimate.atNs = localNow();
    for (int peer = 0; peer < size; ++peer) {
      if (peer == reference) continue;
      for (int i = 0; i < rounds; ++i) {
        char ping = 0;
        if (MPI_Recv(&ping, 1, MPI_CHAR, peer, kTagPing, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
          return Status::internal("clock sync: receive from rank " + std::to_string(peer) +
                                  " failed");
        }
        const int64_t now = localNow();
        MPI_Send(&now, 1, MPI_INT64_T, peer, kTagPong, comm);
      }
    }
  } else {
    std::vector<PingPong> samples(rounds);
    for (auto& s : samples) {
      const char ping = 0;
      s.sendNs = localNow();
      MPI_Send(&ping, 1, MPI_CHAR, reference, kTagPing, comm);
      if (MPI_Recv(&s.refNs, 1, MPI_INT64_T, reference, kTagPong, comm, MPI_STATUS_IGNORE) !=
          MPI_SUCCESS) {
        return Status::internal("clock sync: receive from rank " + std::to_string(reference) +
                                " failed");
      }
      s.receiveNs = localNow();
    }
    BS_ASSIGN_OR_RETURN(estimate, estimateOffset(samples));
  }
  MPI_Barrier(comm);
  return estimate;
}

}  // namespace bubblescope::tracer
