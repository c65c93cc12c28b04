#include "tracer/gpu_activity.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "tracer/gpu_event_collector.h"

namespace bubblescope::tracer {
namespace {

TEST(GpuActivityTest, ClockMapFitsOffsetAndRate) {
  // GPU clock runs 20 ppm fast and starts 7 s after the host's epoch.
  std::vector<ClockPair> pairs;
  for (int i = 0; i < 10; ++i) {
    const int64_t host = 1000000000LL + i * 100000000LL;
    const double gpu = 8e9 + (host - 1e9) * (1.0 + 2e-5) + (i % 2 ? 40 : -40);  // ±40 ns jitter
    pairs.push_back({static_cast<uint64_t>(gpu), host});
  }
  auto map = fitGpuClockMap(pairs);
  ASSERT_TRUE(map.isOk()) << map.status().message();
  EXPECT_NEAR(map->slope, 1.0 / (1.0 + 2e-5), 1e-7);  // jitter-limited; 1.0 is 2e-5 off
  for (const ClockPair& p : pairs) {
    EXPECT_NEAR(static_cast<double>(map->toHost(p.gpuNs)), static_cast<double>(p.hostNs), 60.0);
  }
  // Extrapolates a second past the last pair within a microsecond.
  const uint64_t later = pairs.back().gpuNs + static_cast<uint64_t>(1e9 * (1.0 + 2e-5));
  EXPECT_NEAR(static_cast<double>(map->toHost(later)), pairs.back().hostNs + 1e9, 1000.0);
}

TEST(GpuActivityTest, ClockMapEdgeCases) {
  EXPECT_FALSE(fitGpuClockMap({}).isOk());
  ClockPair one{500, 2000};
  auto map = fitGpuClockMap(std::span<const ClockPair>(&one, 1));
  ASSERT_TRUE(map.isOk());
  EXPECT_EQ(map->toHost(600), 2100);
  std::vector<ClockPair> backwards = {{1000, 0}, {2000, -1000}};
  EXPECT_FALSE(fitGpuClockMap(backwards).isOk());
}

TEST(GpuActivityTest, NcclKernelsAreClassifiedByName) {
  EXPECT_EQ(kindOfKernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL"),
            trace_model::EventKind::kAllReduce);
  EXPECT_EQ(kindOfKernel("ncclDevKernel_ReduceScatter_Sum_bf16_RING_SIMPLE"),
            trace_model::EventKind::kReduceScatter);
  EXPECT_EQ(kindOfKernel("ncclKernel_AllGather_RING_LL_Sum_int8_t"),
            trace_model::EventKind::kAllGather);
  EXPECT_EQ(kindOfKernel("ncclDevKernel_Broadcast_RING_LL"), trace_model::EventKind::kBroadcast);
  EXPECT_EQ(kindOfKernel("ncclDevKernel_Reduce_Sum_f32_RING_LL"), trace_model::EventKind::kReduce);
  EXPECT_EQ(kindOfKernel("ncclDevKernel_SendRecv"), trace_model::EventKind::kSend);
  EXPECT_EQ(kindOfKernel("ampere_sgemm_128x64_tn"), trace_model::EventKind::kKernel);
  EXPECT_EQ(kindOfKernel("layernorm_forward_kernel"), trace_model::EventKind::kKernel);
}

// CUPTI reports NCCL's kernels by their mangled C++ names; the collective
// is read from the function's own name inside.
TEST(GpuActivityTest, MangledNcclKernelNamesGiveTheirCollective) {
  auto mangled = [](const std::string& name) {
    return "_Z" + std::to_string(name.size()) + name + "19ncclDevKernelArgs4K";
  };
  EXPECT_EQ(kindOfKernel(mangled("ncclDevKernel_AllReduce_Sum_f32_RING_LL")),
            trace_model::EventKind::kAllReduce);
  EXPECT_EQ(kindOfKernel(mangled("ncclDevKernel_ReduceScatter_Sum_bf16_RING_SIMPLE")),
            trace_model::EventKind::kReduceScatter);
  EXPECT_EQ(kindOfKernel(mangled("ncclDevKernel_AllGather_RING_LL")),
            trace_model::EventKind::kAllGather);
  EXPECT_EQ(kindOfKernel(mangled("ncclDevKernel_Broadcast_RING_LL")),
            trace_model::EventKind::kBroadcast);
  EXPECT_EQ(kindOfKernel(mangled("ncclDevKernel_SendRecv")), trace_model::EventKind::kSend);
  EXPECT_EQ(kindOfKernel("_ZL" + mangled("ncclDevKernel_Recv").substr(2)),
            trace_model::EventKind::kRecv);
  // Not NCCL's: the function's own name does not start with nccl, even when
  // nccl appears in it or in its arguments.
  EXPECT_EQ(kindOfKernel("_Z10my_nccl_opv"), trace_model::EventKind::kKernel);
  EXPECT_EQ(kindOfKernel("_Z6kernelP13ncclAllReduce"), trace_model::EventKind::kKernel);
  // Malformed lengths never read past the name.
  EXPECT_EQ(kindOfKernel("_Z999ncclDevKernel_AllReduce"), trace_model::EventKind::kKernel);
  EXPECT_EQ(kindOfKernel("_Z"), trace_model::EventKind::kKernel);
  EXPECT_EQ(kindOfKernel("_Zx"), trace_model::EventKind::kKernel);
}

TEST(GpuActivityTest, RecordsBecomeEventsOnTheirStreamLane) {
  GpuClockMap map;
  map.gpuZero = 1000;
  map.hostAtZero = 50000;
  StreamDims dims = {{13, trace_model::ParallelDim::kDp}, {14, trace_model::ParallelDim::kTp}};

  GpuActivity allReduce{GpuActivityKind::kKernel,
                        2000,
                        5000,
                        0,
                        13,
                        99,
                        "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                        0};
  trace_model::Event e = toEvent(allReduce, map, 3, dims);
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.kind, trace_model::EventKind::kAllReduce);
  EXPECT_EQ(e.lane, trace_model::gpuStreamLane(13));
  EXPECT_EQ(e.dim, trace_model::ParallelDim::kDp);
  EXPECT_EQ(e.startNs, 51000);
  EXPECT_EQ(e.endNs, 54000);
  EXPECT_EQ(trace_model::categoryOf(e.kind), trace_model::EventCategory::kCommunication);

  GpuActivity gemm{GpuActivityKind::kKernel, 1000, 1500, 0, 13, 100, "sgemm_kernel", 0};
  trace_model::Event g = toEvent(gemm, map, 3, dims);
  EXPECT_EQ(g.kind, trace_model::EventKind::kKernel);
  EXPECT_EQ(g.dim, trace_model::ParallelDim::kNone);  // compute carries no dimension
  EXPECT_EQ(trace_model::categoryOf(g.kind), trace_model::EventCategory::kCompute);

  GpuActivity copy{GpuActivityKind::kMemcpy, 1000, 1100, 0, 7, 101, "", 1 << 20};
  trace_model::Event c = toEvent(copy, map, 0, dims);
  EXPECT_EQ(c.kind, trace_model::EventKind::kMemcpy);
  EXPECT_EQ(c.bytes, 1 << 20);
  EXPECT_EQ(c.dim, trace_model::ParallelDim::kNone);  // stream 7 carries no collectives
}

// A host-staged group's copies run on its copier's own stream
// (engine/cuda/nccl_communicator.h: CudaDeviceCopier), which the group names
// as its device stream: they are that group's traffic, with its dimension,
// like the collective they stage; a copy on any other stream has none.
TEST(GpuActivityTest, AStagedGroupsCopiesTakeTheDimensionOfItsStream) {
  const GpuClockMap map{0, 0.0, 1.0};
  const StreamDims dims{{21, trace_model::ParallelDim::kPp}, {22, trace_model::ParallelDim::kZero}};
  for (const auto& [stream, dim] : dims) {
    const GpuActivity copy{GpuActivityKind::kMemcpy, 100, 300, 0, stream, 7, "", 4096};
    const trace_model::Event e = toEvent(copy, map, 1, dims);
    EXPECT_EQ(e.kind, trace_model::EventKind::kMemcpy);
    EXPECT_EQ(e.dim, dim) << "stream " << stream;
    EXPECT_EQ(e.lane, trace_model::gpuStreamLane(static_cast<int32_t>(stream)));
    EXPECT_EQ(e.bytes, 4096);
  }
  const GpuActivity elsewhere{GpuActivityKind::kMemcpy, 100, 300, 0, 23, 8, "", 4096};
  EXPECT_EQ(toEvent(elsewhere, map, 1, dims).dim, trace_model::ParallelDim::kNone);
}

// The map's error bound, from pairs read as CUPTI's collector reads them:
// the GPU timestamp taken at a true host time t somewhere inside the host
// reads [before, after] (here unevenly placed, as a preempted read is), the
// pair's host time their middle. The bound holds at every pair and between
// them (both clocks run at constant rates here, the GPU's 10 ppm fast), it
// counts each pair's read window, and exact pairs give (almost) none.
TEST(GpuActivityTest, TheClockMapsErrorBoundHoldsAtAndBetweenItsPairs) {
  auto gpuAt = [](int64_t host) {
    return static_cast<uint64_t>(7e9 + static_cast<double>(host) +
                                 static_cast<double>(host - 2000000000LL) * 1e-5);
  };
  // (true host time, time the read started before it, time it ended after it)
  const int64_t reads[][3] = {{2000000000, 100, 700}, {2000400000, 900, 50},
                              {2100000000, 30, 40},   {2500000000, 400, 400},
                              {2900000000, 10, 1200}, {3000000000, 250, 80}};
  std::vector<ClockPair> pairs;
  int64_t largestHalfRead = 0;
  for (const auto& [t, early, late] : reads) {
    const int64_t before = t - early, after = t + late;
    pairs.push_back({gpuAt(t), before + (after - before) / 2, after - before});
    largestHalfRead = std::max(largestHalfRead, (after - before) / 2);
  }
  auto map = fitGpuClockMap(pairs);
  ASSERT_TRUE(map.isOk()) << map.status().message();
  EXPECT_GE(map->errorBoundNs, largestHalfRead);  // a pair's read window is part of it
  int64_t worst = 0;
  for (int64_t t = 2000000000; t <= 3000000000; t += 1000000) {
    worst = std::max<int64_t>(worst, std::llabs(map->toHost(gpuAt(t)) - t));
  }
  for (const auto& r : reads)
    worst = std::max<int64_t>(worst, std::llabs(map->toHost(gpuAt(r[0])) - r[0]));
  // toHost truncates to whole ns: 1 ns of rounding on top of the bound.
  EXPECT_LE(worst, map->errorBoundNs + 1) << "bound " << map->errorBoundNs;
  EXPECT_GT(worst, 0);  // the check is not void: the reads did move the fit

  std::vector<ClockPair> exact;
  for (const auto& r : reads) exact.push_back({gpuAt(r[0]), r[0], 0});
  auto tight = fitGpuClockMap(exact);
  ASSERT_TRUE(tight.isOk());
  EXPECT_LE(tight->errorBoundNs, 2);  // only the GPU clock's ns rounding is left
}

// The collector keeps the largest bound of the maps its records were
// converted with: -1 before any, then never less than the latest map's.
TEST(GpuActivityTest, TheCollectorKeepsTheLargestBoundOfItsMaps) {
  struct Source final : GpuActivitySource {
    std::vector<GpuActivity> records;
    std::vector<ClockPair> next;
    std::vector<GpuActivity> take() override { return std::exchange(records, {}); }
    std::vector<ClockPair> clockPairs(int) override { return std::exchange(next, {}); }
  } source;
  GpuEventCollector collector(source, 0);
  std::vector<trace_model::Event> out;
  EXPECT_EQ(collector.clockUncertaintyNs(), -1);
  ASSERT_TRUE(collector.collect({}, out).isOk());  // nothing converted yet
  EXPECT_EQ(collector.clockUncertaintyNs(), -1);
  source.records = {{GpuActivityKind::kKernel, 5000, 6000, 0, 1, 1, "k", 0}};
  source.next = {{1000, 11000, 800}, {9000, 19000, 200}};  // offset 10000, reads 800 and 200
  ASSERT_TRUE(collector.collect({}, out).isOk());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].startNs, 15000);
  EXPECT_EQ(collector.clockUncertaintyNs(), 400);  // exact fit: the widest read's half
  source.records = {{GpuActivityKind::kKernel, 9500, 9600, 0, 1, 2, "k", 0}};
  source.next = {{10000, 20000, 0}};  // a tighter map next: the bound stays the largest
  ASSERT_TRUE(collector.collect({}, out).isOk());
  EXPECT_EQ(collector.clockUncertaintyNs(), 400);
}

TEST(GpuActivityTest, ALaunchAndItsKernelBecomeTwoEventsLinkedByTheirCorrelation) {
  // GPU clock 7 s ahead of the host's and 10 ppm fast, fitted from pairs.
  std::vector<ClockPair> pairs;
  for (int i = 0; i < 4; ++i) {
    const int64_t host = 2000000000LL + i * 1000000000LL;
    pairs.push_back({static_cast<uint64_t>(7e9 + host + (host - 2e9) * 1e-5), host});
  }
  auto map = fitGpuClockMap(pairs);
  ASSERT_TRUE(map.isOk()) << map.status().message();

  const LaunchCall launch{4242, 2500000000LL, 2500004000LL, 777, "cudaLaunchKernel"};
  // The kernel ran from host 2.500010 s to 2.500030 s, as the GPU clock reads it.
  auto gpuAt = [](int64_t host) { return static_cast<uint64_t>(7e9 + host + (host - 2e9) * 1e-5); };
  const GpuActivity kernel{GpuActivityKind::kKernel,
                           gpuAt(2500010000LL),
                           gpuAt(2500030000LL),
                           0,
                           7,
                           4242,
                           "residual_forward_kernel",
                           0};

  const trace_model::Event l = toEvent(launch, 5);
  const trace_model::Event k = toEvent(kernel, *map, 5, {});
  EXPECT_EQ(l.correlationId, 4242);
  EXPECT_EQ(k.correlationId, l.correlationId);
  EXPECT_EQ(l.rank, 5);
  EXPECT_EQ(k.rank, 5);
  // The launch: on the host clock as it is, on the cuda api lane, neither
  // compute nor communication (it must not count twice with its kernel).
  EXPECT_EQ(l.lane, trace_model::Lane::kCudaApi);
  EXPECT_EQ(l.kind, trace_model::EventKind::kOther);
  EXPECT_EQ(trace_model::categoryOf(l.kind), trace_model::EventCategory::kOther);
  EXPECT_EQ(l.name, "cudaLaunchKernel");
  EXPECT_EQ(l.startNs, 2500000000LL);
  EXPECT_EQ(l.endNs, 2500004000LL);
  // The kernel: through the fitted map back onto the host clock (a GPU time
  // taken as host time would be 7 s off), on its stream lane.
  EXPECT_EQ(k.lane, trace_model::gpuStreamLane(7));
  EXPECT_EQ(k.kind, trace_model::EventKind::kKernel);
  EXPECT_NEAR(static_cast<double>(k.startNs), 2500010000.0, 2.0);
  EXPECT_NEAR(static_cast<double>(k.endNs), 2500030000.0, 2.0);
  EXPECT_GT(k.startNs, l.startNs);
}

TEST(GpuActivityTest, ARecordWithoutALaunchKeepsItsCorrelation) {
  // Records are converted one by one, before their launch may have shipped:
  // the id is kept and readers link equal ids (a record of an untraced call
  // such as cudaGraphLaunch links to nothing). Zero stays zero.
  GpuClockMap map;
  const GpuActivity copy{GpuActivityKind::kMemcpy, 100, 200, 0, 3, 99, "", 4096};
  EXPECT_EQ(toEvent(copy, map, 0, {}).correlationId, 99);
  const GpuActivity unlinked{GpuActivityKind::kMemset, 100, 200, 0, 3, 0, "", 64};
  EXPECT_EQ(toEvent(unlinked, map, 0, {}).correlationId, 0);
  // A launch whose exit time is before its entry (cannot happen on one
  // monotonic clock, but never store an event that ends before it starts).
  const trace_model::Event e = toEvent(LaunchCall{7, 1000, 900, 1, "cudaMemcpyAsync"}, 0);
  EXPECT_EQ(e.endNs, e.startNs);
}

TEST(GpuActivityTest, LaunchApisAreTheCallsThatLaunchKernelsCopiesAndSets) {
  for (const char* name :
       {"cudaLaunchKernel", "cudaLaunchKernel_v7000", "cudaLaunchKernel_ptsz_v7000",
        "__cudaLaunchKernel_v13000", "cudaLaunchKernelExC_v11060",
        "cudaLaunchCooperativeKernel_v9000", "cudaMemcpy_v3020", "cudaMemcpyAsync_v3020",
        "cudaMemcpy2DAsync_ptsz_v7000", "cudaMemset_v3020", "cudaMemsetAsync_v3020",
        "cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchCooperativeKernel", "cuMemcpyHtoD_v2",
        "cuMemcpyAsync", "cuMemsetD32Async"}) {
    EXPECT_TRUE(isLaunchApi(name)) << name;
  }
  for (const char* name :
       {"cudaGetDevice_v3020", "cudaMalloc_v3020", "cudaStreamSynchronize_v3020",
        "cudaLaunchHostFunc_v10000", "cudaGraphLaunch_v10000", "cudaMemPrefetchAsync_v8000",
        "cudaMemGetInfo_v3020", "cuMemAlloc_v2", "cuGraphLaunch", "cuLaunchHostFunc",
        "cuCtxGetCurrent", "cuModuleLoad", "", "Launch", "ncclLaunchKernel"}) {
    EXPECT_FALSE(isLaunchApi(name)) << name;
  }
}

}  // namespace
}  // namespace bubblescope::tracer

#include "tracer/nvml_sampler.h"

namespace bubblescope::tracer {
namespace {

// Without a driver, or without a device to name, the sampler says why and
// never falls back to an index.
TEST(NvmlSamplerTest, ADeviceWithoutIdentityIsRefusedWithTheReason) {
  auto sampler = NvmlSampler::open(GpuIdentity{});
  ASSERT_FALSE(sampler.isOk());
  EXPECT_NE(sampler.status().message().find("NVML"), std::string::npos);
}

// A PCI bus id with no GPU behind it (00:00.0 is the host bridge) is refused
// with or without a driver, not replaced by another GPU.
TEST(NvmlSamplerTest, ABusIdWithoutAGpuIsRefused) {
  auto sampler = NvmlSampler::open(GpuIdentity{.pciBusId = "0000:00:00.0"});
  ASSERT_FALSE(sampler.isOk());
  EXPECT_NE(sampler.status().message().find("NVML"), std::string::npos);
}

}  // namespace
}  // namespace bubblescope::tracer
