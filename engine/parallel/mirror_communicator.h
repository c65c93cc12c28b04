// MirrorCommunicator: a group of `size` ranks in one process where every
// other rank holds exactly what this rank holds (issue 35: `calibrate`
// measures what the gradient compressors cost on this machine without a
// second process or a link). Nothing crosses a link; the collectives do the
// arithmetic a real group's would on identical inputs, so the compressed
// reductions (bucket_reduction.h) run their real encode, sum and decode code:
//  - all-reduce: the buffer is combined with a copy of itself size - 1 times
//    by the element type's sum (reduced_types.h for fp16, bf16 and int8
//    blocks; + for fp32, fp64 and int32), as a tree or MPI's recursive
//    doubling at size 2 does once per element;
//  - all-gather: this rank's part copied into every rank's slot;
//  - reduce-scatter: this rank's part of the send buffer, combined as above;
//  - broadcast: nothing (every rank already holds it).
// Sends, receives and all-to-alls have no mirror (a peer would have to send
// something else) and are refused (kUnsupported).
//
// Contract: as Communicator (communicator.h); ops complete in start() and
// wait() reports startNs = readyNs (nobody is waited for). Size >= 1; rank 0.
// Records no spans unless given a recorder, like any communicator. It counts
// the wall and thread-CPU time its collectives took (inCollectives(): what a
// compressed reduction does inside its collectives, the reduced type's sums,
// apart from its encoding and decoding around them).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/parallel/communicator.h"

namespace bubblescope::engine {

class MirrorCommunicator final : public Communicator {
 public:
  MirrorCommunicator(trace_model::ParallelDim dim, int32_t size);

  struct Time {
    int64_t wallNs = 0;
    int64_t cpuNs = 0;
  };
  // The time spent inside collectives since construction.
  Time inCollectives() const { return spent_; }

 protected:
  Result<std::unique_ptr<PendingComm>> launch(const CommOp& op, bool blocking) override;

 private:
  // inout = inout combined with copies of itself: `size()` ranks' equal parts.
  void sumWithMirrors(ElementType type, void* inout, int64_t count);

  // The collective itself; launch() times it into spent_.
  Result<std::unique_ptr<PendingComm>> run(const CommOp& op);

  std::vector<std::byte> copy_;  // scratch: the buffer as it was
  Time spent_;
};

}  // namespace bubblescope::engine
