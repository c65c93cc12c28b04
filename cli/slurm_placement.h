// Where the tasks of a Slurm job `run` starts with srun are placed, so that
// the trace collector (collected_job.h) runs on the launching machine: the
// node `run` itself runs on (the batch host under sbatch). srun has no
// per-task host list of its own, so the placement is one node per task in a
// file srun reads (SLURM_HOSTFILE with --distribution=arbitrary): the
// trainers in Slurm's block order over the allocation, the collector last.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace bubblescope::cli {

struct SlurmPlacement {
  std::vector<std::string> taskNodes;  // one per task, the collector's last
  std::string collectorNode;
  // False when `run` runs outside the allocation (salloc on a login node):
  // Slurm cannot start a task on this machine, and the collector runs on the
  // allocation's first node, writing the trace there.
  bool collectorHere = true;
};

// One node per task in Slurm's block order: nodes[i] repeated as often as
// SLURM_TASKS_PER_NODE says ("2(x3),1": two tasks on each of the first three
// nodes, one on the fourth), the first `tasks` of them (continuing round the
// nodes when `tasks` is more than the allocation holds). Error when
// `tasksPerNode` is malformed or names another number of nodes.
Result<std::vector<std::string>> blockTaskNodes(const std::vector<std::string>& nodes,
                                                const std::string& tasksPerNode, int tasks);

// The node of `nodes` this process runs on: SLURMD_NODENAME (set in a batch
// script and in every task), or this host's short name when `nodes` holds
// it; "" when this machine is not in the allocation.
std::string launchingNode(const std::vector<std::string>& nodes);

// The placement of `trainers` tasks and the collector in the current
// allocation (SLURM_JOB_NODELIST expanded by `scontrol show hostnames`,
// SLURM_TASKS_PER_NODE), or why it cannot be made.
Result<SlurmPlacement> placeCollectedJob(int trainers);

// The placement as srun's SLURM_HOSTFILE: a file of its own, removed when
// this object is destroyed (after the job).
class TaskHostfile {
 public:
  static Result<TaskHostfile> write(const std::vector<std::string>& taskNodes);
  TaskHostfile(TaskHostfile&& other) noexcept;
  TaskHostfile& operator=(TaskHostfile&&) = delete;
  ~TaskHostfile();
  const std::string& path() const { return path_; }

 private:
  explicit TaskHostfile(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace bubblescope::cli
