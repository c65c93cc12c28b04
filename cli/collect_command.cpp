// `bubblescope-cli collect`: the trace collector of a job `run` launches
// (cli/collected_job.h). `run` places it on the launching machine as the
// job's last MPI process; it receives every rank's batches over the job's
// own MPI (tracer/trace_session.h, lastRankCollects), aligns nothing of its
// own (its clock is the run's timeline) and writes the trace file there, so
// the app tails it as for a local run whatever hosts the ranks run on. It
// opens no socket of its own. Not meant to be started by hand.
#include <mpi.h>

#include <cstdio>
#include <memory>
#include <optional>

#include "cli/collected_job.h"
#include "cli/commands.h"
#include "cli/heartbeat.h"
#include "cli/parent_watch.h"
#include "storage/trace_writer.h"
#include "tracer/trace_session.h"

namespace bubblescope::cli {
namespace {

struct CollectArgs {
  std::string trace;
  int64_t runId = -1;
  std::string launcher;  // HOST:PID:TICKS of `run`
};

// The collector never trains: a small ring, no samples of its own.
constexpr size_t kCollectorRingSpans = 1024;

Status collect(const CollectArgs& a) {
  BS_ASSIGN_OR_RETURN(auto writer, storage::TraceWriter::open(a.trace));
  BS_RETURN_IF_ERROR(writer->attachRun(a.runId));
  tracer::SessionOptions options;
  options.lastRankCollects = true;
  options.sampleIntervalMs = 0;
  options.recorderCapacity = kCollectorRingSpans;
  // A batch that cannot be written (a full disk) stops the job now: the
  // ranks would otherwise train on with nothing recorded until the end. The
  // steps committed before stay in the file; `run` marks the run failed
  // with this line's reason (JobFailure).
  options.onFirstError = [](const Status& s) {
    std::fprintf(stderr,
                 "error: trace collector: trace file: %s; the job stops (the steps written "
                 "before are kept)\n",
                 s.message().c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  };
  BS_ASSIGN_OR_RETURN(auto session,
                      tracer::TraceSession::start(MPI_COMM_WORLD, writer.get(), {}, options));
  const Status collected = session->finish();  // returns once every rank has finished
  if (!collected.isOk()) {
    (void)writer->finishRun(storage::RunStatus::kFailed, collected.message());
    return collected;
  }
  return writer->finishRun(storage::RunStatus::kFinished);
}

}  // namespace

ExitCode runTraceCollector(const std::string& trace, int64_t runId,
                           const std::string& launcherArgument) {
  const CollectArgs a{trace, runId, launcherArgument};
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::optional<storage::ProcessIdentity> launcher;
  if (auto parsed = parseLauncherArgument(a.launcher); parsed.isOk()) launcher = *parsed;
  watchParent(rank, launcher);
  splitTrainers(/*isCollector=*/true);
  // The trainers' verdict: a trainer that refused to start ends the job.
  if (!agreeToStart(provided >= MPI_THREAD_MULTIPLE)) {
    MPI_Finalize();
    return 0;
  }
  // `run`'s hang watchdog hears the collector too: a stopped or frozen one
  // falls silent (hang_watchdog.h).
  if (!a.launcher.empty()) startHeartbeat(rank);
  const Status s = collect(a);
  if (!s.isOk()) {
    std::fprintf(stderr, "error: trace collector: %s\n", s.message().c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);  // the trainers would wait for it
  }
  MPI_Finalize();
  return 0;
}

void addCollectCommand(Command app, CommandRunner& runner) {
  auto a = std::make_shared<CollectArgs>();
  Command cmd = app.subcommand(
      "collect", "The trace collector of a job `run` launches (its last MPI process)");
  cmd.hidden();  // started by `run`, not by hand
  cmd.option("--trace", a->trace, "Trace file the run streams into").required();
  cmd.option("--run-id", a->runId, "The run `run` began in the trace file").required();
  cmd.option("--launcher", a->launcher, "HOST:PID:TICKS of `run`");
  cmd.callback([a, &runner] {
    runner = [a] { return runTraceCollector(a->trace, a->runId, a->launcher); };
  });
}

}  // namespace bubblescope::cli
