#include "engine/device_selection.h"

#include <charconv>
#include <cstdlib>
#include <limits>
#include <set>
#include <vector>

namespace bubblescope::engine {
namespace {

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::string trimmed(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const auto end = s.find_last_not_of(" \t");
  return s.substr(begin, end - begin + 1);
}

std::vector<std::string> splitCommas(const std::string& s) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t comma = s.find(',', start);
    parts.push_back(
        s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

// Digits only (no sign, no blanks inside), fitting an int.
std::optional<int> nonNegativeInt(const std::string& text) {
  const std::string s = trimmed(text);
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  int value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

Result<int> variableInt(const char* name, const std::string& value) {
  auto parsed = nonNegativeInt(value);
  if (!parsed) {
    return Status::invalidArgument(std::string(name) + "='" + value +
                                   "' is not a non-negative integer");
  }
  return *parsed;
}

// CUDA_VISIBLE_DEVICES as a list of entries; an empty list hides every device.
Result<std::vector<std::string>> visibleDeviceEntries(const std::string& value) {
  const std::string whole = trimmed(value);
  if (whole.empty() || whole == "-1") return std::vector<std::string>{};
  std::vector<std::string> entries;
  std::set<std::string> seen;
  const std::vector<std::string> parts = splitCommas(value);
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string entry = trimmed(parts[i]);
    const bool uuid =
        (entry.rfind("GPU-", 0) == 0 || entry.rfind("MIG-", 0) == 0) && entry.size() > 4;
    std::optional<int> index = nonNegativeInt(entry);
    if (!uuid && !index) {
      return Status::invalidArgument("CUDA_VISIBLE_DEVICES='" + value + "': entry " +
                                     std::to_string(i + 1) + " ('" + entry +
                                     "') is neither a device index nor a GPU-/MIG- UUID");
    }
    if (index) entry = std::to_string(*index);  // "01" and "1" are one device
    if (!seen.insert(entry).second) {
      return Status::invalidArgument("CUDA_VISIBLE_DEVICES='" + value + "': device " + entry +
                                     " is named twice");
    }
    entries.push_back(entry);
  }
  return entries;
}

// SLURM_TASKS_PER_NODE ("2(x3),1": 2 tasks on each of 3 nodes, then 1) at node `node`.
Result<int> slurmTasksOnNode(const std::string& value, int node) {
  const Status malformed = Status::invalidArgument("SLURM_TASKS_PER_NODE='" + value +
                                                   "' is not a list of N or N(xK) with N, K >= 1");
  int nodesSeen = 0;
  std::optional<int> found;
  for (const std::string& raw : splitCommas(value)) {
    const std::string part = trimmed(raw);
    const size_t paren = part.find('(');
    std::optional<int> tasks = nonNegativeInt(part.substr(0, paren));
    std::optional<int> repeat = 1;
    if (paren != std::string::npos) {
      if (part.size() < paren + 4 || part.compare(paren, 2, "(x") != 0 || part.back() != ')') {
        return malformed;
      }
      repeat = nonNegativeInt(part.substr(paren + 2, part.size() - paren - 3));
    }
    if (!tasks || !repeat || *tasks < 1 || *repeat < 1) return malformed;
    if (node >= nodesSeen && node - nodesSeen < *repeat) found = *tasks;
    if (nodesSeen > std::numeric_limits<int>::max() - *repeat) return malformed;
    nodesSeen += *repeat;
  }
  // The whole list is read first: a malformed tail is an error on every node.
  if (found) return *found;
  return Status::invalidArgument("SLURM_NODEID=" + std::to_string(node) +
                                 " is beyond SLURM_TASKS_PER_NODE='" + value + "' (" +
                                 std::to_string(nodesSeen) + " nodes)");
}

struct LocalPlace {
  NodeRank rank;
  std::string source, countSource;
};

Result<LocalPlace> localPlace(const DeviceSelectionInput& input) {
  const LauncherEnvironment& e = input.environment;
  if (input.mpiNodeRank) return LocalPlace{*input.mpiNodeRank, "MPI", "MPI"};
  if (e.ompiLocalRank) {
    if (!e.ompiLocalSize) {
      return Status::invalidArgument(
          "OMPI_COMM_WORLD_LOCAL_RANK is set but OMPI_COMM_WORLD_LOCAL_SIZE is not");
    }
    BS_ASSIGN_OR_RETURN(const int rank,
                        variableInt("OMPI_COMM_WORLD_LOCAL_RANK", *e.ompiLocalRank));
    BS_ASSIGN_OR_RETURN(const int size,
                        variableInt("OMPI_COMM_WORLD_LOCAL_SIZE", *e.ompiLocalSize));
    return LocalPlace{{rank, size}, "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"};
  }
  if (e.slurmLocalId) {
    if (!e.slurmTasksPerNode || !e.slurmNodeId) {
      return Status::invalidArgument(
          "SLURM_LOCALID is set but SLURM_TASKS_PER_NODE or SLURM_NODEID is not (the ranks "
          "on this node are unknown)");
    }
    BS_ASSIGN_OR_RETURN(const int rank, variableInt("SLURM_LOCALID", *e.slurmLocalId));
    BS_ASSIGN_OR_RETURN(const int node, variableInt("SLURM_NODEID", *e.slurmNodeId));
    BS_ASSIGN_OR_RETURN(const int size, slurmTasksOnNode(*e.slurmTasksPerNode, node));
    return LocalPlace{{rank, size}, "SLURM_LOCALID", "SLURM_TASKS_PER_NODE"};
  }
  return LocalPlace{{0, 1}, "single process", "single process"};
}

std::string plural(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

LauncherEnvironment launcherEnvironmentOfThisProcess() {
  return {.ompiLocalRank = env("OMPI_COMM_WORLD_LOCAL_RANK"),
          .ompiLocalSize = env("OMPI_COMM_WORLD_LOCAL_SIZE"),
          .slurmLocalId = env("SLURM_LOCALID"),
          .slurmNodeId = env("SLURM_NODEID"),
          .slurmTasksPerNode = env("SLURM_TASKS_PER_NODE"),
          .cudaVisibleDevices = env("CUDA_VISIBLE_DEVICES")};
}

const char* collectivePathName(CollectivePath path) {
  return path == CollectivePath::kNccl ? "nccl" : "host-staged";
}

std::string DeviceSelection::describe() const {
  std::string s = "local rank " + std::to_string(localRank) + " of " + std::to_string(localSize) +
                  " (" + rankSource + "): GPU " + std::to_string(device);
  if (physicalDevice != std::to_string(device)) {
    s += " = CUDA_VISIBLE_DEVICES entry '" + physicalDevice + "'";
  }
  if (sharesItsGpu) s += ", shared";
  s += std::string(", ") + collectivePathName(collectives) + " collectives";
  return s;
}

Result<DeviceSelection> selectDevice(const DeviceSelectionInput& input) {
  std::optional<std::vector<std::string>> entries;
  if (input.environment.cudaVisibleDevices) {
    BS_ASSIGN_OR_RETURN(entries, visibleDeviceEntries(*input.environment.cudaVisibleDevices));
  }
  BS_ASSIGN_OR_RETURN(const LocalPlace place, localPlace(input));
  const int rank = place.rank.localRank, size = place.rank.localSize;
  if (size < 1 || rank < 0 || rank >= size) {
    return Status::invalidArgument("local rank " + std::to_string(rank) + " (" + place.source +
                                   ") is not below the node's rank count " + std::to_string(size) +
                                   " (" + place.countSource + ")");
  }
  const int devices = input.visibleDevices;
  if (devices <= 0) {
    if (entries && entries->empty()) {
      return Status::failedPrecondition("no GPU visible: CUDA_VISIBLE_DEVICES='" +
                                        *input.environment.cudaVisibleDevices +
                                        "' hides every device");
    }
    return Status::failedPrecondition("no GPU visible: CUDA finds " + std::to_string(devices) +
                                      " devices");
  }
  if (entries && static_cast<int>(entries->size()) < devices) {
    return Status::invalidArgument(
        "CUDA_VISIBLE_DEVICES='" + *input.environment.cudaVisibleDevices + "' names " +
        plural(static_cast<int>(entries->size()), "device", "devices") + " but CUDA sees " +
        std::to_string(devices) + " (was it changed after CUDA started?)");
  }
  const bool nodeShares = size > devices;
  if (nodeShares && !input.allowSharing) {
    return Status::failedPrecondition(
        plural(size, "rank", "ranks") + " on this node (" + place.countSource + ") but " +
        plural(devices, "GPU", "GPUs") +
        " visible: ranks would share a GPU, which is not allowed here");
  }
  DeviceSelection s;
  s.device = rank % devices;
  s.localRank = rank;
  s.localSize = size;
  s.rankSource = place.source;
  s.physicalDevice = entries ? (*entries)[s.device] : std::to_string(s.device);
  // Ranks d, d + D, d + 2D, ... use device d: more than one when d + D < size.
  s.sharesItsGpu = s.device + devices < size;
  s.collectives = nodeShares ? CollectivePath::kHostStaged : CollectivePath::kNccl;
  return s;
}

}  // namespace bubblescope::engine
