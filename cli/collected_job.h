// A job that `run` launches with a trace holds one more MPI process than
// the layout has ranks: the collector (`bubblescope-cli collect`), placed on
// the launching machine as the last rank of MPI_COMM_WORLD. The trainers are
// world ranks 0..n-1, so a trainer's world rank is its rank in the run (the
// engine's traced peers are world ranks), and they train on a communicator
// of their own that leaves the collector out.
//
// Contract: both functions are collective over MPI_COMM_WORLD and are called
// in this order by every process of the job, trainers and collector alike.
#pragma once

#include <mpi.h>

namespace bubblescope::cli {

// The trainers' communicator for a trainer; MPI_COMM_NULL for the collector.
MPI_Comm splitTrainers(bool isCollector);

// Whether every process of the job can go on (each passes its own verdict):
// a trainer that refuses to start (a bad layout) lets the collector end
// instead of waiting for ranks that never come.
bool agreeToStart(bool ok);

}  // namespace bubblescope::cli
