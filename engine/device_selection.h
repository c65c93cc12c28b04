// Which GPU a rank uses, and whether ranks share GPUs (issue 34 point 1).
//
// Contract:
// - selectDevice() is pure: it reads only its input (the launcher's
//   environment as strings, MPI's node split when the caller has one, and the
//   number of devices CUDA sees) and never touches CUDA, MPI or the process
//   environment. launcherEnvironmentOfThisProcess() is the one getenv reader.
// - The local rank (this rank's index among the ranks on its node) and the
//   local rank count come from the first source that is given, in this order:
//   MPI's split of the job by node (MPI_COMM_TYPE_SHARED; it counts only the
//   job's ranks, not a trace collector started beside them), Open MPI's
//   OMPI_COMM_WORLD_LOCAL_RANK / _LOCAL_SIZE, Slurm's SLURM_LOCALID with
//   SLURM_TASKS_PER_NODE ("2(x3),1") indexed by SLURM_NODEID; with none, a
//   single process (local rank 0 of 1).
// - `visibleDevices` is what cudaGetDeviceCount() says; CUDA has already
//   applied CUDA_VISIBLE_DEVICES, so device indices are into its list. The
//   rank uses device localRank mod visibleDevices. When a node has more ranks
//   than visible devices, ranks share GPUs: NCCL refuses that, so every rank
//   of the node takes host-staged collectives (HostStagedCommunicator);
//   otherwise NCCL. Assumes every rank of a node sees the same devices; when a
//   launcher binds one device per task (a different CUDA_VISIBLE_DEVICES per
//   rank) only the runtime's UUID exchange (ranksShareAGpu in
//   engine/cuda/nccl_communicator.h) can tell, and it is the authority for the
//   communicators. Across nodes the ranks of a group must agree on the path
//   (that exchange does it).
// - Errors, one line each, kFailedPrecondition for a machine or launch that
//   cannot run it, kInvalidArgument for a malformed variable: no visible
//   device (naming CUDA_VISIBLE_DEVICES when it hides them all: "" or "-1");
//   a CUDA_VISIBLE_DEVICES entry that is neither a device index nor a
//   GPU-/MIG- UUID, or an index named twice; a local rank or count that is not
//   a number, or a rank not below its count; more ranks on the node than
//   devices when `allowSharing` is false (every rank of the node fails alike,
//   so none waits on a peer that refused).
#pragma once

#include <optional>
#include <string>

#include "common/result.h"

namespace bubblescope::engine {

// The variables a launcher sets, as found (nullopt: not set).
struct LauncherEnvironment {
  std::optional<std::string> ompiLocalRank;       // OMPI_COMM_WORLD_LOCAL_RANK
  std::optional<std::string> ompiLocalSize;       // OMPI_COMM_WORLD_LOCAL_SIZE
  std::optional<std::string> slurmLocalId;        // SLURM_LOCALID
  std::optional<std::string> slurmNodeId;         // SLURM_NODEID
  std::optional<std::string> slurmTasksPerNode;   // SLURM_TASKS_PER_NODE
  std::optional<std::string> cudaVisibleDevices;  // CUDA_VISIBLE_DEVICES
};
// Reads the variables above from this process's environment.
LauncherEnvironment launcherEnvironmentOfThisProcess();

// This rank among the job's ranks on its node (from MPI_COMM_TYPE_SHARED).
struct NodeRank {
  int localRank = 0;
  int localSize = 1;
};

enum class CollectivePath { kNccl, kHostStaged };
const char* collectivePathName(CollectivePath path);  // "nccl", "host-staged"

struct DeviceSelectionInput {
  LauncherEnvironment environment;
  std::optional<NodeRank> mpiNodeRank;  // wins over the environment when given
  int visibleDevices = 0;               // cudaGetDeviceCount()
  bool allowSharing = true;             // may two ranks of a node use one GPU?
};

struct DeviceSelection {
  int device = 0;  // CUDA runtime index, for cudaSetDevice / createBackend
  int localRank = 0;
  int localSize = 1;
  std::string rankSource;  // "MPI", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "single process"
  std::string physicalDevice;  // the CUDA_VISIBLE_DEVICES entry of `device`, else its index
  bool sharesItsGpu = false;   // another rank of the node uses `device` too
  CollectivePath collectives = CollectivePath::kNccl;  // the node's path (same on all its ranks)
  // "local rank 1 of 2 (OMPI_COMM_WORLD_LOCAL_RANK): GPU 1, nccl collectives"
  // (with " = CUDA_VISIBLE_DEVICES entry 'X'" and ", shared" when they apply).
  std::string describe() const;
};

Result<DeviceSelection> selectDevice(const DeviceSelectionInput& input);

}  // namespace bubblescope::engine
