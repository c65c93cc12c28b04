// JobFailure's sentence: which process failed, named as the user knows it.
#include "cli/job_failure.h"

#include <gtest/gtest.h>

namespace bubblescope::cli {
namespace {

TEST(JobFailureTest, ARankKilledByASignalIsNamed) {
  JobFailure f;
  f.scan("mpirun noticed that process rank 1 with PID 123 on node n exited on signal 9 (Killed).");
  EXPECT_EQ(f.message(137, 2), "rank 1 was killed by signal 9 (Killed)");
}

// In a dp 2 job the collector is mpirun's process 2: it is not "rank 2".
TEST(JobFailureTest, TheCollectorIsCalledTheTraceCollector) {
  JobFailure f;
  f.scan("mpirun noticed that process rank 2 with PID 123 on node n exited on signal 9 (Killed).");
  EXPECT_EQ(f.message(137, 2), "the trace collector was killed by signal 9 (Killed)");
  EXPECT_EQ(f.message(137), "rank 2 was killed by signal 9 (Killed)");  // no collector
}

// mpirun itself killed (SIGKILL): no rank failed; exit code 137 is the signal.
TEST(JobFailureTest, ALauncherEndedByASignalSaysWhichSignal) {
  const JobFailure f;
  EXPECT_EQ(f.message(137),
            "the job's launcher was ended by signal 9 (Killed) before any rank reported a failure");
  EXPECT_EQ(f.message(3), "the job failed with exit code 3");
}

// A collector that cannot write (a full disk) aborts the job and says why.
TEST(JobFailureTest, TheCollectorsOwnReasonIsTheJobsFailure) {
  JobFailure f;
  f.scan("error: trace collector: trace file: database or disk is full; the job stops");
  f.scan("MPI_ABORT was invoked on rank 2 in communicator MPI_COMM_WORLD");
  EXPECT_EQ(f.message(1, 2),
            "the trace collector failed: trace file: database or disk is full; the job stops");
}

}  // namespace
}  // namespace bubblescope::cli
