// selectDevice() for every launcher environment (none, Open MPI, Slurm, MPI's
// node split), CUDA_VISIBLE_DEVICES, sharing and its refusal, and the one-line
// errors. Pure: no GPU, no MPI, the process environment untouched (except the
// last test, which sets and restores variables to check the getenv reader).
#include "engine/device_selection.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bubblescope::engine {
namespace {

DeviceSelectionInput withDevices(int devices, LauncherEnvironment env = {}) {
  DeviceSelectionInput in;
  in.environment = std::move(env);
  in.visibleDevices = devices;
  return in;
}

LauncherEnvironment ompi(const std::string& rank, const std::string& size) {
  LauncherEnvironment e;
  e.ompiLocalRank = rank;
  e.ompiLocalSize = size;
  return e;
}

LauncherEnvironment slurm(const std::string& localId, const std::string& nodeId,
                          const std::string& tasksPerNode) {
  LauncherEnvironment e;
  e.slurmLocalId = localId;
  e.slurmNodeId = nodeId;
  e.slurmTasksPerNode = tasksPerNode;
  return e;
}

TEST(DeviceSelection, ASingleProcessUsesDeviceZeroWithNccl) {
  for (int devices : {1, 8}) {
    auto s = selectDevice(withDevices(devices));
    ASSERT_TRUE(s.isOk()) << s.status().toString();
    EXPECT_EQ(s->device, 0);
    EXPECT_EQ(s->localRank, 0);
    EXPECT_EQ(s->localSize, 1);
    EXPECT_EQ(s->rankSource, "single process");
    EXPECT_FALSE(s->sharesItsGpu);
    EXPECT_EQ(s->collectives, CollectivePath::kNccl);
    EXPECT_EQ(s->describe(), "local rank 0 of 1 (single process): GPU 0, nccl collectives");
  }
}

TEST(DeviceSelection, OpenMpiLocalRankPicksItsOwnGpu) {
  for (int rank = 0; rank < 4; ++rank) {
    auto s = selectDevice(withDevices(4, ompi(std::to_string(rank), "4")));
    ASSERT_TRUE(s.isOk()) << s.status().toString();
    EXPECT_EQ(s->device, rank);
    EXPECT_EQ(s->localSize, 4);
    EXPECT_EQ(s->rankSource, "OMPI_COMM_WORLD_LOCAL_RANK");
    EXPECT_FALSE(s->sharesItsGpu);
    EXPECT_EQ(s->collectives, CollectivePath::kNccl);
  }
}

TEST(DeviceSelection, MoreRanksThanGpusShareThemWithHostStaging) {
  // 3 ranks, 2 GPUs: ranks 0 and 2 share GPU 0, rank 1 has GPU 1 alone, and
  // every rank of the node takes host staging (NCCL refuses a shared GPU in
  // any communicator the node's ranks form).
  const int expectedDevice[] = {0, 1, 0};
  const bool expectedShared[] = {true, false, true};
  for (int rank = 0; rank < 3; ++rank) {
    auto s = selectDevice(withDevices(2, ompi(std::to_string(rank), "3")));
    ASSERT_TRUE(s.isOk()) << s.status().toString();
    EXPECT_EQ(s->device, expectedDevice[rank]) << "rank " << rank;
    EXPECT_EQ(s->sharesItsGpu, expectedShared[rank]) << "rank " << rank;
    EXPECT_EQ(s->collectives, CollectivePath::kHostStaged) << "rank " << rank;
  }
  auto one = selectDevice(withDevices(1, ompi("1", "2")));
  ASSERT_TRUE(one.isOk());
  EXPECT_EQ(one->describe(),
            "local rank 1 of 2 (OMPI_COMM_WORLD_LOCAL_RANK): GPU 0, shared, host-staged "
            "collectives");
}

TEST(DeviceSelection, SharingRefusedFailsOnEveryRankOfTheNode) {
  for (const std::string rank : {"0", "1", "2"}) {
    DeviceSelectionInput in = withDevices(2, ompi(rank, "3"));
    in.allowSharing = false;
    auto s = selectDevice(in);
    ASSERT_FALSE(s.isOk()) << "rank " << rank;
    EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(s.status().message(),
              "3 ranks on this node (OMPI_COMM_WORLD_LOCAL_SIZE) but 2 GPUs visible: ranks "
              "would share a GPU, which is not allowed here");
  }
  DeviceSelectionInput enough = withDevices(2, ompi("1", "2"));
  enough.allowSharing = false;
  auto s = selectDevice(enough);
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  EXPECT_EQ(s->device, 1);
}

TEST(DeviceSelection, SlurmLocalIdWithTasksPerNode) {
  // "2(x2),4": nodes 0 and 1 run 2 tasks each, node 2 runs 4.
  auto s = selectDevice(withDevices(2, slurm("1", "1", "2(x2),4")));
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  EXPECT_EQ(s->device, 1);
  EXPECT_EQ(s->localSize, 2);
  EXPECT_EQ(s->rankSource, "SLURM_LOCALID");
  EXPECT_EQ(s->collectives, CollectivePath::kNccl);
  auto third = selectDevice(withDevices(2, slurm("3", "2", "2(x2),4")));
  ASSERT_TRUE(third.isOk()) << third.status().toString();
  EXPECT_EQ(third->localSize, 4);
  EXPECT_EQ(third->device, 1);
  EXPECT_EQ(third->collectives, CollectivePath::kHostStaged);
}

TEST(DeviceSelection, SlurmErrors) {
  auto beyond = selectDevice(withDevices(2, slurm("0", "3", "2(x2),4")));
  ASSERT_FALSE(beyond.isOk());
  EXPECT_EQ(beyond.status().message(),
            "SLURM_NODEID=3 is beyond SLURM_TASKS_PER_NODE='2(x2),4' (3 nodes)");
  for (const std::string bad : {"2(x", "2(2)", "0", "(x2)", "2(x0)", "2,,1", "a"}) {
    auto s = selectDevice(withDevices(2, slurm("0", "0", bad)));
    ASSERT_FALSE(s.isOk()) << bad;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(s.status().message(),
              "SLURM_TASKS_PER_NODE='" + bad + "' is not a list of N or N(xK) with N, K >= 1")
        << bad;
  }
  LauncherEnvironment partial;
  partial.slurmLocalId = "0";
  auto unknown = selectDevice(withDevices(2, partial));
  ASSERT_FALSE(unknown.isOk());
  EXPECT_EQ(unknown.status().message(),
            "SLURM_LOCALID is set but SLURM_TASKS_PER_NODE or SLURM_NODEID is not (the ranks "
            "on this node are unknown)");
}

TEST(DeviceSelection, MpiNodeSplitWinsOverTheEnvironment) {
  // Open MPI counts a trace collector rank too; MPI's split of the job does not.
  DeviceSelectionInput in = withDevices(2, ompi("2", "3"));
  in.environment.slurmLocalId = "0";
  in.mpiNodeRank = NodeRank{1, 2};
  auto s = selectDevice(in);
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  EXPECT_EQ(s->device, 1);
  EXPECT_EQ(s->localSize, 2);
  EXPECT_EQ(s->rankSource, "MPI");
  EXPECT_EQ(s->collectives, CollectivePath::kNccl);
}

TEST(DeviceSelection, OpenMpiWinsOverSlurm) {
  LauncherEnvironment e = slurm("0", "0", "2");
  e.ompiLocalRank = "1";
  e.ompiLocalSize = "2";
  auto s = selectDevice(withDevices(2, e));
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  EXPECT_EQ(s->device, 1);
  EXPECT_EQ(s->rankSource, "OMPI_COMM_WORLD_LOCAL_RANK");
}

TEST(DeviceSelection, BadLocalRanks) {
  for (const std::string bad : {"", "-1", "x", "1.5", "99999999999"}) {
    auto s = selectDevice(withDevices(2, ompi(bad, "2")));
    ASSERT_FALSE(s.isOk()) << bad;
    EXPECT_EQ(s.status().message(),
              "OMPI_COMM_WORLD_LOCAL_RANK='" + bad + "' is not a non-negative integer");
  }
  auto beyond = selectDevice(withDevices(4, ompi("2", "2")));
  ASSERT_FALSE(beyond.isOk());
  EXPECT_EQ(beyond.status().message(),
            "local rank 2 (OMPI_COMM_WORLD_LOCAL_RANK) is not below the node's rank count 2 "
            "(OMPI_COMM_WORLD_LOCAL_SIZE)");
  LauncherEnvironment noSize;
  noSize.ompiLocalRank = "0";
  auto missing = selectDevice(withDevices(1, noSize));
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().message(),
            "OMPI_COMM_WORLD_LOCAL_RANK is set but OMPI_COMM_WORLD_LOCAL_SIZE is not");
  DeviceSelectionInput badMpi = withDevices(1);
  badMpi.mpiNodeRank = NodeRank{0, 0};
  EXPECT_FALSE(selectDevice(badMpi).isOk());
}

TEST(DeviceSelection, NoVisibleDevice) {
  auto none = selectDevice(withDevices(0));
  ASSERT_FALSE(none.isOk());
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(none.status().message(), "no GPU visible: CUDA finds 0 devices");
  for (const std::string hides : {"", "-1", " "}) {
    LauncherEnvironment e;
    e.cudaVisibleDevices = hides;
    auto s = selectDevice(withDevices(0, e));
    ASSERT_FALSE(s.isOk()) << "'" << hides << "'";
    EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(s.status().message(),
              "no GPU visible: CUDA_VISIBLE_DEVICES='" + hides + "' hides every device");
  }
}

TEST(DeviceSelection, CudaVisibleDevicesNamesThePhysicalDevice) {
  LauncherEnvironment e = ompi("1", "2");
  e.cudaVisibleDevices = "3,GPU-8f1c2d3e-0000-1111-2222-333344445555";
  auto s = selectDevice(withDevices(2, e));
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  EXPECT_EQ(s->device, 1);  // CUDA renumbers the visible devices from 0
  EXPECT_EQ(s->physicalDevice, "GPU-8f1c2d3e-0000-1111-2222-333344445555");
  e.ompiLocalRank = "0";
  auto first = selectDevice(withDevices(2, e));
  ASSERT_TRUE(first.isOk());
  EXPECT_EQ(first->describe(),
            "local rank 0 of 2 (OMPI_COMM_WORLD_LOCAL_RANK): GPU 0 = CUDA_VISIBLE_DEVICES entry "
            "'3', nccl collectives");
  // CUDA stops at an entry that names no device: fewer visible than listed is fine.
  LauncherEnvironment longer;
  longer.cudaVisibleDevices = "0, 1,2";
  auto s2 = selectDevice(withDevices(2, longer));
  ASSERT_TRUE(s2.isOk()) << s2.status().toString();
  EXPECT_EQ(s2->physicalDevice, "0");
}

TEST(DeviceSelection, MalformedCudaVisibleDevices) {
  const std::pair<std::string, std::string> cases[] = {
      {"0,x", "entry 2 ('x') is neither a device index nor a GPU-/MIG- UUID"},
      {"0,,1", "entry 2 ('') is neither a device index nor a GPU-/MIG- UUID"},
      {"0,-1", "entry 2 ('-1') is neither a device index nor a GPU-/MIG- UUID"},
      {"GPU-", "entry 1 ('GPU-') is neither a device index nor a GPU-/MIG- UUID"},
      {"1,01", "device 1 is named twice"},
  };
  for (const auto& [value, why] : cases) {
    LauncherEnvironment e;
    e.cudaVisibleDevices = value;
    auto s = selectDevice(withDevices(1, e));
    ASSERT_FALSE(s.isOk()) << value;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << value;
    EXPECT_EQ(s.status().message(), "CUDA_VISIBLE_DEVICES='" + value + "': " + why);
  }
  LauncherEnvironment fewer;
  fewer.cudaVisibleDevices = "0";
  auto s = selectDevice(withDevices(2, fewer));
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.status().message(),
            "CUDA_VISIBLE_DEVICES='0' names 1 device but CUDA sees 2 (was it changed after "
            "CUDA started?)");
}

TEST(DeviceSelection, ReadsTheProcessEnvironment) {
  const char* names[] = {
      "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_LOCALID", "SLURM_NODEID",
      "SLURM_TASKS_PER_NODE",       "CUDA_VISIBLE_DEVICES"};
  std::vector<std::optional<std::string>> saved;
  for (const char* n : names) {
    const char* v = std::getenv(n);
    saved.push_back(v ? std::optional<std::string>(v) : std::nullopt);
    ::setenv(n, (std::string("v-") + n).c_str(), 1);
  }
  const LauncherEnvironment e = launcherEnvironmentOfThisProcess();
  EXPECT_EQ(e.ompiLocalRank, "v-OMPI_COMM_WORLD_LOCAL_RANK");
  EXPECT_EQ(e.ompiLocalSize, "v-OMPI_COMM_WORLD_LOCAL_SIZE");
  EXPECT_EQ(e.slurmLocalId, "v-SLURM_LOCALID");
  EXPECT_EQ(e.slurmNodeId, "v-SLURM_NODEID");
  EXPECT_EQ(e.slurmTasksPerNode, "v-SLURM_TASKS_PER_NODE");
  EXPECT_EQ(e.cudaVisibleDevices, "v-CUDA_VISIBLE_DEVICES");
  ::unsetenv("SLURM_LOCALID");
  EXPECT_FALSE(launcherEnvironmentOfThisProcess().slurmLocalId.has_value());
  for (size_t i = 0; i < saved.size(); ++i) {
    if (saved[i]) {
      ::setenv(names[i], saved[i]->c_str(), 1);
    } else {
      ::unsetenv(names[i]);
    }
  }
}

}  // namespace
}  // namespace bubblescope::engine
