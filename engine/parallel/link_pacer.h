// LinkPacer and pacedRingAllReduce: an emulated slow link between nodes on
// one machine (issue 19, `--inter-node-gbps X --inter-node-latency-us Y`
// with `--ranks-per-node K`), so a teaching run shows what a hierarchical
// all-reduce saves when the inter-node link is slow.
//
// Sender-side pacing: before a message to a rank of another node leaves,
// the sender waits until its link is free, then for the message's
// transmission time (bytes x 8 / X Gb/s) and the latency Y; the real
// transfer (shared memory) follows. Messages between ranks of one node are
// not paced. The run's layout records the emulation (docs/parallel.md).
//
// Contract: one LinkPacer per communicator, used by the one thread that runs
// its collectives at a time (MpiCommunicator serialises them).
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "common/result.h"

namespace bubblescope::engine {

struct InterNodeLink {
  double gbps = 0.0;       // > 0: bandwidth of a rank's link to other nodes, 10^9 bit/s
  double latencyUs = 0.0;  // >= 0: added to every message between nodes
  bool paced() const { return gbps > 0.0 || latencyUs > 0.0; }
};

class LinkPacer {
 public:
  explicit LinkPacer(InterNodeLink link) : link_(link) {}
  // Blocks until a message of `bytes` may leave (see above).
  void pace(int64_t bytes);
  const InterNodeLink& link() const { return link_; }

 private:
  InterNodeLink link_;
  std::chrono::steady_clock::time_point freeAt_{};  // the link's previous message is through
};

// Sum all-reduce of `count` elements of `type` (MPI_Reduce_local with `op`)
// over `comm` as a ring: n - 1 reduce-scatter steps, then n - 1 all-gather
// steps, each an MPI_Sendrecv of one of n chunks (evenCounts) to the right
// neighbour, paced when that neighbour is on another node (nodeOf[group
// rank]). Every chunk is summed once along the ring and then copied, so
// every rank ends with the same bits.
Status pacedRingAllReduce(MPI_Comm comm, void* data, int64_t count, MPI_Datatype type,
                          int64_t elementBytes, MPI_Op op, const std::vector<int32_t>& nodeOf,
                          LinkPacer& pacer);

}  // namespace bubblescope::engine
