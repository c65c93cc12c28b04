// HostStagedCommunicator: a Communicator over device buffers that runs every
// op through a host Communicator of the same group (MPI), staging the
// buffers through host memory: device -> host before the op, host -> device
// after it.
//
// Why: NCCL refuses a communicator in which two ranks use the same GPU, so a
// one-GPU machine running pp4 (four ranks on one device) moves its device
// tensors through MPI instead (engine/cuda/nccl_communicator.h picks).
//
// Contract:
// - The inner communicator must be a host communicator of exactly this
//   group (same ranks, same order); the wrapper owns it and takes its rank,
//   size and world ranks. The wrapper is the traced one: give the recorder
//   to the wrapper, none to the inner communicator. Spans cover staging,
//   the transfer and the copy back.
// - Buffers handed to the wrapper are device buffers (any memory the
//   DeviceCopier understands); the inner communicator only sees host copies,
//   owned by the pending op until wait() returns.
// - Copies to the host happen in start() on the calling thread, after the
//   compute that produced the data (the copier's job: the CUDA copier's copy
//   stream waits for the compute stream), so a staged collective does not
//   overlap the compute queued before it. Copies back happen in wait().
// - Tracing: the copies are part of the op's span (dimension: the
//   communicator's); on a GPU they run on the copier's own stream, which
//   deviceStreams() names, so their memcpy records carry that dimension too.
// - Only what the op reads is staged in (the root's buffer for a broadcast,
//   this rank's part for an in-place all-gather) and only what it writes is
//   copied back.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "engine/parallel/communicator.h"

namespace bubblescope::engine {

// Copies between "device" buffers (the ones callers give the communicator)
// and host memory. Both calls are complete when they return.
class DeviceCopier {
 public:
  virtual ~DeviceCopier() = default;
  virtual Status toHost(void* host, const void* device, size_t bytes) = 0;
  virtual Status toDevice(void* device, const void* host, size_t bytes) = 0;
  // The device streams (cudaStream_t handles) its copies run on and that
  // nothing else uses (none: it cannot tell, or shares them).
  virtual std::vector<const void*> streams() const { return {}; }
};

class HostStagedCommunicator final : public Communicator {
 public:
  HostStagedCommunicator(std::unique_ptr<Communicator> inner, std::unique_ptr<DeviceCopier> copier);
  // The copier's own streams: the staging copies are this group's traffic,
  // so the tracer gives them its dimension (Communicator::deviceStreams()).
  std::vector<const void*> deviceStreams() const override { return copier_->streams(); }

 protected:
  Result<std::unique_ptr<PendingComm>> launch(const CommOp& op, bool blocking) override;

 private:
  class StagedComm;
  std::unique_ptr<Communicator> inner_;
  std::unique_ptr<DeviceCopier> copier_;
};

}  // namespace bubblescope::engine
