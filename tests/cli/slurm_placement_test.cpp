// Where `run` places an srun job's tasks so the trace collector runs on the
// launching node (cli/slurm_placement.h).
#include "cli/slurm_placement.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>

namespace bubblescope::cli {
namespace {

using Nodes = std::vector<std::string>;

TEST(SlurmPlacement, TrainersFollowSlurmsBlockOrderOverTheAllocation) {
  const Nodes nodes = {"n1", "n2", "n3", "n4"};
  auto placed = blockTaskNodes(nodes, "2(x3),1", 7);
  ASSERT_TRUE(placed.isOk()) << placed.status().message();
  EXPECT_EQ(*placed, (Nodes{"n1", "n1", "n2", "n2", "n3", "n3", "n4"}));
  // Fewer ranks than the allocation's tasks: the first ones, in block order.
  EXPECT_EQ(*blockTaskNodes(nodes, "2(x3),1", 3), (Nodes{"n1", "n1", "n2"}));
  // More (run --np): the rest go round the nodes.
  EXPECT_EQ(*blockTaskNodes({"a", "b"}, "1(x2)", 5), (Nodes{"a", "b", "a", "b", "a"}));
}

TEST(SlurmPlacement, AMalformedOrMismatchedTaskCountIsNamed) {
  EXPECT_EQ(blockTaskNodes({"a", "b"}, "2(x3)", 2).status().message(),
            "SLURM_TASKS_PER_NODE '2(x3)' does not name 2 nodes");
  EXPECT_EQ(blockTaskNodes({"a"}, "two", 2).status().message(),
            "SLURM_TASKS_PER_NODE 'two' is malformed");
  EXPECT_EQ(blockTaskNodes({"a"}, "", 2).status().message(),
            "SLURM_TASKS_PER_NODE '' does not name 1 nodes");
  EXPECT_FALSE(blockTaskNodes({}, "1", 1).isOk());
}

TEST(SlurmPlacement, TheLaunchingNodeIsSlurmdsNameOrThisHostInTheAllocation) {
  ::setenv("SLURMD_NODENAME", "batch7", 1);
  EXPECT_EQ(launchingNode({"n1", "batch7"}), "batch7");
  ::unsetenv("SLURMD_NODENAME");
  EXPECT_EQ(launchingNode({"n1", "n2"}), "") << "a login node outside the allocation";
}

TEST(SlurmPlacement, TheTaskHostfileListsOneNodePerTaskAndIsRemovedAfterwards) {
  std::string path;
  {
    auto file = TaskHostfile::write({"n1", "n2", "n1"});
    ASSERT_TRUE(file.isOk()) << file.status().message();
    path = file->path();
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), "n1\nn2\nn1\n");
  }
  EXPECT_FALSE(std::ifstream(path).good()) << path << " outlived the job";
}

}  // namespace
}  // namespace bubblescope::cli
