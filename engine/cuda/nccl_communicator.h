// NcclCommunicator: the Communicator of a group of GPU ranks, on device
// buffers, through NCCL. Built only with CUDA (library engine_nccl).
//
// Contract:
// - create() is collective over the group's MPI communicator: the group's
//   rank 0 makes the ncclUniqueId and broadcasts it over MPI, then every
//   rank joins (ncclCommInitRank) on its current CUDA device. Two ranks of
//   the group on one GPU is refused by NCCL: makeDeviceCommunicator() finds
//   that first (device UUIDs exchanged over MPI) and uses the MPI
//   communicator with host staging instead.
// - Every op runs on the communicator's own stream, ordered after the work
//   queued so far on the compute stream (an event recorded there and waited
//   on by the communication stream), so a bucket all-reduce started during
//   backward runs while later backward kernels compute. Completion is an
//   event recorded after the op: wait() blocks the host on it. Buffers must
//   stay untouched until wait() returns (Communicator's contract).
// - Reduce-scatter and all-gather with equal counts are ncclReduceScatter /
//   ncclAllGather; uneven counts are one grouped ncclReduce / ncclBroadcast
//   per rank. All-to-all (variable sizes) is one grouped ncclSend /
//   ncclRecv per peer on the group's communicator and stream (built, not
//   yet run on a GPU with more than one rank).
// - Sends and receives (pointToPoint groups only, e.g. the pp group) go over
//   one two-rank NCCL communicator per ordered pair of ranks (sender ->
//   receiver), each with its own stream on both sides, made at create()
//   (every rank joins its pairs in one global order, so the blocking
//   initialisations cannot deadlock). So a receive posted early never sits
//   in front of a send on the same stream, which would deadlock a pipeline
//   whose stages exchange activations and gradients both ways (one NCCL
//   communicator serialises its kernels). NCCL has no tags: messages from
//   one sender to one receiver match in the order they are posted; a send
//   completes only once its receive has been posted.
// - Tracing as every Communicator: the span runs from the call (start())
//   to the moment the host sees the completion event (wait()); CUPTI shows
//   the NCCL kernels themselves on the GPU clock, tagged with dim() through
//   deviceStreams() (tracer/stream_dims.h): no other work runs on them.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <memory>
#include <vector>

#include "engine/parallel/host_staged_communicator.h"
#include "engine/parallel/mpi_communicator.h"

namespace bubblescope::engine {

class NcclCommunicator final : public Communicator {
 public:
  static Result<std::unique_ptr<NcclCommunicator>> create(const MpiCommunicator& group,
                                                          cudaStream_t computeStream,
                                                          bool pointToPoint);
  ~NcclCommunicator() override;

  cudaStream_t stream() const { return stream_; }  // the communication stream
  // The collective stream and every send/receive link's: each used by this
  // communicator only.
  std::vector<const void*> deviceStreams() const override;

 protected:
  Result<std::unique_ptr<PendingComm>> launch(const CommOp& op, bool blocking) override;

 private:
  NcclCommunicator(trace_model::ParallelDim dim, std::vector<int32_t> worldRanks, int32_t rank)
      : Communicator(dim, std::move(worldRanks), rank) {}
  // A two-rank communicator for one direction of one pair, and its stream.
  struct Link {
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
  };
  Status joinLinks(const MpiCommunicator& group);
  // The NCCL calls of op, on `stream` (which enqueue() returns).
  Status enqueue(const CommOp& op, cudaStream_t& stream);
  Status enqueueAllToAll(const CommOp& op);  // on stream_

  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;  // collectives
  cudaStream_t compute_ = nullptr;
  std::vector<Link> sendLinks_;  // by receiver's group rank
  std::vector<Link> recvLinks_;  // by sender's group rank
};

// Device <-> host copies ordered with the compute stream, on a copy stream
// of their own: each call makes the copy stream wait for everything queued
// on the compute stream so far (an event), queues the copy there and waits
// for it. The copy stream runs nothing else, so the tracer gives its copies
// the staged group's dimension (streams(), tracer/stream_dims.h).
class CudaDeviceCopier final : public DeviceCopier {
 public:
  static Result<std::unique_ptr<CudaDeviceCopier>> create(cudaStream_t computeStream);
  ~CudaDeviceCopier() override;
  CudaDeviceCopier(const CudaDeviceCopier&) = delete;
  CudaDeviceCopier& operator=(const CudaDeviceCopier&) = delete;
  Status toHost(void* host, const void* device, size_t bytes) override;
  Status toDevice(void* device, const void* host, size_t bytes) override;
  std::vector<const void*> streams() const override { return {copy_}; }

 private:
  CudaDeviceCopier(cudaStream_t compute, cudaStream_t copy) : compute_(compute), copy_(copy) {}
  Status copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
  cudaStream_t compute_;
  cudaStream_t copy_;
};

// True when two ranks of the group use the same GPU (their current devices'
// UUIDs, exchanged over the group's MPI communicator). Collective.
Result<bool> ranksShareAGpu(const MpiCommunicator& group);

// The communicator for device buffers of a group: NCCL, or, when ranks of
// the group share a GPU or `hostStaged` says so (the same on every rank of
// the group), `group` itself behind host staging. Collective.
Result<std::unique_ptr<Communicator>> makeDeviceCommunicator(std::unique_ptr<MpiCommunicator> group,
                                                             cudaStream_t computeStream,
                                                             bool pointToPoint,
                                                             bool hostStaged = false);

}  // namespace bubblescope::engine
