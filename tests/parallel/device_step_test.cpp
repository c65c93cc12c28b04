// Parallel training on a device backend, without a GPU (issue 34): each
// layout runs on the fake device (fake_device_backend.h: device memory the
// CPU cannot dereference, CPU maths), its groups on recording device
// communicators (fake_device_communicator.h) or on the real host staging
// (host_staged_communicator.h) with a copier over the fake memory. Checked
// against the same layout on the CPU backend, step by step, and against the
// device's ordering rules (device_log.h): every collective waits on the
// compute that produced its input, nothing reads a buffer before its
// transfer completes, nothing is freed in flight, every collective is waited.
//
// Losses: the device path differs from the host path only in how the
// squared gradient norm is summed (one backend reduction per parameter
// piece instead of one running sum: double rounding, ~1e-16 relative), which
// can move the clipping factor by one float ulp (6e-8 relative), so later
// losses may differ in the 7th digit; the first step's loss is the same
// forward and must be equal. Bound: 1e-5 relative.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "device_log.h"
#include "device_pair_run.h"
#include "engine/parallel/device_groups.h"
#include "engine/parallel/host_staged_communicator.h"
#include "engine/parallel/mpi_communicator.h"
#include "engine/parallel/mpi_grid.h"
#include "engine/parallel/rank_trainer.h"
#include "fake_device_backend.h"
#include "fake_device_communicator.h"
#include "parallel_fixture.h"

namespace bubblescope::engine::testing {
namespace {

using layout::ScheduleKind;
using trace_model::ParallelDim;

struct Expect {
  PairCase c;
  std::vector<std::string> collectives;  // prefixes of collectives the step must start
  bool overlaps;                         // backend ops run while a collective is in flight
};

class DeviceStep : public ::testing::TestWithParam<Expect> {};

TEST_P(DeviceStep, MatchesTheCpuAndKeepsTheDeviceOrder) {
  const Expect& x = GetParam();
  const StepRun cpu = onCpu(x.c);
  ASSERT_TRUE(cpu.status.isOk()) << cpu.status.toString();
  DeviceLog log;
  const StepRun device = onFakeDevice(x.c, log);
  ASSERT_TRUE(device.status.isOk()) << x.c.name << ": " << device.status.toString();
  expectSameLosses(cpu.losses, device.losses, x.c.name);
  const std::vector<std::string> broken = log.violations();
  EXPECT_TRUE(broken.empty()) << x.c.name << ": " << broken.size() << " breaks, the first: "
                              << (broken.empty() ? "" : broken.front());
  for (const std::string& prefix : x.collectives) {
    EXPECT_TRUE(hasCollective(log, prefix)) << x.c.name << ": no '" << prefix << "' started";
  }
  if (x.overlaps) {
    EXPECT_GT(log.opsWhileInFlight(), 0) << x.c.name << ": nothing overlapped, the check is void";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, DeviceStep,
    ::testing::Values(
        Expect{{"dp2", 2, 1, 1, 0}, {"all_reduce dp grad_all_reduce", "all_reduce dp loss"}, true},
        Expect{{"dp2_zero1", 2, 1, 1, 1},
               {"reduce_scatter zero grad_reduce_scatter", "all_gather zero param_all_gather",
                "all_reduce zero grad_norm"},
               true},
        Expect{{"dp2_zero3", 2, 1, 1, 3},
               {"reduce_scatter zero grad_reduce_scatter", "all_gather zero param_all_gather"},
               true},
        Expect{{"pp2_1f1b", 1, 2, 1, 0},
               {"send pp send_activation", "recv pp recv_activation", "send pp send_grad",
                "recv pp recv_grad", "all_reduce pp loss", "all_reduce pp grad_norm"},
               true},
        Expect{{"tp2", 1, 1, 2, 0}, {"all_reduce tp", "all_reduce tp grad_norm"}, false},
        // Every schedule runs through the same ScheduleExecutor.
        Expect{{"dp2_zero2", 2, 1, 1, 2},
               {"reduce_scatter zero grad_reduce_scatter", "all_gather zero param_all_gather"},
               true},
        Expect{{"pp2_gpipe", 1, 2, 1, 0, ScheduleKind::kGPipe},
               {"send pp send_activation", "recv pp recv_grad"},
               true},
        Expect{{"pp2_interleaved", 1, 2, 1, 0, ScheduleKind::kInterleaved, 2, false, 4},
               {"send pp send_activation", "recv pp recv_grad"},
               true},
        Expect{{"pp2_zbh1", 1, 2, 1, 0, ScheduleKind::kZeroBubbleH1},
               {"send pp send_grad", "recv pp recv_grad"},
               true},
        Expect{{"pp2_1f1b_recompute", 1, 2, 1, 0, ScheduleKind::kOneFOneB, 1, true},
               {"send pp send_activation", "recv pp recv_grad"},
               true}),
    [](const ::testing::TestParamInfo<Expect>& info) { return std::string(info.param.c.name); });

// dp 4 over two nodes of two ranks (ranks 2k, 2k + 1): every bucket reduced
// hierarchically (reduce-scatter in the node, all-reduce across, all-gather
// in the node) over device groups.
TEST(DeviceHierarchical, Dp4OverTwoNodesMatchesTheCpu) {
  auto run = [](std::unique_ptr<Backend> backend, auto wrap) {
    const int r = worldRank();
    auto split = [&](int color) {
      return MpiCommunicator::split(MPI_COMM_WORLD, color, r, ParallelDim::kDp).value();
    };
    std::unique_ptr<Communicator> dp = wrap(split(0));
    std::unique_ptr<Communicator> intra = wrap(split(r / 2));
    std::unique_ptr<Communicator> inter = wrap(split(10 + r % 2));
    RankSetup setup;
    setup.parallel.bucketElements = 20000;
    setup.groups.dp = dp.get();
    setup.groups.dpIntraNode = intra.get();
    setup.groups.dpInterNode = inter.get();
    setup.backend = std::move(backend);
    return trainSteps(perRankOptions(), std::move(setup));
  };
  const StepRun cpu = run(nullptr, [](std::unique_ptr<MpiCommunicator> g) {
    return std::unique_ptr<Communicator>(std::move(g));
  });
  ASSERT_TRUE(cpu.status.isOk()) << cpu.status.toString();
  DeviceLog log;
  const StepRun device =
      run(std::make_unique<FakeDeviceBackend>(log), [&log](std::unique_ptr<MpiCommunicator> g) {
        return std::unique_ptr<Communicator>(
            std::make_unique<FakeDeviceCommunicator>(std::move(g), log, "nccl", false));
      });
  ASSERT_TRUE(device.status.isOk()) << device.status.toString();
  expectSameLosses(cpu.losses, device.losses, "dp4 hierarchical");
  const auto broken = log.violations();
  EXPECT_TRUE(broken.empty()) << broken.front();
  EXPECT_TRUE(hasCollective(log, "reduce_scatter dp reduce_scatter.intra_node"));
  EXPECT_TRUE(hasCollective(log, "all_reduce dp all_reduce.inter_node"));
  EXPECT_TRUE(hasCollective(log, "all_gather dp all_gather.intra_node"));
}

// ---- The checker can fail --------------------------------------------------------

ByteRange bytes(uintptr_t lo, uintptr_t hi) {
  return {kFakeDeviceTag | lo, kFakeDeviceTag | hi};
}

TEST(DeviceLog, FlagsComputeOnABufferInFlightAReadBeforeCompletionAFreeAndAMissingWait) {
  DeviceLog log;
  const int64_t reduce = log.start("all_reduce dp grad_all_reduce", {bytes(0, 64)}, {bytes(0, 64)});
  log.op("linearBackwardWeight", {bytes(128, 256)}, {bytes(128, 256)});  // elsewhere: fine
  EXPECT_TRUE(log.violations().size() == 1);                             // only: never waited
  log.op("linearBackwardWeight", {}, {bytes(32, 40)});  // writes the input in flight
  log.op("adamwUpdate", {bytes(60, 70)}, {});           // reads before the transfer ends
  log.free(bytes(0, 64));                               // frees it in flight
  log.wait(reduce);
  log.op("adamwUpdate", {bytes(0, 64)}, {bytes(0, 64)});  // after the wait: fine
  const auto broken = log.violations();
  ASSERT_EQ(broken.size(), 3u);
  EXPECT_NE(broken[0].find("linearBackwardWeight writes a buffer that all_reduce dp"),
            std::string::npos)
      << broken[0];
  EXPECT_NE(broken[1].find("adamwUpdate reads a buffer before all_reduce dp"), std::string::npos)
      << broken[1];
  EXPECT_NE(broken[2].find("is freed while it is in flight"), std::string::npos) << broken[2];
  log.clear();
  log.start("send pp send_activation", {bytes(0, 8)}, {});
  const auto unwaited = log.violations();
  ASSERT_EQ(unwaited.size(), 1u);
  EXPECT_EQ(unwaited[0], "send pp send_activation is never waited");
}

TEST(FakeDevice, ItsMemoryIsNotHostMemoryAndItsCommunicatorsRefuseHostBuffers) {
  DeviceLog log;
  FakeDeviceBackend backend(log);
  Tensor t = backend.newTensor({4}, MemoryCategory::kGradients);
  EXPECT_EQ(t.device(), Device::kCuda);
  EXPECT_TRUE(isFakeDevice(t.data()));
  const std::vector<float> host = {1, 2, 3, 4};
  backend.upload<float>(t, host);
  auto back = backend.download(t);
  ASSERT_TRUE(back.isOk());
  EXPECT_EQ(*back, host);
  FakeDeviceCommunicator comm(group(1, ParallelDim::kDp), log, "nccl", false);
  std::vector<float> onHost = {1.0f};
  const Status refused = comm.allReduce(std::span<float>(onHost));
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("host buffer"), std::string::npos) << refused.message();
  EXPECT_TRUE(comm.allReduce(t.span()).isOk());
}

// ---- Groups a layout builds, with each communicator kind ----------------------------

// Host staging over the fake memory: the staged copies are backend-like ops.
class FakeCopier final : public DeviceCopier {
 public:
  // `stream`: the copy stream it names (null: none).
  explicit FakeCopier(DeviceLog& log, const void* stream = nullptr) : log_(log), stream_(stream) {}
  std::vector<const void*> streams() const override {
    return stream_ != nullptr ? std::vector<const void*>{stream_} : std::vector<const void*>{};
  }
  Status toHost(void* host, const void* device, size_t bytes) override {
    log_.op("stage to host", deviceRange(device, bytes), {});
    if (bytes > 0) std::memcpy(host, hostAddress(device), bytes);
    return Status::ok();
  }
  Status toDevice(void* device, const void* host, size_t bytes) override {
    log_.op("stage to device", {}, deviceRange(device, bytes));
    if (bytes > 0) std::memcpy(hostAddress(device), host, bytes);
    return Status::ok();
  }

 private:
  DeviceLog& log_;
  const void* stream_;
};

struct Made {
  ParallelDim dim;
  int32_t size;
  bool pointToPoint;
};

// dp 2 x pp 2 on the 4 ranks through MpiGrid and DeviceGroups; `kind`
// "nccl" (recording communicators) or "host-staged" (HostStagedCommunicator).
StepRun gridRun(const std::string& kind, DeviceLog& log, std::vector<Made>& made) {
  auto grid = MpiGrid::create(MPI_COMM_WORLD, 2, 2, 1);
  EXPECT_TRUE(grid.isOk()) << grid.status().toString();
  DeviceCommFactory factory = [&](std::unique_ptr<MpiCommunicator> g, bool pointToPoint,
                                  bool hostStaged) -> Result<std::unique_ptr<Communicator>> {
    EXPECT_FALSE(hostStaged);  // no emulated link: the factory chooses
    made.push_back({g->dim(), g->size(), pointToPoint});
    if (kind == "host-staged") {
      return std::unique_ptr<Communicator>(
          std::make_unique<HostStagedCommunicator>(std::move(g), std::make_unique<FakeCopier>(log)));
    }
    return std::unique_ptr<Communicator>(
        std::make_unique<FakeDeviceCommunicator>(std::move(g), log, kind, pointToPoint));
  };
  auto groups = DeviceGroups::create(**grid, /*pipeline=*/true, factory);
  StepRun run;
  if (!groups.isOk()) {
    run.status = groups.status();
    return run;
  }
  // all(): every group made, in creation order (the tracer tags each one's
  // device streams with its dimension, cli/gpu_tracing.h).
  const std::vector<const Communicator*> all = (*groups)->all();
  EXPECT_EQ(all.size(), 3u);
  if (all.size() == 3u) {
    EXPECT_EQ(all[0], &(*groups)->dp());
    EXPECT_EQ(all[1], &(*groups)->tp());
    EXPECT_EQ(all[2], (*groups)->pp());
    EXPECT_EQ(all[2]->dim(), trace_model::ParallelDim::kPp);
  }
  RankSetup setup;
  setup.groups = {&(*groups)->dp(), (*groups)->pp(), &(*groups)->tp()};
  setup.backend = std::make_unique<FakeDeviceBackend>(log);
  return trainSteps(perRankOptions(), std::move(setup));
}

StepRun gridRunOnCpu() {
  auto grid = MpiGrid::create(MPI_COMM_WORLD, 2, 2, 1).value();
  RankSetup setup;
  setup.groups = {&grid->dp(), &grid->pp(), &grid->tp()};
  StepRun run;
  auto trainer = RankTrainer::create(perRankOptions(), std::move(setup)).value();
  for (int s = 0; s < kSteps; ++s) run.losses.push_back(trainer->step().value().loss);
  return run;
}

TEST(DeviceGroups, Dp2Pp2BuildsItsGroupsWithEachKindAndTrainsAsTheCpu) {
  const StepRun cpu = gridRunOnCpu();
  for (const std::string kind : {"nccl", "host-staged"}) {
    DeviceLog log;
    std::vector<Made> made;
    const StepRun device = gridRun(kind, log, made);
    ASSERT_TRUE(device.status.isOk()) << kind << ": " << device.status.toString();
    // dp, tp, pp in that order on every rank; only pp sends and receives.
    ASSERT_EQ(made.size(), 3u) << kind;
    EXPECT_EQ(made[0].dim, ParallelDim::kDp);
    EXPECT_EQ(made[0].size, 2);
    EXPECT_FALSE(made[0].pointToPoint);
    EXPECT_EQ(made[1].dim, ParallelDim::kTp);
    EXPECT_EQ(made[1].size, 1);
    EXPECT_FALSE(made[1].pointToPoint);
    EXPECT_EQ(made[2].dim, ParallelDim::kPp);
    EXPECT_EQ(made[2].size, 2);
    EXPECT_TRUE(made[2].pointToPoint);
    expectSameLosses(cpu.losses, device.losses, kind);
    const auto broken = log.violations();
    EXPECT_TRUE(broken.empty()) << kind << ": " << broken.front();
    if (kind == "host-staged") {  // staged through the host: copies, no device collective
      EXPECT_EQ(log.count(DeviceLogEntry::Kind::kStart), 0);
      EXPECT_TRUE(std::any_of(log.entries().begin(), log.entries().end(),
                              [](const DeviceLogEntry& e) { return e.name == "stage to host"; }));
    } else {
      EXPECT_GT(log.count(DeviceLogEntry::Kind::kStart), 0);
    }
  }
}

// An emulated inter-node link on a device (dp 4 over two emulated nodes of
// two ranks, ranks_per_node 2): the group whose all-reduces cross the link
// (the dp group, flat; the inter-node group, hierarchical) gets a duplicate
// MPI communicator pacing the same link and is host-staged, so its device
// buffers cross the emulated link as the CPU run's do: the same paced ring
// all-reduce (link_pacer.h) on the same values, hence the CPU's losses
// (bound above). The staging copier's stream is the group's (item 3 of
// issue 34: the copies carry the collective's dimension).
struct PacedMade {
  ParallelDim dim;
  int32_t size;
  bool hostStaged;
  bool paced;  // the duplicate paces the grid's link
};

StepRun pacedRun(bool hierarchical, bool onDevice, DeviceLog& log, std::vector<PacedMade>& made,
                 std::vector<const void*>* stagedStreams) {
  NodeSetup nodes;
  nodes.hierarchical = hierarchical;
  nodes.ranksPerNode = 2;
  nodes.link = {.gbps = 40.0, .latencyUs = 5.0};
  auto grid = MpiGrid::create(MPI_COMM_WORLD, 4, 1, 1).value();
  StepRun run;
  run.status = grid->splitDpIntoNodes(MPI_COMM_WORLD, nodes);
  if (!run.status.isOk()) return run;
  static const int kCopyStream = 0;  // a stand-in cudaStream_t: only its address counts
  DeviceCommFactory factory = [&](std::unique_ptr<MpiCommunicator> g, bool,
                                  bool hostStaged) -> Result<std::unique_ptr<Communicator>> {
    const bool paced = g->pacer() != nullptr && g->pacer()->link().gbps == nodes.link.gbps &&
                       g->pacer()->link().latencyUs == nodes.link.latencyUs;
    made.push_back({g->dim(), g->size(), hostStaged, paced});
    if (hostStaged) {
      return std::unique_ptr<Communicator>(std::make_unique<HostStagedCommunicator>(
          std::move(g), std::make_unique<FakeCopier>(log, &kCopyStream)));
    }
    return std::unique_ptr<Communicator>(
        std::make_unique<FakeDeviceCommunicator>(std::move(g), log, "nccl", false));
  };
  std::unique_ptr<DeviceGroups> groups;
  RankSetup setup;
  setup.parallel.bucketElements = 20000;
  if (onDevice) {
    auto made = DeviceGroups::create(*grid, /*pipeline=*/false, factory);
    if (!made.isOk()) {
      run.status = made.status();
      return run;
    }
    groups = std::move(made).value();
    setup.groups = {&groups->dp(), nullptr, &groups->tp()};
    setup.groups.dpIntraNode = groups->dpIntraNode();
    setup.groups.dpInterNode = groups->dpInterNode();
    setup.groups.dpHost = &grid->dp();
    setup.backend = std::make_unique<FakeDeviceBackend>(log);
    Communicator* staged = hierarchical ? groups->dpInterNode() : &groups->dp();
    if (stagedStreams != nullptr && staged != nullptr) *stagedStreams = staged->deviceStreams();
  } else {
    setup.groups = {&grid->dp(), nullptr, &grid->tp()};
    setup.groups.dpIntraNode = grid->dpIntraNode();
    setup.groups.dpInterNode = grid->dpInterNode();
  }
  return trainSteps(perRankOptions(), std::move(setup));
}

class DeviceInterNodeLink : public ::testing::TestWithParam<bool> {};

TEST_P(DeviceInterNodeLink, ThePacedGroupIsHostStagedOverThePacedLinkAndMatchesTheCpu) {
  const bool hierarchical = GetParam();
  DeviceLog cpuLog;
  std::vector<PacedMade> none;
  const StepRun cpu = pacedRun(hierarchical, false, cpuLog, none, nullptr);
  ASSERT_TRUE(cpu.status.isOk()) << cpu.status.toString();
  DeviceLog log;
  std::vector<PacedMade> made;
  std::vector<const void*> streams;
  const StepRun device = pacedRun(hierarchical, true, log, made, &streams);
  ASSERT_TRUE(device.status.isOk()) << device.status.toString();
  expectSameLosses(cpu.losses, device.losses, hierarchical ? "hierarchical" : "flat");
  // dp, tp, then (hierarchical) intra-node, inter-node: only the paced one staged.
  ASSERT_EQ(made.size(), hierarchical ? 4u : 2u);
  for (size_t i = 0; i < made.size(); ++i) {
    const bool crossesTheLink = hierarchical ? i == 3 : i == 0;
    EXPECT_EQ(made[i].hostStaged, crossesTheLink) << "group " << i;
    EXPECT_EQ(made[i].paced, crossesTheLink) << "group " << i;
    EXPECT_EQ(made[i].dim, i == 1 ? ParallelDim::kTp : ParallelDim::kDp) << "group " << i;
  }
  EXPECT_EQ(made[hierarchical ? 3 : 0].size, 2 + 2 * !hierarchical);
  // Its copies run on the copier's own stream, which the group names for
  // the tracer (cli/gpu_tracing.h tags its records with the group's dim).
  ASSERT_EQ(streams.size(), 1u);
  const auto broken = log.violations();
  EXPECT_TRUE(broken.empty()) << broken.front();
  EXPECT_TRUE(std::any_of(log.entries().begin(), log.entries().end(),
                          [](const DeviceLogEntry& e) { return e.name == "stage to host"; }));
  if (hierarchical) {  // the node's phases stay on the device communicators
    EXPECT_TRUE(hasCollective(log, "reduce_scatter dp reduce_scatter.intra_node"));
    EXPECT_FALSE(hasCollective(log, "all_reduce dp all_reduce.inter_node"));
  } else {
    EXPECT_FALSE(hasCollective(log, "all_reduce dp grad_all_reduce"));
  }
}

INSTANTIATE_TEST_SUITE_P(AllReduce, DeviceInterNodeLink, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "hierarchical" : "flat");
                         });

// Under expert parallelism the expert-dp group (the experts' gradients) is
// a device group too, made last; the ep group is not (its all-to-alls
// exchange host buffers: moe_layer.h).
TEST(DeviceGroups, ExpertParallelismAddsTheExpertDpGroupLast) {
  auto grid = MpiGrid::create(MPI_COMM_WORLD, 4, 1, 1, /*ep=*/2).value();
  std::vector<Made> made;
  DeviceLog log;
  DeviceCommFactory factory = [&](std::unique_ptr<MpiCommunicator> g, bool pointToPoint,
                                  bool) -> Result<std::unique_ptr<Communicator>> {
    made.push_back({g->dim(), g->size(), pointToPoint});
    return std::unique_ptr<Communicator>(
        std::make_unique<FakeDeviceCommunicator>(std::move(g), log, "nccl", pointToPoint));
  };
  auto groups = DeviceGroups::create(*grid, /*pipeline=*/false, factory);
  ASSERT_TRUE(groups.isOk()) << groups.status().toString();
  ASSERT_EQ(made.size(), 3u);  // dp, tp, expert-dp
  EXPECT_EQ(made[0].dim, ParallelDim::kDp);
  EXPECT_EQ(made[0].size, 4);
  EXPECT_EQ(made[2].dim, ParallelDim::kDp);
  EXPECT_EQ(made[2].size, 2);  // the dp ranks with this rank's ep rank
  ASSERT_NE((*groups)->expertDp(), nullptr);
  EXPECT_EQ((*groups)->expertDp()->worldRanks(), grid->expertDp()->worldRanks());
  const std::vector<const Communicator*> all = (*groups)->all();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2], (*groups)->expertDp());
}

TEST(DeviceGroups, AFactoryThatMakesTheWrongGroupIsRefused) {
  auto grid = MpiGrid::create(MPI_COMM_WORLD, 2, 2, 1).value();
  DeviceCommFactory wrong = [](std::unique_ptr<MpiCommunicator> g, bool,
                               bool) -> Result<std::unique_ptr<Communicator>> {
    // The world instead of the group.
    auto world = MpiCommunicator::split(MPI_COMM_WORLD, 0, worldRank(), g->dim());
    if (!world.isOk()) return world.status();
    return std::unique_ptr<Communicator>(std::move(world).value());
  };
  auto groups = DeviceGroups::create(*grid, true, wrong);
  ASSERT_FALSE(groups.isOk());
  EXPECT_EQ(groups.status().message(), "the device communicator of a dp group does not match its group");
}

// Grad compression on a device: each bucket is downloaded through the
// backend, encoded, reduced and decoded by the CPU's codecs over the dp
// group's host communicator, and the sum uploaded (data_parallel.h). The
// codecs see the CPU run's gradients, so the first step is equal; later
// steps start from parameters that differ by the clipping factor's ulp
// (above), which a codec may turn into one rounding step of one element
// (fp16: 2^-11 of it, int8: one code of 127, top-k: one near tie swapped):
// a change of lr times one gradient element in one parameter, far below
// 1e-5 of the loss over two steps.
class DeviceCompression : public ::testing::TestWithParam<const char*> {};

TEST_P(DeviceCompression, RunsTheCpuCodecsOnStagedBucketsAndMatchesTheCpu) {
  PairCase c{"dp2", 2};
  c.compression = GetParam();
  const StepRun cpu = onCpu(c);
  ASSERT_TRUE(cpu.status.isOk()) << cpu.status.toString();
  DeviceLog log;
  const StepRun device = onFakeDevice(c, log);
  ASSERT_TRUE(device.status.isOk()) << c.compression << ": " << device.status.toString();
  expectSameLosses(cpu.losses, device.losses, c.compression);
  // The codec ran (fewer bytes than fp32) and sent what the CPU's sent.
  EXPECT_GT(device.trafficRatio, 1.0) << c.compression;
  EXPECT_EQ(device.trafficRatio, cpu.trafficRatio) << c.compression;
  const auto broken = log.violations();
  EXPECT_TRUE(broken.empty()) << c.compression << ": " << broken.front();
  // No bucket went to the device communicator; each was staged both ways.
  EXPECT_FALSE(hasCollective(log, "all_reduce dp grad_all_reduce")) << c.compression;
  EXPECT_TRUE(hasCollective(log, "all_reduce dp loss")) << c.compression;
  auto named = [&](const std::string& name) {
    return std::count_if(log.entries().begin(), log.entries().end(),
                         [&](const DeviceLogEntry& e) { return e.name == name; });
  };
  EXPECT_GT(named("copyToHost"), 0) << c.compression;
  EXPECT_GT(named("copyToDevice"), 0) << c.compression;
}

INSTANTIATE_TEST_SUITE_P(Specs, DeviceCompression,
                         ::testing::Values("fp16", "bf16", "int8", "topk:0.05", "powersgd:2"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           for (char& ch : name) {
                             if (ch == ':' || ch == '.') ch = '_';
                           }
                           return name;
                         });

TEST(DeviceLayouts, CompressionOnADeviceNeedsTheDpGroupOnTheHost) {
  DeviceLog log;
  auto dp = std::make_unique<FakeDeviceCommunicator>(group(2, ParallelDim::kDp), log, "nccl", false);
  RankSetup setup;
  setup.groups.dp = dp.get();  // no dpHost
  setup.parallel.compression = layout::parseGradCompression("fp16").value();
  setup.backend = std::make_unique<FakeDeviceBackend>(log);
  auto trainer = RankTrainer::create(perRankOptions(), std::move(setup));
  ASSERT_FALSE(trainer.isOk());
  EXPECT_EQ(trainer.status().message(),
            "grad compression fp16 on fake cuda (CPU maths, recorded) needs a host communicator "
            "of the dp group");
}

// A mixture-of-experts model on a device (moe_layer.h): the router's
// softmax, the routing and the gate gradients run on host copies staged
// through the backend, the experts' products on the device; under ep 2 the
// all-to-alls exchange host buffers over the ep group (the grid's MPI one)
// and the experts' gradients go over a device expert-dp group. Against the
// same layout on the CPU: the first step's loss equal, later ones within
// the bound above (the routing is discrete, but parameters one clipping
// ulp apart move no router probability across a top-k or capacity edge in
// three steps: the run would differ by far more than 1e-5 if one did).
TrainerOptions moeOptions() {
  TrainerOptions o = perRankOptions();
  o.model.numLayers = 2;
  o.model.experts = 4;
  o.model.topK = 2;
  o.model.moeEvery = 2;
  o.model.capacityFactor = 1.0;  // some assignments drop
  return o;
}

template <class Wrap>
StepRun expertRun(int32_t ep, std::unique_ptr<Backend> backend, Wrap wrap) {
  std::unique_ptr<Communicator> dp = wrap(group(2, ParallelDim::kDp));
  std::unique_ptr<Communicator> epGroup, expertDp;
  RankSetup setup;
  setup.groups.dp = dp.get();
  if (ep == 2) {
    epGroup = group(2, ParallelDim::kEp);  // host buffers on every backend
    expertDp = wrap(group(1, ParallelDim::kDp));
    setup.groups.ep = epGroup.get();
    setup.groups.expertDp = expertDp.get();
  }
  setup.parallel.bucketElements = 20000;
  setup.backend = std::move(backend);
  return trainSteps(moeOptions(), std::move(setup));
}

class DeviceExperts : public ::testing::TestWithParam<int32_t> {};

TEST_P(DeviceExperts, StageTheRoutingThroughTheHostAndMatchTheCpu) {
  const int32_t ep = GetParam();
  const StepRun cpu = expertRun(ep, nullptr, [](std::unique_ptr<MpiCommunicator> g) {
    return std::unique_ptr<Communicator>(std::move(g));
  });
  ASSERT_TRUE(cpu.status.isOk()) << cpu.status.toString();
  DeviceLog log;
  const StepRun device = expertRun(
      ep, std::make_unique<FakeDeviceBackend>(log), [&log](std::unique_ptr<MpiCommunicator> g) {
        return std::unique_ptr<Communicator>(
            std::make_unique<FakeDeviceCommunicator>(std::move(g), log, "nccl", false));
      });
  ASSERT_TRUE(device.status.isOk()) << "ep " << ep << ": " << device.status.toString();
  expectSameLosses(cpu.losses, device.losses, "experts, ep " + std::to_string(ep));
  const auto broken = log.violations();
  EXPECT_TRUE(broken.empty()) << "ep " << ep << ": " << broken.front();
  EXPECT_TRUE(hasCollective(log, "all_reduce dp grad_all_reduce")) << "ep " << ep;
  EXPECT_TRUE(std::any_of(log.entries().begin(), log.entries().end(),
                          [](const DeviceLogEntry& e) { return e.name == "copyToHost"; }));
}

INSTANTIATE_TEST_SUITE_P(Ep, DeviceExperts, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int32_t>& info) {
                           return "ep" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace bubblescope::engine::testing
