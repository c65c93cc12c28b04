// Ping-pong clock measurement over MPI (see clock_sync.h for the maths).
//
// Contract: collective over `comm`; every rank calls it with the same
// `reference` and `rounds`. The reference rank (the clock every other rank
// is aligned to: rank 0, or the collector of a launched job) answers each
// other rank in turn; a rank reads its own clock through `localNow`. Returns
// this rank's estimate (the reference: zero offset and uncertainty).
#pragma once

#include <mpi.h>

#include <functional>

#include "common/result.h"
#include "tracer/clock_sync.h"

namespace bubblescope::tracer {

Result<OffsetEstimate> measureOffsetTo(MPI_Comm comm, int reference, int rounds,
                                       const std::function<int64_t()>& localNow);

}  // namespace bubblescope::tracer
