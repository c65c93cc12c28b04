// Ping-pong clock measurement over MPI (see clock_sync.h for the maths).
//
// Contract: collective over `comm`; every rank calls it with the same
// `rounds`. Rank 0 answers each other rank in turn; a rank reads its own
// clock through `localNow`. Returns this rank's estimate (rank 0: zero
// offset and uncertainty).
#pragma once

#include <mpi.h>

#include <functional>

#include "common/result.h"
#include "tracer/clock_sync.h"

namespace bubblescope::tracer {

Result<OffsetEstimate> measureOffsetToRankZero(MPI_Comm comm, int rounds,
                                               const std::function<int64_t()>& localNow);

}  // namespace bubblescope::tracer
