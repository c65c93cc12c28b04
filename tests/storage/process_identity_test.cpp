// Liveness of a run's writer: a process that ended but is not reaped yet (a
// zombie) is gone, so readers do not show its run as running.
#include "storage/process_identity.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace bubblescope::storage {
namespace {

char stateOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  const auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() ? '?' : line[close + 2];
}

TEST(ProcessIdentityTest, ThisProcessIsAlive) {
  EXPECT_EQ(livenessOf(currentProcess()), Liveness::kAlive);
  EXPECT_GT(currentProcess().startTicks, 0);
}

TEST(ProcessIdentityTest, AnotherHostIsUnknown) {
  ProcessIdentity p = currentProcess();
  p.host += ".elsewhere";
  EXPECT_EQ(livenessOf(p), Liveness::kUnknown);
}

TEST(ProcessIdentityTest, ZombieIsGone) {
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char c;
    close(go[1]);
    (void)!read(go[0], &c, 1);
    _exit(0);
  }
  close(go[0]);
  const ProcessIdentity identity = processIdentityOf(child);
  EXPECT_GT(identity.startTicks, 0);
  EXPECT_EQ(livenessOf(identity), Liveness::kAlive);
  close(go[1]);  // the child exits; it stays a zombie until waitpid
  // Waits for the exit without reaping it (WNOWAIT): a zombie from here on.
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);
  ASSERT_EQ(stateOf(child), 'Z');
  EXPECT_EQ(livenessOf(identity), Liveness::kGone);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(livenessOf(identity), Liveness::kGone);
}

}  // namespace
}  // namespace bubblescope::storage
