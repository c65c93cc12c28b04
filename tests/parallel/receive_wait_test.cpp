// A blocking receive posted long before its send, and a pp collective whose
// peers arrive late: the time spent waiting for the peer is a kWait span, and
// only the transfer after it is communication (docs/parallel.md: a bubble is
// never hidden inside a receive). Ranks 0 and 1 take part; the others only
// join the groups.
//
// Times of two processes are compared: every process of this suite reads
// CLOCK_MONOTONIC (BUBBLESCOPE_CLOCK=monotonic, set before main()), one clock
// for the whole host, so the order of two reads is the order of the events.
// With the TSC each process would carry its own calibration's deviation
// (docs/tracer.md). Nothing depends on how fast the machine is: the late
// rank holds back 100 ms, and when the early rank could not even post its
// call within that (a machine busy past that), the scenario is run again.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
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
// Tries of a scenario whose early call came only after the late rank acted.
constexpr int kTries = 5;
constexpr int kReadyTag = 20, kDataTag = 21;

const bool kOneClockPerHost = setenv("BUBBLESCOPE_CLOCK", "monotonic", 1) == 0;

std::unique_ptr<MpiCommunicator> ppComm() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto c = MpiCommunicator::split(MPI_COMM_WORLD, 0, rank, ParallelDim::kPp);
  EXPECT_TRUE(c.isOk()) << c.status().toString();
  return std::move(c).value();
}

// Rank `early` reads its clock, then tells `late` it is about to block;
// `late` waits kDelayNs and reads its clock. Returns, on `early`, the time
// read before telling (its next call starts after it) and, on `late`, the
// time it acts at, at least kDelayNs after that; -1 on the other ranks.
int64_t holdBack(MpiCommunicator& comm, int early, int late) {
  char ready = 1;
  if (comm.rank() == early) {
    const int64_t before = comm.nowNs();
    MPI_Send(&ready, 1, MPI_CHAR, late, kReadyTag, comm.comm());
    return before;
  }
  if (comm.rank() != late) return -1;
  MPI_Recv(&ready, 1, MPI_CHAR, early, kReadyTag, comm.comm(), MPI_STATUS_IGNORE);
  std::this_thread::sleep_for(std::chrono::nanoseconds(kDelayNs));  // the late peer's "work"
  return comm.nowNs();
}

// Whether rank 1's call began before rank 0 acted (its first span started
// before `actedNs`), as rank 1 saw it, told to every rank of `comm`.
bool earlyCallCameFirst(MpiCommunicator& comm, const std::vector<trace_model::Event>& events,
                        int64_t actedNs) {
  int first = comm.rank() == 1 && !events.empty() && events[0].startNs < actedNs;
  MPI_Bcast(&first, 1, MPI_INT, 1, comm.comm());
  return first != 0;
}

TEST(ReceiveWaitTest, AReceivePostedBeforeItsSendRecordsTheWaitThenTheTransfer) {
  ASSERT_TRUE(kOneClockPerHost);
  auto comm = ppComm();
  const int r = comm->rank();
  std::vector<float> message(4096, 0.0f);  // 16 KiB; its first 8 bytes: the send time
  std::vector<trace_model::Event> events;
  int64_t callNs = 0, senderNs = 0;
  for (int attempt = 0; attempt < kTries; ++attempt) {
    tracer::Recorder recorder(r, true);
    comm->setRecorder(&recorder);
    // Rank 1 reads callNs, then tells rank 0, which sends kDelayNs later.
    const int64_t heldNs = holdBack(*comm, /*early=*/1, /*late=*/0);
    CommTrace trace;
    trace.name = "recv_activation";
    trace.waitName = "wait_activation";
    trace.step = 2;
    trace.microBatch = 5;
    if (r == 0) {
      std::memcpy(message.data(), &heldNs, sizeof heldNs);
      ASSERT_TRUE(comm->send(message, 1, kDataTag).isOk());
    }
    if (r == 1) {
      callNs = heldNs;
      ASSERT_TRUE(comm->recv(message, 0, kDataTag, trace).isOk());
      std::memcpy(&senderNs, message.data(), sizeof senderNs);
    }
    comm->setRecorder(nullptr);
    events = recorder.drain();
    if (earlyCallCameFirst(*comm, events, senderNs)) break;
    ASSERT_LT(attempt + 1, kTries) << "the receive never started before its send";
  }
  if (r != 1) return;
  ASSERT_GT(senderNs, 0);
  // The receive was called before rank 0 was told, so at least kDelayNs
  // before the send.
  ASSERT_LE(callNs + kDelayNs, senderNs);
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
  EXPECT_LT(wait.startNs, senderNs);
  EXPECT_GE(wait.endNs, senderNs);
  // ... and the transfer only starts then: it never covers the time before
  // the sender posted the message.
  EXPECT_EQ(transfer.startNs, wait.endNs);
  EXPECT_LE(transfer.startNs, transfer.endNs);
}

TEST(ReceiveWaitTest, APpCollectiveWaitsForItsLastRankApartFromTheTransfer) {
  ASSERT_TRUE(kOneClockPerHost);
  auto comm = ppComm();
  const int r = comm->rank();
  const int n = comm->size();
  std::vector<trace_model::Event> events;
  int64_t callNs = 0, joinedNs = 0;
  for (int attempt = 0; attempt < kTries; ++attempt) {
    tracer::Recorder recorder(r, true);
    comm->setRecorder(&recorder);
    // Rank 1 reads callNs, then tells rank 0, which joins kDelayNs later.
    const int64_t heldNs = holdBack(*comm, /*early=*/1, /*late=*/0);
    callNs = heldNs;
    joinedNs = heldNs;
    double value = r + 1.0;
    CommTrace trace;
    trace.name = "grad_norm";
    ASSERT_TRUE(comm->allReduce(std::span<double>(&value, 1), trace).isOk());
    EXPECT_EQ(value, n * (n + 1) / 2.0);
    comm->setRecorder(nullptr);
    MPI_Bcast(&joinedNs, 1, MPI_INT64_T, 0, comm->comm());
    events = recorder.drain();
    if (earlyCallCameFirst(*comm, events, joinedNs)) break;
    ASSERT_LT(attempt + 1, kTries) << "rank 1 never called before rank 0 joined";
  }
  if (r != 1) return;
  ASSERT_LE(callNs + kDelayNs, joinedNs);
  ASSERT_EQ(events.size(), 2u);
  const trace_model::Event& wait = events[0];
  const trace_model::Event& transfer = events[1];
  EXPECT_EQ(wait.kind, EventKind::kWait);
  EXPECT_EQ(wait.name, "wait");
  EXPECT_EQ(wait.lane, trace_model::Lane::kCommunication);
  EXPECT_EQ(wait.dim, ParallelDim::kPp);
  EXPECT_EQ(wait.bytes, 0);
  EXPECT_GE(wait.startNs, callNs);
  EXPECT_GE(wait.endNs, joinedNs);
  EXPECT_EQ(transfer.kind, EventKind::kAllReduce);
  EXPECT_EQ(transfer.name, "grad_norm");
  EXPECT_EQ(transfer.bytes, 8);
  EXPECT_EQ(transfer.startNs, wait.endNs);
}

}  // namespace
}  // namespace bubblescope::engine
