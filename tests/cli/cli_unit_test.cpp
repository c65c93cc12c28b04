// Unit tests of bubblescope-cli's library (bubblescope_cli): how a layout
// names its run, and the launcher command lines built for mpirun and srun.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "cli/mpirun.h"
#include "cli/run_description.h"
#include "cli/train_layout.h"
#include "engine/layout/hostfile.h"

namespace bubblescope::cli {
namespace {

TEST(RunName, NamesTheDegreesZeroOverlapScheduleAndModel) {
  layout::Layout l;
  EXPECT_EQ(runName(l), "dp1 tiny");
  l.dp = 2;
  l.tp = 2;
  l.pp = 2;
  l.zeroStage = layout::ZeroStage::kGradients;
  l.overlap = false;
  l.model = layout::modelPreset("small").value();
  l.schedule = layout::ScheduleKind::kOneFOneB;
  EXPECT_EQ(runName(l), "dp2-tp2-pp2-zero2-no-overlap 1f1b small");
  l.zeroStage = layout::ZeroStage::kNone;  // stage 0 is not named
  l.overlap = true;
  EXPECT_EQ(runName(l), "dp2-tp2-pp2 1f1b small");
  // Runs of one layout with different schedules are told apart.
  l.schedule = layout::ScheduleKind::kGPipe;
  EXPECT_EQ(runName(l), "dp2-tp2-pp2 gpipe small");
  l.schedule = layout::ScheduleKind::kInterleaved;
  l.virtualChunks = 2;
  EXPECT_EQ(runName(l), "dp2-tp2-pp2 interleaved v2 small");
  l.pp = 1;  // no pipeline: no schedule
  EXPECT_EQ(runName(l), "dp2-tp2 small");
  l.tp = 1;
  l.ep = 2;  // expert parallel runs are told apart from the dp run (plan writes both)
  EXPECT_EQ(runName(l), "dp2-ep2 small");
}

// Single-process `train` describes its run as `run` does, from its layout: the
// 1x1x1 one, which reads back as a valid layout with the options' values.
TEST(RunDescription, SingleProcessTrainIsTheOneByOneByOneLayout) {
  engine::TrainerOptions o;
  o.model = layout::modelPreset("small").value();
  o.batchSize = 4;
  o.microBatches = 3;
  o.seed = 7;
  o.schedule.peak = 0.002;
  o.dataPath = "corpus.txt";
  const layout::Layout l = singleProcessLayout(o, 5, layout::Backend::kCpu);
  const storage::RunInfo info = describeRun(l, 1, "train small");
  EXPECT_EQ(info.name, "train small");
  EXPECT_EQ(info.worldSize, 1);
  EXPECT_EQ(info.backend, "cpu");
  const layout::Layout back = layout::layoutFromString(info.layoutJson, 1).value();
  EXPECT_EQ(back.worldSize(), 1);
  EXPECT_EQ(back.zeroStage, layout::ZeroStage::kNone);
  EXPECT_EQ(back.model, o.model);
  EXPECT_EQ(back.microBatches, 3);
  EXPECT_EQ(back.microBatchSize, 4);
  EXPECT_EQ(back.globalBatch, 12);
  EXPECT_EQ(back.steps, 5);
  EXPECT_EQ(back.seed, 7u);
  EXPECT_DOUBLE_EQ(back.learningRate, 0.002);
  EXPECT_EQ(back.dataFile, "corpus.txt");
  EXPECT_EQ(back, l);
}

TEST(LauncherCommand, SrunRunsOneTaskPerRankAndKillsTheStepOnAFailure) {
  SrunRequest r;
  r.ranks = 8;
  r.program = {"bubblescope-cli", "train", "--layout", "l.json"};
  EXPECT_EQ(srunCommand("/usr/bin/srun", r),
            (std::vector<std::string>{"/usr/bin/srun", "-n", "8", "--kill-on-bad-exit=1",
                                      "--export=ALL,OPENBLAS_NUM_THREADS=1", "bubblescope-cli",
                                      "train", "--layout", "l.json"}));
}

// --net-if under Slurm: the ranks' TCP transport uses the named interfaces
// (srun exports its environment to every task).
TEST(LauncherCommand, SrunPassesNetIfToTheRanksTcpTransport) {
  SrunRequest r;
  r.ranks = 2;
  r.netIf = {"ib0", "10.0.0.0/24"};
  r.program = {"bubblescope-cli", "train"};
  r.listenLibrary = "";  // no listen library: the tasks run as they are
  EXPECT_EQ(
      srunCommand("srun", r),
      (std::vector<std::string>{"env", "OMPI_MCA_btl_tcp_if_include=ib0,10.0.0.0/24", "srun", "-n",
                                "2", "--kill-on-bad-exit=1", "--export=ALL,OPENBLAS_NUM_THREADS=1",
                                "bubblescope-cli", "train"}));
  r.taskHostfile = "/tmp/tasks";
  const std::vector<std::string> collected = srunCommand("srun", r);
  EXPECT_EQ(std::vector<std::string>(collected.begin(), collected.begin() + 4),
            (std::vector<std::string>{"env", "SLURM_HOSTFILE=/tmp/tasks",
                                      "OMPI_MCA_btl_tcp_if_include=ib0,10.0.0.0/24", "srun"}));
  // With the listen library every task (not srun) binds its listeners to
  // the net's address.
  r.taskHostfile.clear();
  r.listenLibrary = "/opt/bubblescope/libbubblescope_listen.so";
  ::unsetenv("LD_PRELOAD");
  EXPECT_EQ(srunCommand("srun", r),
            (std::vector<std::string>{
                "env", "OMPI_MCA_btl_tcp_if_include=ib0,10.0.0.0/24", "srun", "-n", "2",
                "--kill-on-bad-exit=1", "--export=ALL,OPENBLAS_NUM_THREADS=1", "env",
                "LD_PRELOAD=/opt/bubblescope/libbubblescope_listen.so",
                "BUBBLESCOPE_LISTEN_NET=ib0,10.0.0.0/24", "bubblescope-cli", "train"}));
  // Without --net-if nothing is preloaded.
  r.netIf.clear();
  EXPECT_EQ(srunCommand("srun", r).back(), "train");
  EXPECT_EQ(srunCommand("srun", r).front(), "srun");
}

TEST(LauncherCommand, SrunWithACollectorStartsOneMoreTaskPlacedByTheTaskHostfile) {
  SrunRequest r;
  r.ranks = 4;
  r.mpiPlugin = "pmix";
  r.taskHostfile = "/tmp/tasks";
  r.program = {"bubblescope-cli", "train", "--collector-task", "4"};
  EXPECT_EQ(srunCommand("srun", r),
            (std::vector<std::string>{"env", "SLURM_HOSTFILE=/tmp/tasks", "srun", "-n", "5",
                                      "--kill-on-bad-exit=1", "--export=ALL,OPENBLAS_NUM_THREADS=1",
                                      "--distribution=arbitrary", "--overcommit", "--mpi=pmix",
                                      "bubblescope-cli", "train", "--collector-task", "4"}));
}

TEST(LauncherCommand, MpirunStartsTheRanksOnTheNamedHostsWithTheProgramLast) {
  MpirunRequest r;
  r.ranks = 4;
  r.hosts = {"a:2", "b:2"};
  r.program = {"bubblescope-cli", "train", "--layout", "l.json"};
  const std::vector<std::string> argv = mpirunCommand("mpirun", r);
  ASSERT_GE(argv.size(), 7u);
  EXPECT_EQ(argv[0], "mpirun");
  const auto np = std::find(argv.begin(), argv.end(), "-np");
  ASSERT_NE(np, argv.end());
  EXPECT_EQ(*(np + 1), "4");
  const auto host = std::find(argv.begin(), argv.end(), "--host");
  ASSERT_NE(host, argv.end());
  EXPECT_EQ(*(host + 1), "a:2,b:2");
  EXPECT_TRUE(std::equal(r.program.rbegin(), r.program.rend(), argv.rbegin()))
      << "the rank's argv comes last";
  // Hosts given: mpirun places the ranks, nothing oversubscribes this machine.
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--oversubscribe"), 0);
  r.hosts.clear();
  r.hostfile = "hosts.txt";
  const std::vector<std::string> withFile = mpirunCommand("mpirun", r);
  const auto file = std::find(withFile.begin(), withFile.end(), "--hostfile");
  ASSERT_NE(file, withFile.end());
  EXPECT_EQ(*(file + 1), "hosts.txt");
}

// --net-if: OpenMPI's transports use the net, and its wildcard listeners
// (mpirun's, the ranks', and those of the daemons it starts over ssh) are
// bound to each host's address on it by the preloaded listen-bind library.
TEST(LauncherCommand, NetIfBindsEveryListenerOfTheJobToTheNet) {
  MpirunRequest r;
  r.ranks = 4;
  r.hosts = {"a:2", "b:2"};
  r.netIf = {"10.0.0.0/24", "eth1"};
  r.listenLibrary = "/opt/bs/libbubblescope_listen.so";
  r.program = {"bubblescope-cli", "train"};
  const std::vector<std::string> argv = mpirunCommand("mpirun", r);
  ASSERT_GE(argv.size(), 4u);
  EXPECT_EQ(argv[0], "env");
  EXPECT_EQ(argv[1].rfind("LD_PRELOAD=/opt/bs/libbubblescope_listen.so", 0), 0u) << argv[1];
  EXPECT_EQ(argv[2], "BUBBLESCOPE_LISTEN_NET=10.0.0.0/24,eth1");
  EXPECT_EQ(argv[3], "mpirun");
  auto after = [&](const std::string& a, const std::string& b) {
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == a && argv[i + 1] == b) return argv[std::min(i + 2, argv.size() - 1)];
    }
    return std::string("(missing)");
  };
  EXPECT_EQ(after("--mca", "btl_tcp_if_include"), "10.0.0.0/24,eth1");
  EXPECT_EQ(after("--mca", "oob_tcp_if_include"), "10.0.0.0/24,eth1");
  EXPECT_EQ(after("--mca", "orte_launch_agent"),
            "env LD_PRELOAD=/opt/bs/libbubblescope_listen.so "
            "BUBBLESCOPE_LISTEN_NET=10.0.0.0/24,eth1 orted");
  EXPECT_NE(after("-x", "LD_PRELOAD"), "(missing)") << "the ranks on other hosts get it";
  EXPECT_NE(after("-x", "BUBBLESCOPE_LISTEN_NET"), "(missing)");
  // Other hosts without --net-if: OpenMPI's choice, nothing preloaded.
  r.netIf.clear();
  const std::vector<std::string> open = mpirunCommand("mpirun", r);
  EXPECT_EQ(open[0], "mpirun");
  EXPECT_EQ(std::count(open.begin(), open.end(), "orte_launch_agent"), 0);
  // This machine alone: loopback, the library without a net.
  r.hosts.clear();
  const std::vector<std::string> local = mpirunCommand("mpirun", r);
  ASSERT_GE(local.size(), 3u);
  EXPECT_EQ(local[1].rfind("LD_PRELOAD=/opt/bs/libbubblescope_listen.so", 0), 0u);
  EXPECT_EQ(local[2], "mpirun");
}

TEST(LauncherCommand, TheCollectorIsTheLastAppContextOnThisMachine) {
  MpirunRequest r;
  r.ranks = 4;
  r.hosts = {"a:2", "b:2"};
  r.program = {"bubblescope-cli", "train", "--collector"};
  r.collector = {"bubblescope-cli", "collect", "--trace", "t.db", "--run-id", "1"};
  const std::vector<std::string> argv = mpirunCommand("mpirun", r);
  const auto colon = std::find(argv.begin(), argv.end(), ":");
  ASSERT_NE(colon, argv.end());
  // Ranks first (world ranks 0..3 on the named hosts), then one collector on
  // mpirun's own host.
  EXPECT_EQ(std::vector<std::string>(colon - 3, colon),
            (std::vector<std::string>{"bubblescope-cli", "train", "--collector"}));
  EXPECT_EQ(*(std::find(argv.begin(), colon, "--host") + 1), "a:2,b:2");
  std::vector<std::string> tail = {":", "-np", "1", "--host", "localhost"};
  tail.insert(tail.end(), r.collector.begin(), r.collector.end());
  EXPECT_EQ(std::vector<std::string>(colon, argv.end()), tail);
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--hostfile"), 0);
}

TEST(LauncherCommand, HostfileHostsBecomeHostEntries) {
  const std::string path = ::testing::TempDir() + "/hostfile-test";
  {
    std::ofstream out(path);
    out << "# cluster\nnode1 slots=4\n\n  node2   max_slots=8 slots=2 # two\nnode3\n";
  }
  auto hosts = layout::hostfileHosts(path);
  ASSERT_TRUE(hosts.isOk()) << hosts.status().message();
  EXPECT_EQ(*hosts, (std::vector<std::string>{"node1:4", "node2:2", "node3"}));
  {
    std::ofstream out(path);
    out << "# nothing\n";
  }
  EXPECT_EQ(layout::hostfileHosts(path).status().message(),
            "hostfile '" + path + "' names no host");
  EXPECT_FALSE(layout::hostfileHosts(path + ".missing").isOk());
}

}  // namespace
}  // namespace bubblescope::cli
