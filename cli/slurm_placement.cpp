#include "cli/slurm_placement.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "storage/process_identity.h"

namespace bubblescope::cli {
namespace {

std::string envOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

// stdout of a shell command, or why it failed.
Result<std::string> commandOutput(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return Status::ioError("cannot run: " + command);
  std::string out;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  if (::pclose(pipe) != 0) return Status::ioError("'" + command + "' failed: " + out);
  return out;
}

}  // namespace

Result<std::vector<std::string>> blockTaskNodes(const std::vector<std::string>& nodes,
                                                const std::string& tasksPerNode, int tasks) {
  const std::string bad = "SLURM_TASKS_PER_NODE '" + tasksPerNode + "'";
  if (nodes.empty()) return Status::invalidArgument("the allocation names no node");
  static const std::regex kGroup(R"(^(\d{1,6})(?:\(x(\d{1,6})\))?$)");
  std::vector<int> counts;
  std::stringstream groups(tasksPerNode);
  for (std::string group; std::getline(groups, group, ',');) {
    std::smatch m;
    if (!std::regex_match(group, m, kGroup)) return Status::invalidArgument(bad + " is malformed");
    const int repeat = m[2].matched ? std::stoi(m[2].str()) : 1;
    if (repeat > static_cast<int>(nodes.size())) break;  // caught below
    counts.insert(counts.end(), repeat, std::stoi(m[1].str()));
  }
  if (counts.size() != nodes.size()) {
    return Status::invalidArgument(bad + " does not name " + std::to_string(nodes.size()) +
                                   " nodes");
  }
  std::vector<std::string> block;
  for (size_t i = 0; i < nodes.size(); ++i) block.insert(block.end(), counts[i], nodes[i]);
  std::vector<std::string> placed;
  for (int t = 0; t < tasks; ++t) {
    placed.push_back(t < static_cast<int>(block.size()) ? block[t]
                                                        : nodes[(t - block.size()) % nodes.size()]);
  }
  return placed;
}

std::string launchingNode(const std::vector<std::string>& nodes) {
  const std::string slurmd = envOr("SLURMD_NODENAME", "");
  if (!slurmd.empty()) return slurmd;
  std::string host = storage::currentHostName();
  host = host.substr(0, host.find('.'));
  return std::find(nodes.begin(), nodes.end(), host) != nodes.end() ? host : "";
}

Result<SlurmPlacement> placeCollectedJob(int trainers) {
  const std::string nodeList = envOr("SLURM_JOB_NODELIST", envOr("SLURM_NODELIST", ""));
  if (nodeList.empty()) return Status::failedPrecondition("SLURM_JOB_NODELIST is not set");
  BS_ASSIGN_OR_RETURN(const std::string listed,
                      commandOutput("scontrol show hostnames '" + nodeList + "' 2>&1"));
  std::vector<std::string> nodes;
  std::istringstream words(listed);
  for (std::string w; words >> w;) nodes.push_back(w);
  BS_ASSIGN_OR_RETURN(std::vector<std::string> tasks,
                      blockTaskNodes(nodes, envOr("SLURM_TASKS_PER_NODE", ""), trainers));
  SlurmPlacement p;
  p.collectorNode = launchingNode(nodes);
  if (p.collectorNode.empty()) {
    p.collectorNode = nodes.front();
    p.collectorHere = false;
  }
  p.taskNodes = std::move(tasks);
  p.taskNodes.push_back(p.collectorNode);
  return p;
}

Result<TaskHostfile> TaskHostfile::write(const std::vector<std::string>& taskNodes) {
  std::string path = envOr("TMPDIR", "/tmp") + "/bubblescope-tasks-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) return Status::ioError("cannot create the task host file " + path);
  TaskHostfile file(path);
  std::string text;
  for (const auto& node : taskNodes) text += node + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written) return Status::ioError("cannot write the task host file " + path);
  return Result<TaskHostfile>(std::move(file));
}

TaskHostfile::TaskHostfile(TaskHostfile&& other) noexcept : path_(std::move(other.path_)) {
  other.path_.clear();
}

TaskHostfile::~TaskHostfile() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

}  // namespace bubblescope::cli
