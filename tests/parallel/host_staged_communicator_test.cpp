// HostStagedCommunicator on 4 ranks with a fake "device": device buffers are
// host vectors the fake copier knows, so the test sees every copy (which
// buffer, which direction, how many bytes), and the inner MPI communicator
// must only ever get the host copies (a device pointer reaching MPI would
// leave the copied-back result wrong). The CUDA copier is tested on a GPU
// (tests/gpu/nccl_communicator_test.cpp).
#include "engine/parallel/host_staged_communicator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "engine/parallel/mpi_communicator.h"

namespace bubblescope::engine {
namespace {

using trace_model::EventKind;
using trace_model::ParallelDim;

// Copies with memcpy and records them; fails a copy whose "device" side is
// not a registered device buffer.
class FakeCopier final : public DeviceCopier {
 public:
  struct Log {
    std::vector<std::pair<const void*, size_t>> toHost, toDevice;
    std::vector<std::pair<const std::byte*, size_t>> device;  // registered buffers
    int64_t toHostBytes = 0, toDeviceBytes = 0;
  };
  explicit FakeCopier(Log* log) : log_(log) {}
  Status toHost(void* host, const void* device, size_t bytes) override {
    BS_RETURN_IF_ERROR(check(device, bytes));
    std::memcpy(host, device, bytes);
    log_->toHostBytes += static_cast<int64_t>(bytes);
    return Status::ok();
  }
  Status toDevice(void* device, const void* host, size_t bytes) override {
    BS_RETURN_IF_ERROR(check(device, bytes));
    std::memcpy(device, host, bytes);
    log_->toDeviceBytes += static_cast<int64_t>(bytes);
    return Status::ok();
  }

 private:
  Status check(const void* p, size_t bytes) const {
    const auto* b = static_cast<const std::byte*>(p);
    for (const auto& [start, size] : log_->device) {
      if (b >= start && b + bytes <= start + size) return Status::ok();
    }
    return Status::internal("copy touches memory that is not a device buffer");
  }
  Log* log_;
};

struct Staged {
  std::unique_ptr<HostStagedCommunicator> comm;
  FakeCopier::Log log;
  // A "device" buffer: registered with the copier.
  std::vector<float>& device(std::vector<float>& v) {
    log.device.emplace_back(reinterpret_cast<const std::byte*>(v.data()), v.size() * sizeof(float));
    return v;
  }
};

std::unique_ptr<Staged> staged(ParallelDim dim = ParallelDim::kDp) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto inner = MpiCommunicator::split(MPI_COMM_WORLD, 0, rank, dim);
  EXPECT_TRUE(inner.isOk()) << inner.status().toString();
  auto s = std::make_unique<Staged>();
  s->comm = std::make_unique<HostStagedCommunicator>(std::move(inner).value(),
                                                     std::make_unique<FakeCopier>(&s->log));
  return s;
}

TEST(HostStagedCommunicatorTest, TakesTheGroupOfItsInnerCommunicator) {
  auto s = staged(ParallelDim::kPp);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT_EQ(s->comm->rank(), rank);
  EXPECT_EQ(s->comm->size(), size);
  EXPECT_EQ(s->comm->dim(), ParallelDim::kPp);
  EXPECT_EQ(s->comm->worldRankOf(size - 1), size - 1);
}

TEST(HostStagedCommunicatorTest, AllReduceStagesInAndOutBlockingAndNot) {
  auto s = staged();
  const int n = s->comm->size(), r = s->comm->rank();
  std::vector<float> a(1000, static_cast<float>(r + 1));
  ASSERT_TRUE(s->comm->allReduce(s->device(a)).isOk());
  for (float v : a) ASSERT_EQ(v, static_cast<float>(n * (n + 1) / 2));
  EXPECT_EQ(s->log.toHostBytes, 4000);
  EXPECT_EQ(s->log.toDeviceBytes, 4000);
  // Several in flight, waited out of order: each keeps its own host copy.
  std::vector<std::vector<float>> bufs(4, std::vector<float>(333));
  std::vector<CommHandle> handles;
  for (size_t i = 0; i < bufs.size(); ++i) {
    std::fill(bufs[i].begin(), bufs[i].end(), static_cast<float>(i));
    handles.push_back(std::move(s->comm->startAllReduce(s->device(bufs[i])).value()));
  }
  for (int i = 3; i >= 0; --i) ASSERT_TRUE(s->comm->wait(handles[i]).isOk());
  for (size_t i = 0; i < bufs.size(); ++i) EXPECT_EQ(bufs[i][100], static_cast<float>(i * n));
}

TEST(HostStagedCommunicatorTest, ReduceScatterAndAllGatherCopyOnlyWhatTheyUse) {
  auto s = staged();
  const int n = s->comm->size(), r = s->comm->rank();
  std::vector<int> counts(n);
  for (int i = 0; i < n; ++i) counts[i] = i + 1;
  const int total = std::accumulate(counts.begin(), counts.end(), 0);
  int offset = 0;
  for (int i = 0; i < r; ++i) offset += counts[i];
  std::vector<float> send(total), mine(counts[r]);
  for (int i = 0; i < total; ++i) send[i] = static_cast<float>(i * (r + 1));
  ASSERT_TRUE(s->comm->reduceScatter(s->device(send), s->device(mine), counts).isOk());
  const float rankSum = static_cast<float>(n * (n + 1) / 2);
  for (int i = 0; i < counts[r]; ++i) EXPECT_EQ(mine[i], (offset + i) * rankSum);
  EXPECT_EQ(s->log.toHostBytes, total * 4);
  EXPECT_EQ(s->log.toDeviceBytes, counts[r] * 4);

  std::vector<float> gathered(total, -1.0f);
  auto h = s->comm->startAllGather(mine, s->device(gathered), counts);
  ASSERT_TRUE(h.isOk());
  ASSERT_TRUE(s->comm->wait(*h).isOk());
  for (int i = 0; i < total; ++i) EXPECT_EQ(gathered[i], i * rankSum);
  // In place: only this rank's part goes to the host.
  std::vector<float> inPlace(total, -1.0f);
  for (int i = 0; i < counts[r]; ++i) inPlace[offset + i] = static_cast<float>(r);
  const int64_t before = s->log.toHostBytes;
  ASSERT_TRUE(s->comm->allGather({}, s->device(inPlace), counts).isOk());
  EXPECT_EQ(s->log.toHostBytes - before, counts[r] * 4);
  int k = 0;
  for (int owner = 0; owner < n; ++owner) {
    for (int i = 0; i < counts[owner]; ++i) EXPECT_EQ(inPlace[k++], owner);
  }
}

TEST(HostStagedCommunicatorTest, AllToAllStagesItsSendBufferAndCopiesBackWhatItReceived) {
  auto s = staged(ParallelDim::kEp);
  const int n = s->comm->size(), r = s->comm->rank();
  // Rank r sends d + 1 elements valued 100 r + d to rank d.
  std::vector<int> sendCounts(n), recvCounts(n, r + 1);
  std::vector<float> send;
  for (int d = 0; d < n; ++d) {
    sendCounts[d] = d + 1;
    send.insert(send.end(), d + 1, 100.0f * r + d);
  }
  std::vector<float> recv(static_cast<size_t>(n * (r + 1)), -1.0f);
  auto h = s->comm->startAllToAll(s->device(send), s->device(recv), sendCounts, recvCounts);
  ASSERT_TRUE(h.isOk()) << h.status().toString();
  ASSERT_TRUE(s->comm->wait(*h).isOk());
  for (int from = 0; from < n; ++from) {
    for (int i = 0; i <= r; ++i) EXPECT_EQ(recv[from * (r + 1) + i], 100.0f * from + r);
  }
  EXPECT_EQ(s->log.toHostBytes, static_cast<int64_t>(send.size()) * 4);
  EXPECT_EQ(s->log.toDeviceBytes, static_cast<int64_t>(recv.size()) * 4);
}

TEST(HostStagedCommunicatorTest, BroadcastSendsReceivesAndTheirSpans) {
  auto s = staged(ParallelDim::kPp);
  const int n = s->comm->size(), r = s->comm->rank();
  tracer::Recorder recorder(r, true);
  s->comm->setRecorder(&recorder);
  std::vector<float> b(64, r == 2 ? 7.0f : 0.0f);
  ASSERT_TRUE(s->comm->broadcast(s->device(b), 2).isOk());
  EXPECT_EQ(b[63], 7.0f);
  // The root only stages in, the others only copy back.
  EXPECT_EQ(s->log.toHostBytes, r == 2 ? 256 : 0);
  EXPECT_EQ(s->log.toDeviceBytes, r == 2 ? 0 : 256);

  std::vector<float> out(100, static_cast<float>(r)), in(100, -1.0f);
  const int next = (r + 1) % n, prev = (r + n - 1) % n;
  auto recv = s->comm->startRecv(s->device(in), prev, 5);
  ASSERT_TRUE(recv.isOk());
  ASSERT_TRUE(s->comm->send(s->device(out), next, 5).isOk());
  ASSERT_TRUE(s->comm->wait(*recv).isOk());
  EXPECT_EQ(in[99], static_cast<float>(prev));
  s->comm->setRecorder(nullptr);
  // A rank that reached the pp broadcast before the others may have waited
  // for them: that wait is its own span (ReceiveWaitTest), left out here.
  auto events = recorder.drain();
  std::erase_if(events, [](const trace_model::Event& e) { return e.kind == EventKind::kWait; });
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].kind, EventKind::kBroadcast);
  EXPECT_EQ(events[0].dim, ParallelDim::kPp);
  EXPECT_EQ(events[0].bytes, 256);
  EXPECT_EQ(events[1].kind, EventKind::kSend);
  EXPECT_EQ(events[1].peer, next);
  EXPECT_EQ(events[2].kind, EventKind::kRecv);
  EXPECT_EQ(events[2].peer, prev);
  EXPECT_EQ(events[2].bytes, 400);
  EXPECT_EQ(events[2].lane, trace_model::Lane::kPipeline);
}

TEST(HostStagedCommunicatorTest, AFailedCopyIsAnError) {
  auto s = staged();
  std::vector<float> unregistered(8, 1.0f);
  const Status status = s->comm->allReduce(unregistered);  // no rank reaches MPI
  EXPECT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("not a device buffer"), std::string::npos);
}

}  // namespace
}  // namespace bubblescope::engine
