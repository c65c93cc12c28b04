// allReduceScalar: sums one host double over a group whatever memory the
// group's communicator moves: a host backend's communicator (MPI) reduces
// the host value itself; a device backend's (NCCL, or MPI behind host
// staging: host_staged_communicator.h) only reads device buffers, so the
// value goes through a one-element kFloat64 tensor of the backend's memory:
// uploaded, all-reduced, downloaded.
//
// Used for the step's scalars: the loss over pp and dp, the squared gradient
// norm over dp (ZeRO shards), pp and tp.
//
// Contract: collective over `group` (every rank calls it in the same order);
// `backend` is the rank's, whose memory `group` reads. On a host backend the
// result is bit for bit the plain double all-reduce. The download is a
// synchronisation point of the backend (its kept error comes back here).
#pragma once

#include "common/result.h"
#include "engine/backend.h"
#include "engine/parallel/communicator.h"

namespace bubblescope::engine {

Status allReduceScalar(Communicator& group, Backend& backend, double& value,
                       const CommTrace& trace = {});

}  // namespace bubblescope::engine
