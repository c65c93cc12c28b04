// streamDimsOf() and GpuEventCollector on recorded activity: NCCL kernels of
// interleaved dp and tp collectives become communication events of their
// group's dimension; compute kernels carry none; a stream two groups claim is
// refused rather than guessed.
#include "tracer/stream_dims.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tracer/gpu_event_collector.h"

namespace bubblescope::tracer {
namespace {

using trace_model::EventKind;
using trace_model::ParallelDim;

// Engine stream handles are opaque pointers: three distinct addresses.
int gDpStream, gTpStream, gPpLink;

// A GPU activity source replaying recorded records, with CUPTI's ids of the
// engine's streams.
class RecordedSource final : public GpuActivitySource {
 public:
  std::vector<GpuActivity> records;
  std::vector<LaunchCall> launches;
  std::map<const void*, uint32_t> ids;
  std::vector<GpuActivity> take() override { return std::exchange(records, {}); }
  std::vector<LaunchCall> takeLaunches() override { return std::exchange(launches, {}); }
  std::vector<ClockPair> clockPairs(int count) override {
    std::vector<ClockPair> pairs;
    for (int i = 0; i < count; ++i) {
      pairs.push_back({static_cast<uint64_t>(1000 + 100 * (next_ + i)), 7000 + 100 * (next_ + i)});
    }
    next_ += count;
    return pairs;
  }
  Result<uint32_t> streamIdOf(const void* stream) override {
    auto it = ids.find(stream);
    if (it == ids.end()) return Status::notFound("no such stream");
    return it->second;
  }

 private:
  int next_ = 0;
};

std::string mangled(const std::string& name) {
  return "_Z" + std::to_string(name.size()) + name + "19ncclDevKernelArgs4K";
}

GpuActivity kernel(uint32_t stream, uint32_t correlation, uint64_t start, std::string name) {
  return {GpuActivityKind::kKernel, start, start + 50, 0, stream, correlation, std::move(name), 0};
}

TEST(StreamDimsTest, EachGroupsStreamsCarryItsDimension) {
  RecordedSource source;
  source.ids = {{&gDpStream, 21}, {&gTpStream, 22}, {&gPpLink, 23}};
  const std::vector<DeviceStream> streams = {
      {&gDpStream, ParallelDim::kDp},
      {&gTpStream, ParallelDim::kTp},
      {&gPpLink, ParallelDim::kPp},
      {&gDpStream, ParallelDim::kDp}};  // listed twice by one group: one entry
  auto dims = streamDimsOf(streams, [&](const void* s) { return source.streamIdOf(s); });
  ASSERT_TRUE(dims.isOk()) << dims.status().message();
  EXPECT_EQ(*dims,
            (StreamDims{{21, ParallelDim::kDp}, {22, ParallelDim::kTp}, {23, ParallelDim::kPp}}));
}

TEST(StreamDimsTest, AStreamTwoGroupsClaimIsRefused) {
  RecordedSource source;
  source.ids = {{&gDpStream, 21}, {&gTpStream, 21}};  // both map to one CUPTI stream
  const std::vector<DeviceStream> streams = {{&gDpStream, ParallelDim::kDp},
                                             {&gTpStream, ParallelDim::kTp}};
  auto dims = streamDimsOf(streams, [&](const void* s) { return source.streamIdOf(s); });
  ASSERT_FALSE(dims.isOk());
  EXPECT_NE(dims.status().message().find("claimed by the dp and the tp groups"), std::string::npos)
      << dims.status().message();
}

TEST(StreamDimsTest, AnUnknownStreamSaysWhichGroup) {
  RecordedSource source;
  const std::vector<DeviceStream> streams = {{&gPpLink, ParallelDim::kPp}};
  auto dims = streamDimsOf(streams, [&](const void* s) { return source.streamIdOf(s); });
  ASSERT_FALSE(dims.isOk());
  EXPECT_NE(dims.status().message().find("pp group's stream"), std::string::npos)
      << dims.status().message();
}

// Interleaved dp and tp collectives (as a tp-sharded backward with an
// overlapped dp bucket all-reduce runs them), a pipeline send and a compute
// kernel, recorded as CUPTI hands them over: each NCCL kernel is its
// collective on its stream's dimension, whatever the order of the records.
TEST(StreamDimsTest, RecordedNcclKernelsBecomeCommunicationOfTheirDimension) {
  RecordedSource source;
  source.ids = {{&gDpStream, 21}, {&gTpStream, 22}, {&gPpLink, 23}};
  auto dims = streamDimsOf(std::vector<DeviceStream>{{&gDpStream, ParallelDim::kDp},
                                                     {&gTpStream, ParallelDim::kTp},
                                                     {&gPpLink, ParallelDim::kPp}},
                           [&](const void* s) { return source.streamIdOf(s); });
  ASSERT_TRUE(dims.isOk());
  source.records = {
      kernel(22, 1, 2000, mangled("ncclDevKernel_AllReduce_Sum_f32_RING_LL")),
      kernel(21, 2, 2010, mangled("ncclDevKernel_ReduceScatter_Sum_bf16_RING_SIMPLE")),
      kernel(7, 3, 2020, "_Z18layernorm_backwardPfPKf"),
      kernel(22, 4, 2030, mangled("ncclDevKernel_AllGather_RING_LL")),
      kernel(21, 5, 2040, mangled("ncclDevKernel_AllReduce_Sum_f32_RING_LL")),
      kernel(23, 6, 2050, mangled("ncclDevKernel_SendRecv")),
      kernel(21, 7, 2060, mangled("ncclDevKernel_Broadcast_RING_LL")),
  };
  source.launches = {
      {.correlationId = 1, .startNs = 6000, .endNs = 6010, .name = "cuLaunchKernelEx"}};
  GpuEventCollector collector(source, /*rank=*/2);
  std::vector<trace_model::Event> events;
  ASSERT_TRUE(collector.collect(*dims, events).isOk());
  ASSERT_EQ(events.size(), 8u);
  EXPECT_EQ(events[0].lane, trace_model::Lane::kCudaApi);
  EXPECT_EQ(events[0].correlationId, 1);
  struct Expected {
    EventKind kind;
    ParallelDim dim;
    int32_t stream;
  };
  const Expected expected[] = {
      {EventKind::kAllReduce, ParallelDim::kTp, 22},
      {EventKind::kReduceScatter, ParallelDim::kDp, 21},
      {EventKind::kKernel, ParallelDim::kNone, 7},
      {EventKind::kAllGather, ParallelDim::kTp, 22},
      {EventKind::kAllReduce, ParallelDim::kDp, 21},
      {EventKind::kSend, ParallelDim::kPp, 23},
      {EventKind::kBroadcast, ParallelDim::kDp, 21},
  };
  for (size_t i = 0; i < std::size(expected); ++i) {
    const trace_model::Event& e = events[i + 1];
    EXPECT_EQ(e.kind, expected[i].kind) << i;
    EXPECT_EQ(e.dim, expected[i].dim) << i;
    EXPECT_EQ(e.rank, 2);
    EXPECT_EQ(e.lane, trace_model::gpuStreamLane(expected[i].stream)) << i;
  }
  // The GPU clock maps onto the host clock: GPU 1000 is host 7000, rate 1.
  EXPECT_EQ(events[1].startNs, 8000);
  EXPECT_EQ(events[1].endNs, 8050);

  // Mutation: the same records with the dp and tp streams' dimensions
  // swapped are caught by the expectations above (the tagging is by stream,
  // not by the order the records come in).
  StreamDims swapped = *dims;
  std::swap(swapped[21], swapped[22]);
  source.records = {kernel(22, 8, 3000, mangled("ncclDevKernel_AllReduce_Sum_f32_RING_LL"))};
  std::vector<trace_model::Event> wrong;
  ASSERT_TRUE(collector.collect(swapped, wrong).isOk());
  ASSERT_EQ(wrong.size(), 1u);
  EXPECT_NE(wrong[0].dim, ParallelDim::kTp);
}

TEST(StreamDimsTest, AClockMapThatCannotBeFittedFailsTheBatchNotTheLaunches) {
  class Backwards final : public GpuActivitySource {
   public:
    std::vector<GpuActivity> take() override { return {kernel(1, 1, 10, "k")}; }
    std::vector<LaunchCall> takeLaunches() override {
      return {{.correlationId = 1, .name = "cudaLaunchKernel"}};
    }
    std::vector<ClockPair> clockPairs(int) override { return {{1000, 9000}, {2000, 8000}}; }
  } source;
  GpuEventCollector collector(source, 0);
  std::vector<trace_model::Event> events;
  const Status s = collector.collect({}, events);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("rank 0"), std::string::npos) << s.message();
  ASSERT_EQ(events.size(), 1u);  // the launch
  EXPECT_EQ(events[0].lane, trace_model::Lane::kCudaApi);
}

}  // namespace
}  // namespace bubblescope::tracer
