// MpiCommunicator on 4 ranks: every collective (all-to-all with variable
// sizes included) blocking and non-blocking,
// sends and receives, the traced spans, and errors as values.
#include <gtest/gtest.h>

#include <numeric>

#include "engine/parallel/mpi_communicator.h"

namespace bubblescope::engine {
namespace {

using trace_model::EventKind;
using trace_model::ParallelDim;

std::unique_ptr<MpiCommunicator> worldComm(ParallelDim dim = ParallelDim::kDp) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto c = MpiCommunicator::split(MPI_COMM_WORLD, 0, rank, dim);
  EXPECT_TRUE(c.isOk()) << c.status().toString();
  return std::move(c).value();
}

TEST(CommunicatorTest, AllReduceSumsInPlaceBlockingAndNot) {
  auto comm = worldComm();
  const int n = comm->size(), r = comm->rank();
  std::vector<float> a(1000, static_cast<float>(r + 1));
  ASSERT_TRUE(comm->allReduce(a).isOk());
  const float expected = static_cast<float>(n * (n + 1) / 2);
  for (float v : a) ASSERT_EQ(v, expected);
  std::vector<double> d = {0.5 * r, 1.0};
  ASSERT_TRUE(comm->allReduce(std::span<double>(d)).isOk());
  EXPECT_DOUBLE_EQ(d[0], 0.5 * n * (n - 1) / 2);
  EXPECT_DOUBLE_EQ(d[1], n);
  // Several in flight, waited out of order.
  std::vector<std::vector<float>> bufs(5, std::vector<float>(333, 1.0f));
  std::vector<CommHandle> handles;
  for (auto& b : bufs) handles.push_back(std::move(comm->startAllReduce(b).value()));
  for (int i = 4; i >= 0; --i) ASSERT_TRUE(comm->wait(handles[i]).isOk());
  for (auto& b : bufs) EXPECT_EQ(b[100], static_cast<float>(n));
}

TEST(CommunicatorTest, ReduceScatterAndAllGatherWithUnevenCounts) {
  auto comm = worldComm();
  const int n = comm->size(), r = comm->rank();
  std::vector<int> counts(n);
  for (int i = 0; i < n; ++i) counts[i] = i + 1;  // 1, 2, 3, 4
  const int total = std::accumulate(counts.begin(), counts.end(), 0);
  std::vector<float> send(total);
  for (int i = 0; i < total; ++i) send[i] = static_cast<float>(i * (r + 1));
  std::vector<float> mine(counts[r]);
  ASSERT_TRUE(comm->reduceScatter(send, mine, counts).isOk());
  int offset = 0;
  for (int i = 0; i < r; ++i) offset += counts[i];
  const float rankSum = static_cast<float>(n * (n + 1) / 2);
  for (int i = 0; i < counts[r]; ++i) EXPECT_EQ(mine[i], (offset + i) * rankSum);

  std::vector<float> gathered(total, -1.0f);
  auto h = comm->startAllGather(mine, gathered, counts);
  ASSERT_TRUE(h.isOk());
  ASSERT_TRUE(comm->wait(*h).isOk());
  for (int i = 0; i < total; ++i) EXPECT_EQ(gathered[i], i * rankSum);
  // In place: this rank's part already sits at its displacement.
  std::vector<float> inPlace(total, 0.0f);
  for (int i = 0; i < counts[r]; ++i) inPlace[offset + i] = static_cast<float>(r);
  ASSERT_TRUE(comm->allGather({}, inPlace, counts).isOk());
  int k = 0;
  for (int owner = 0; owner < n; ++owner) {
    for (int i = 0; i < counts[owner]; ++i) EXPECT_EQ(inPlace[k++], owner);
  }
}

TEST(CommunicatorTest, BroadcastAndARingOfSendsAndReceives) {
  auto comm = worldComm(ParallelDim::kPp);
  const int n = comm->size(), r = comm->rank();
  std::vector<float> b(64, r == 2 ? 7.0f : 0.0f);
  ASSERT_TRUE(comm->broadcast(b, 2).isOk());
  EXPECT_EQ(b[63], 7.0f);
  std::vector<float> out(100, static_cast<float>(r)), in(100, -1.0f);
  const int next = (r + 1) % n, prev = (r + n - 1) % n;
  auto recv = comm->startRecv(in, prev, 5);
  auto send = comm->startSend(out, next, 5);
  ASSERT_TRUE(recv.isOk() && send.isOk());
  ASSERT_TRUE(comm->wait(*send).isOk());
  ASSERT_TRUE(comm->wait(*recv).isOk());
  EXPECT_EQ(in[99], static_cast<float>(prev));
}

TEST(CommunicatorTest, EveryCallIsTracedWithKindDimBytesAndPeer) {
  auto comm = worldComm(ParallelDim::kDp);
  const int n = comm->size(), r = comm->rank();
  tracer::Recorder recorder(r, true);
  comm->setRecorder(&recorder);
  std::vector<float> a(256, 1.0f);
  CommTrace zero;
  zero.name = "grad_bucket";
  zero.step = 3;
  zero.dim = ParallelDim::kZero;
  ASSERT_TRUE(comm->allReduce(a, zero).isOk());
  std::vector<float> piece(64);
  ASSERT_TRUE(comm->reduceScatter(a, piece, evenCounts(256, n)).isOk());
  std::vector<float> out(10, 1.0f), in(10);
  if (r == 0) {
    ASSERT_TRUE(comm->send(out, 1, 9).isOk());
  }
  if (r == 1) {
    ASSERT_TRUE(comm->recv(in, 0, 9).isOk());
  }
  comm->setRecorder(nullptr);
  // Rank 1's receive may have waited for rank 0's send: that wait is its own
  // span (ReceiveWaitTest), left out here.
  auto events = recorder.drain();
  std::erase_if(events, [](const trace_model::Event& e) { return e.kind == EventKind::kWait; });
  ASSERT_EQ(events.size(), r <= 1 ? 3u : 2u);
  EXPECT_EQ(events[0].kind, EventKind::kAllReduce);
  EXPECT_EQ(events[0].name, "grad_bucket");
  EXPECT_EQ(events[0].lane, trace_model::Lane::kCommunication);
  EXPECT_EQ(events[0].dim, ParallelDim::kZero);
  EXPECT_EQ(events[0].bytes, 256 * 4);
  EXPECT_EQ(events[0].step, 3);
  EXPECT_LE(events[0].startNs, events[0].endNs);
  EXPECT_EQ(events[1].kind, EventKind::kReduceScatter);
  EXPECT_EQ(events[1].name, "reduce_scatter");
  EXPECT_EQ(events[1].dim, ParallelDim::kDp);
  EXPECT_EQ(events[1].bytes, 256 * 4);
  if (r <= 1) {
    EXPECT_EQ(events[2].kind, r == 0 ? EventKind::kSend : EventKind::kRecv);
    EXPECT_EQ(events[2].lane, trace_model::Lane::kPipeline);
    EXPECT_EQ(events[2].peer, r == 0 ? 1 : 0);
    EXPECT_EQ(events[2].bytes, 40);
  }
}

// Rank r sends r + d + 1 elements to rank d (0 to itself on rank 0 when
// `skipSelf`), valued 1000 r + 10 d + i: every part lands where its sender
// and position say.
struct AllToAllCase {
  std::vector<int> sendCounts, recvCounts;
  std::vector<float> send, recv;
  AllToAllCase(int n, int r, bool skipSelf) {
    auto count = [&](int from, int to) { return skipSelf && from == to ? 0 : from + to + 1; };
    for (int d = 0; d < n; ++d) {
      sendCounts.push_back(count(r, d));
      recvCounts.push_back(count(d, r));
      for (int i = 0; i < sendCounts.back(); ++i) send.push_back(1000.0f * r + 10.0f * d + i);
    }
    recv.assign(std::accumulate(recvCounts.begin(), recvCounts.end(), 0), -1.0f);
  }
  void expectReceived(int r) const {
    size_t k = 0;
    for (size_t s = 0; s < recvCounts.size(); ++s) {
      for (int i = 0; i < recvCounts[s]; ++i, ++k) {
        ASSERT_EQ(recv[k], 1000.0f * s + 10.0f * r + i) << "from rank " << s << " element " << i;
      }
    }
    EXPECT_EQ(k, recv.size());
  }
};

TEST(CommunicatorTest, AllToAllWithVariableSizesBlockingAndNotIsTracedWithItsBytes) {
  auto comm = worldComm(ParallelDim::kEp);
  const int n = comm->size(), r = comm->rank();
  tracer::Recorder recorder(r, true);
  comm->setRecorder(&recorder);
  AllToAllCase blocking(n, r, /*skipSelf=*/false);
  CommTrace dispatch;
  dispatch.name = "moe_dispatch";
  dispatch.step = 2;
  dispatch.microBatch = 1;
  ASSERT_TRUE(comm->allToAll(blocking.send, blocking.recv, blocking.sendCounts, blocking.recvCounts,
                             dispatch)
                  .isOk());
  blocking.expectReceived(r);
  // Two in flight, waited in reverse order; the second skips the own part.
  AllToAllCase first(n, r, false), second(n, r, true);
  auto h1 = comm->startAllToAll(first.send, first.recv, first.sendCounts, first.recvCounts);
  auto h2 = comm->startAllToAll(second.send, second.recv, second.sendCounts, second.recvCounts);
  ASSERT_TRUE(h1.isOk() && h2.isOk());
  ASSERT_TRUE(comm->wait(*h2).isOk());
  ASSERT_TRUE(comm->wait(*h1).isOk());
  first.expectReceived(r);
  second.expectReceived(r);
  comm->setRecorder(nullptr);

  auto events = recorder.drain();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].kind, EventKind::kAllToAll);
  EXPECT_EQ(events[0].name, "moe_dispatch");
  EXPECT_EQ(events[0].lane, trace_model::Lane::kCommunication);
  EXPECT_EQ(events[0].dim, ParallelDim::kEp);
  EXPECT_EQ(events[0].step, 2);
  EXPECT_EQ(events[0].microBatch, 1);
  EXPECT_EQ(events[0].peer, -1);
  // The whole send buffer: sum over d of (r + d + 1) floats.
  EXPECT_EQ(events[0].bytes, 4 * (n * (r + 1) + n * (n - 1) / 2));
  // Recorded at wait(): the second (no part to itself) first.
  EXPECT_EQ(events[1].name, "all_to_all");
  EXPECT_EQ(events[1].bytes, 4 * (n * (r + 1) + n * (n - 1) / 2 - (2 * r + 1)));
  EXPECT_EQ(events[2].bytes, events[0].bytes);
}

TEST(CommunicatorTest, AllToAllRefusesCountsThatDoNotFitItsBuffers) {
  auto comm = worldComm(ParallelDim::kEp);
  const int n = comm->size();
  std::vector<float> send(n), recv(n);
  const std::vector<int> ones(n, 1);
  auto s = comm->allToAll(send, recv, std::vector<int>(n, 2), ones);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("do not match the counts"), std::string::npos) << s.message();
  s = comm->allToAll(send, recv, ones, {n});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("counts (one per rank)"), std::string::npos) << s.message();
  std::vector<int> negative = ones;
  negative[0] = -1;
  negative[1] = 3;
  s = comm->allToAll(send, recv, negative, ones);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("< 0"), std::string::npos) << s.message();
}

TEST(CommunicatorTest, AGroupOfOneRankComputesButRecordsNoTraffic) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto self = MpiCommunicator::split(MPI_COMM_WORLD, rank, 0, ParallelDim::kDp);
  ASSERT_TRUE(self.isOk()) << self.status().toString();
  auto& comm = **self;
  ASSERT_EQ(comm.size(), 1);
  tracer::Recorder recorder(rank, true);
  comm.setRecorder(&recorder);
  std::vector<float> a(32, 2.0f), piece(32, 0.0f), gathered(32, 0.0f), exchanged(32, 0.0f);
  ASSERT_TRUE(comm.allReduce(a).isOk());
  ASSERT_TRUE(comm.reduceScatter(a, piece, {32}).isOk());
  ASSERT_TRUE(comm.allGather(piece, gathered, {32}).isOk());
  ASSERT_TRUE(comm.allToAll(gathered, exchanged, {32}, {32}).isOk());
  comm.setRecorder(nullptr);
  EXPECT_EQ(a[31], 2.0f);
  EXPECT_EQ(piece[0], 2.0f);
  EXPECT_EQ(gathered[17], 2.0f);
  EXPECT_EQ(exchanged[5], 2.0f);
  EXPECT_TRUE(recorder.drain().empty());
}

TEST(CommunicatorTest, BadArgumentsAreErrorsNotCrashes) {
  auto comm = worldComm();
  std::vector<float> a(8), b(2);
  auto s = comm->reduceScatter(a, b, {1, 2});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("4 counts"), std::string::npos) << s.message();
  s = comm->reduceScatter(a, b, {2, 2, 2, 3});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
  EXPECT_EQ(comm->broadcast(a, 9).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(comm->send(a, comm->rank(), 0).code(), StatusCode::kInvalidArgument);
  CommHandle empty;
  EXPECT_EQ(comm->wait(empty).code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace bubblescope::engine
