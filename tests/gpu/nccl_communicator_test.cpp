// NcclCommunicator and the host-staged fallback on device buffers, on 2 MPI
// ranks (label gpu: skips without a GPU). Each rank uses GPU rank % count:
// on a one-GPU machine both ranks share it, so makeDeviceCommunicator must
// pick host staging (NCCL would refuse); with two GPUs it must pick NCCL.
#include "engine/cuda/nccl_communicator.h"

#include <gtest/gtest.h>

#include <deque>
#include <numeric>

#include "engine/cuda/cuda_backend.h"
#include "engine/cuda/cuda_context.h"

namespace bubblescope::engine {
namespace {

using trace_model::ParallelDim;

class NcclTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::haveGpu()) GTEST_SKIP() << "no GPU";
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    gpus_ = *cuda::cudaDeviceCount();
    auto b = cuda::CudaBackend::create(rank_ % gpus_);
    ASSERT_TRUE(b.isOk()) << b.status().message();
    backend_ = std::move(*b);
  }
  void TearDown() override { tensors_.clear(); }

  std::unique_ptr<MpiCommunicator> split(int color, ParallelDim dim = ParallelDim::kDp) {
    auto c = MpiCommunicator::split(MPI_COMM_WORLD, color, rank_, dim);
    EXPECT_TRUE(c.isOk()) << c.status().message();
    return std::move(c).value();
  }
  // A device tensor of n elements; value queued with fill() on the compute
  // stream (so a collective that did not wait for compute would see zeros).
  Tensor& device(int64_t n, float value) {
    tensors_.push_back(backend_->newTensor({n}, MemoryCategory::kOther));
    backend_->fill(tensors_.back().data(), value, n);
    return tensors_.back();
  }
  std::vector<float> host(const Tensor& t) {
    auto h = backend_->download(t);
    EXPECT_TRUE(h.isOk()) << h.status().message();
    return h.isOk() ? *h : std::vector<float>{};
  }
  std::span<float> span(Tensor& t) { return {t.data(), static_cast<size_t>(t.numel())}; }

  int rank_ = 0, size_ = 1, gpus_ = 0;
  std::unique_ptr<cuda::CudaBackend> backend_;
  std::deque<Tensor> tensors_;
};

TEST_F(NcclTest, OneRankAllReduceRunsAfterComputeAndIsTraced) {
  auto group = split(rank_);  // a group of one: NCCL accepts it on any GPU
  auto nccl = NcclCommunicator::create(*group, backend_->stream(), /*pointToPoint=*/false);
  ASSERT_TRUE(nccl.isOk()) << nccl.status().message();
  tracer::Recorder recorder(rank_, true);
  (*nccl)->setRecorder(&recorder);
  Tensor& t = device(1 << 20, 2.5f);
  auto h = (*nccl)->startAllReduce(span(t));
  ASSERT_TRUE(h.isOk()) << h.status().message();
  ASSERT_TRUE((*nccl)->wait(*h).isOk());
  EXPECT_EQ(host(t), std::vector<float>(1 << 20, 2.5f));
  (*nccl)->setRecorder(nullptr);
  const auto events = recorder.drain();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, trace_model::EventKind::kAllReduce);
  EXPECT_EQ(events[0].dim, ParallelDim::kDp);
  EXPECT_EQ(events[0].bytes, 4 << 20);
}

TEST_F(NcclTest, TheDeviceCommunicatorOfTheWorldSumsGathersAndSends) {
  auto world = split(0, ParallelDim::kPp);
  auto shared = ranksShareAGpu(*world);
  ASSERT_TRUE(shared.isOk()) << shared.status().message();
  EXPECT_EQ(*shared, gpus_ < size_);
  auto made = makeDeviceCommunicator(std::move(world), backend_->stream(), /*pointToPoint=*/true);
  ASSERT_TRUE(made.isOk()) << made.status().message();
  Communicator& comm = **made;
  EXPECT_EQ(dynamic_cast<HostStagedCommunicator*>(&comm) != nullptr, gpus_ < size_);
  const int n = comm.size(), r = comm.rank();

  Tensor& a = device(1000, static_cast<float>(r + 1));
  ASSERT_TRUE(comm.allReduce(span(a)).isOk());
  EXPECT_EQ(host(a), std::vector<float>(1000, static_cast<float>(n * (n + 1) / 2)));

  std::vector<int> counts(n);
  for (int i = 0; i < n; ++i) counts[i] = 3 * i + 1;  // uneven
  const int total = std::accumulate(counts.begin(), counts.end(), 0);
  Tensor& send = device(total, static_cast<float>(r + 1));
  Tensor& mine = device(counts[r], 0.0f);
  ASSERT_TRUE(comm.reduceScatter(span(send), span(mine), counts).isOk());
  EXPECT_EQ(host(mine), std::vector<float>(counts[r], static_cast<float>(n * (n + 1) / 2)));
  Tensor& gathered = device(total, -1.0f);
  backend_->fill(mine.data(), static_cast<float>(r), counts[r]);
  ASSERT_TRUE(comm.allGather(span(mine), span(gathered), counts).isOk());
  const auto g = host(gathered);
  int k = 0;
  for (int owner = 0; owner < n; ++owner) {
    for (int i = 0; i < counts[owner]; ++i) ASSERT_EQ(g[k++], static_cast<float>(owner));
  }

  Tensor& b = device(64, r == 1 ? 7.0f : 0.0f);
  ASSERT_TRUE(comm.broadcast(span(b), 1).isOk());
  EXPECT_EQ(host(b), std::vector<float>(64, 7.0f));

  Tensor& out = device(100, static_cast<float>(r));
  Tensor& in = device(100, -1.0f);
  const int next = (r + 1) % n, prev = (r + n - 1) % n;
  auto recv = comm.startRecv(span(in), prev, 5);
  ASSERT_TRUE(recv.isOk());
  auto sent = comm.startSend(span(out), next, 5);
  ASSERT_TRUE(sent.isOk());
  ASSERT_TRUE(comm.wait(*recv).isOk());
  ASSERT_TRUE(comm.wait(*sent).isOk());
  EXPECT_EQ(host(in), std::vector<float>(100, static_cast<float>(prev)));
}

TEST_F(NcclTest, HostStagingWithTheCudaCopier) {
  auto copier = CudaDeviceCopier::create(backend_->stream());
  ASSERT_TRUE(copier.isOk()) << copier.status().message();
  // Its copies run on a stream of their own, which the communicator names.
  ASSERT_EQ((*copier)->streams().size(), 1u);
  const void* copyStream = (*copier)->streams()[0];
  EXPECT_NE(copyStream, static_cast<const void*>(backend_->stream()));
  HostStagedCommunicator comm(split(0), std::move(*copier));
  EXPECT_EQ(comm.deviceStreams(), std::vector<const void*>{copyStream});
  const int n = comm.size(), r = comm.rank();
  Tensor& a = device(4099, static_cast<float>(r + 1));
  auto h = comm.startAllReduce(span(a));
  ASSERT_TRUE(h.isOk()) << h.status().message();
  ASSERT_TRUE(comm.wait(*h).isOk());
  EXPECT_EQ(host(a), std::vector<float>(4099, static_cast<float>(n * (n + 1) / 2)));
}

}  // namespace
}  // namespace bubblescope::engine
