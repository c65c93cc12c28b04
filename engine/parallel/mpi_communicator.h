// MpiCommunicator: the Communicator of one MPI sub-communicator.
//
// Non-blocking collectives run on a worker thread that executes them with
// the blocking MPI calls in the order they were started (as PyTorch's
// ProcessGroupMPI does), so they progress while the training thread
// computes: OpenMPI advances MPI_I* collectives only inside MPI calls. A
// blocking collective waits until the worker is idle and then runs on the
// calling thread, so every rank still issues the group's collectives in one
// order. Waiting on an op the worker has not started yet runs it on the
// waiting thread instead. Sends and receives use MPI_Isend / MPI_Irecv.
//
// Waits (Communicator's CommTimes::readyNs), observed where MPI shows them:
// - A blocking receive polls MPI_Improbe until the message has arrived (its
//   envelope: the sender has posted it), then takes it with MPI_Mrecv;
//   readyNs is the match. A non-blocking receive cannot tell (readyNs =
//   start): its span is [posting, completion].
// - A blocking collective of a pp group (the stages' step-end all-reduces)
//   first polls an MPI_Ibarrier: readyNs is when every stage has joined.
//   dp and tp collectives run as they are (an extra barrier per tp
//   all-reduce would cost more than it shows).
// - A send cannot tell: MPI shows neither when the receiver matched a
//   message nor how much of a send's time was spent before that, so a
//   send's span is its posting (pipeline) or the whole blocking call.
// Polls sleep 10 us between tries (100 us after 100 tries), so a waiting
// rank leaves the core to ranks that compute; readyNs is late by at most
// one sleep.
//
// Contract: needs MPI initialised with MPI_THREAD_MULTIPLE (the worker and
// the tracer call MPI concurrently with the training thread). Must be
// destroyed before MPI_Finalize, with every handle waited.
#pragma once

#include <mpi.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "engine/parallel/communicator.h"
#include "engine/parallel/link_pacer.h"

namespace bubblescope::engine {

class MpiCommunicator final : public Communicator {
 public:
  // Collective over `parent`: ranks with equal `color` form one group,
  // ordered by `key` (MPI_Comm_split). Errors come back as values.
  static Result<std::unique_ptr<MpiCommunicator>> split(MPI_Comm parent, int color, int key,
                                                        trace_model::ParallelDim dim);
  ~MpiCommunicator() override;

  MPI_Comm comm() const { return comm_; }

  // All-reduces from now on run as a ring whose messages between nodes are
  // paced (link_pacer.h); nodeOfGroupRank: every group rank's node. Not
  // while ops are in flight.
  void emulateInterNodeLink(std::vector<int32_t> nodeOfGroupRank, const InterNodeLink& link);
  // The emulated link (null: none) and every group rank's node, as given.
  const LinkPacer* pacer() const { return pacer_.get(); }
  const std::vector<int32_t>& nodeOfGroupRank() const { return nodeOf_; }

  struct Job;  // a queued op (internal)

 protected:
  Result<std::unique_ptr<PendingComm>> launch(const CommOp& op, bool blocking) override;

 private:
  MpiCommunicator(MPI_Comm comm, trace_model::ParallelDim dim, std::vector<int32_t> worldRanks,
                  int32_t rank);
  class QueuedComm;
  Status execute(const CommOp& op);  // the blocking MPI call
  // A blocking receive: MPI_Improbe polls, then MPI_Mrecv; sets times.readyNs.
  Status receiveWhenArrived(const CommOp& op, CommTimes& times);
  // Polls an MPI_Ibarrier of the group; sets times.readyNs. Only while the
  // group's collectives are serialised (busy_ held).
  Status awaitGroup(CommTimes& times);
  void runJob(Job& job);  // execute, then mark done; busy_ is set by the caller
  void workerLoop();

  MPI_Comm comm_;
  std::mutex mutex_;
  std::condition_variable changed_;  // queue, busy_ or a job's completion changed
  std::deque<std::shared_ptr<Job>> queue_;
  bool busy_ = false;  // a collective is running (worker or inline)
  bool stop_ = false;
  std::thread worker_;                // started with the first non-blocking collective
  std::unique_ptr<LinkPacer> pacer_;  // set: all-reduces run as a paced ring
  std::vector<int32_t> nodeOf_;       // (size) each group rank's node, with pacer_
};

}  // namespace bubblescope::engine
