// A blocking receive posted long before its send, and a pp collective whose
// peers arrive late: the time spent waiting for the peer is a kWait span, and
// only the transfer after it is communication (DESIGN.md: a bubble is never
// hidden inside a receive). Ranks 0 and 1 take part; the others only join the
// groups. All ranks share one host, so their monotonic clocks compare.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "engine/parallel/mpi_communicator.h"

namespace bubblescope::engine {
namespace {

using trace_model::EventKind;
using trace_model::ParallelDim;

// How long the late rank holds back after the early one said it is about to
// block: long against a poll (<= 100 us) and a 16 KiB transfer.
constexpr int64_t kDelayNs = 100'000'000;
// Allowed error between two processes' clocks (the tracer's clock is
// calibrated per process; docs/tracer.md bounds the error far below this).
constexpr int64_t kClockToleranceNs = 1'000'000;
constexpr int kReadyTag = 20, kDataTag = 21;

std::unique_ptr<MpiCommunicator> ppComm() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto c = MpiCommunicator::split(MPI_COMM_WORLD, 0, rank, ParallelDim::kPp);
  EXPECT_TRUE(c.isOk()) << c.status().toString();
  return std::move(c).value();
}

// Rank `early` tells `late` it is about to block; `late` waits kDelayNs on
// its clock and returns the time it then acts at (-1 on the other ranks).
int64_t holdBack(MpiCommunicator& comm, int early, int late) {
  char ready = 1;
  if (comm.rank() == early) MPI_Send(&ready, 1, MPI_CHAR, late, kReadyTag, comm.comm());
  if (comm.rank() != late) return -1;
  MPI_Recv(&ready, 1, MPI_CHAR, early, kReadyTag, comm.comm(), MPI_STATUS_IGNORE);
  std::this_thread::sleep_for(std::chrono::nanoseconds(kDelayNs));  // the late peer's "work"
  return comm.nowNs();
}

TEST(ReceiveWaitTest, AReceivePostedBeforeItsSendRecordsTheWaitThenTheTransfer) {
  auto comm = ppComm();
  const int r = comm->rank();
  tracer::Recorder recorder(r, true);
  comm->setRecorder(&recorder);
  std::vector<float> message(4096, 0.0f);  // 16 KiB; its first 8 bytes: the send time
  const int64_t sentNs = holdBack(*comm, /*early=*/1, /*late=*/0);
  CommTrace trace;
  trace.name = "recv_activation";
  trace.waitName = "wait_activation";
  trace.step = 2;
  trace.microBatch = 5;
  if (r == 0) {
    std::memcpy(message.data(), &sentNs, sizeof sentNs);
    ASSERT_TRUE(comm->send(message, 1, kDataTag).isOk());
  }
  int64_t callNs = 0;
  if (r == 1) {
    callNs = comm->nowNs();
    ASSERT_TRUE(comm->recv(message, 0, kDataTag, trace).isOk());
  }
  comm->setRecorder(nullptr);
  const auto events = recorder.drain();
  if (r != 1) return;
  int64_t senderNs = 0;
  std::memcpy(&senderNs, message.data(), sizeof senderNs);
  ASSERT_GT(senderNs, 0);
  // The receive was called before the ready message reached rank 0, so at
  // least kDelayNs before the send.
  ASSERT_LT(callNs, senderNs - kDelayNs + kClockToleranceNs);
  ASSERT_EQ(events.size(), 2u);
  const trace_model::Event& wait = events[0];
  const trace_model::Event& transfer = events[1];
  EXPECT_EQ(wait.kind, EventKind::kWait);
  EXPECT_EQ(wait.name, "wait_activation");
  EXPECT_EQ(wait.lane, trace_model::Lane::kPipeline);
  EXPECT_EQ(wait.dim, ParallelDim::kPp);
  EXPECT_EQ(wait.peer, 0);
  EXPECT_EQ(wait.bytes, 0);
  EXPECT_EQ(wait.step, 2);
  EXPECT_EQ(wait.microBatch, 5);
  EXPECT_EQ(transfer.kind, EventKind::kRecv);
  EXPECT_EQ(transfer.name, "recv_activation");
  EXPECT_EQ(transfer.dim, ParallelDim::kPp);
  EXPECT_EQ(transfer.bytes, 4096 * 4);
  // The wait covers the delay: from the call until the data was sent ...
  EXPECT_GE(wait.startNs, callNs);
  EXPECT_GE(wait.endNs, senderNs - kClockToleranceNs);
  EXPECT_GE(wait.endNs - wait.startNs, senderNs - callNs - kClockToleranceNs);
  // ... and the transfer only starts then: it never covers the time before
  // the sender posted the message.
  EXPECT_EQ(transfer.startNs, wait.endNs);
  EXPECT_LE(transfer.startNs, transfer.endNs);
}

TEST(ReceiveWaitTest, APpCollectiveWaitsForItsLastRankApartFromTheTransfer) {
  auto comm = ppComm();
  const int r = comm->rank();
  tracer::Recorder recorder(r, true);
  comm->setRecorder(&recorder);
  // Rank 0 joins kDelayNs after rank 1 said it is about to call.
  int64_t joinedNs = holdBack(*comm, /*early=*/1, /*late=*/0);
  const int64_t callNs = comm->nowNs();
  double value = r + 1.0;
  CommTrace trace;
  trace.name = "grad_norm";
  ASSERT_TRUE(comm->allReduce(std::span<double>(&value, 1), trace).isOk());
  const int n = comm->size();
  EXPECT_EQ(value, n * (n + 1) / 2.0);
  comm->setRecorder(nullptr);
  MPI_Bcast(&joinedNs, 1, MPI_INT64_T, 0, comm->comm());
  const auto events = recorder.drain();
  if (r != 1) return;
  ASSERT_LT(callNs, joinedNs - kDelayNs + kClockToleranceNs);
  ASSERT_EQ(events.size(), 2u);
  const trace_model::Event& wait = events[0];
  const trace_model::Event& transfer = events[1];
  EXPECT_EQ(wait.kind, EventKind::kWait);
  EXPECT_EQ(wait.name, "wait");
  EXPECT_EQ(wait.lane, trace_model::Lane::kCommunication);
  EXPECT_EQ(wait.dim, ParallelDim::kPp);
  EXPECT_EQ(wait.bytes, 0);
  EXPECT_GE(wait.startNs, callNs);
  EXPECT_GE(wait.endNs, joinedNs - kClockToleranceNs);
  EXPECT_EQ(transfer.kind, EventKind::kAllReduce);
  EXPECT_EQ(transfer.name, "grad_norm");
  EXPECT_EQ(transfer.bytes, 8);
  EXPECT_EQ(transfer.startNs, wait.endNs);
}

}  // namespace
}  // namespace bubblescope::engine
