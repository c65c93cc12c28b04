// `bubblescope-cli run`: validates a layout, begins its run in the trace
// file, starts one `train --layout` rank per process with mpirun (srun under
// Slurm), streams their output, and exits with the job's status. A failed
// rank is named, and the trace's run is marked failed with that message.
// With a trace, the job holds one more process, the collector (`collect`,
// cli/collected_job.h), on this machine: the trace file is written here
// whatever hosts the ranks run on (under srun: on this node of the
// allocation, cli/slurm_placement.h).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/hang_watchdog.h"
#include "cli/job_failure.h"
#include "cli/job_process.h"
#include "cli/launched_run.h"
#include "cli/layout_flags.h"
#include "cli/mpirun.h"
#include "cli/parent_watch.h"
#include "cli/run_description.h"
#include "cli/slurm_placement.h"
#include "cli/train_layout.h"
#include "engine/backend_factory.h"
#include "engine/layout/hostfile.h"
#include "storage/process_identity.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"

namespace bubblescope::cli {
namespace {

// 30 days: a longer timeout is no watchdog, and seconds x 10^9 stays far
// inside int64 (18446744073709552 s used to wrap to 384 ms).
constexpr int64_t kMaxHangTimeoutS = 30 * 24 * 3600;

// The most ranks `run` starts unless --max-ranks raises it: a typo such as
// --dp 1000000 is refused before anything starts.
constexpr int64_t kDefaultMaxRanks = 4096;
constexpr int64_t kMaxMpiRanks = 2147483647;
// After a stop signal, how long the job has to end before it is killed.
constexpr int kStopGraceMs = 3000;

// `run`'s flags: the layout flags it shares with `simulate`, then its own.
struct RunArgs {
  LayoutFlags layout;
  std::optional<int32_t> np;
  int64_t maxRanks = kDefaultMaxRanks;
  int64_t hangTimeoutS = 300;      // 0: no watchdog; at most kMaxHangTimeoutS
  std::vector<std::string> netIf;  // --net-if
  std::string trace;
  std::string name;
  std::string injectFailure;  // tests: passed to every rank's train
  std::string save;           // checkpoint of the whole model at the end (rank 0 writes it)
};

// Everything that would stop the job, in one message.
struct Plan {
  layout::Layout layout;
  std::string launcher;            // the path of mpirun or srun
  std::string mpiPlugin;           // srun's --mpi ("": Slurm's choice)
  std::vector<std::string> hosts;  // the layout's hosts, or its hostfile's
  int64_t worldSize = 1;
};

Result<Plan> plan(const RunArgs& a) {
  std::vector<std::string> problems;
  Plan p;
  std::optional<int32_t> worldSize = a.np;
  if (!worldSize && underSlurm() && std::getenv("SLURM_NTASKS") != nullptr) {
    const long long tasks = std::strtoll(std::getenv("SLURM_NTASKS"), nullptr, 10);
    worldSize = static_cast<int32_t>(std::clamp<long long>(tasks, 0, kMaxMpiRanks));
  }
  auto j = layoutJson(a.layout);
  bool layoutOk = false;
  if (!j.isOk()) {
    problems.push_back(j.status().message());
  } else {
    auto parsed = layout::layoutFromJson(*j, worldSize);
    if (parsed.isOk()) {
      p.layout = *parsed;
      layoutOk = true;
    } else {
      problems.push_back(parsed.status().message());
    }
  }
  if (layoutOk) {
    const std::string unsupported = unsupportedLayoutFeature(p.layout);
    if (!unsupported.empty()) problems.push_back(unsupported);
  }
  p.worldSize = worldSize ? int64_t{*worldSize} : (layoutOk ? p.layout.worldSize() : 1);
  if (!a.save.empty()) {
    const std::filesystem::path dir = std::filesystem::absolute(a.save).parent_path();
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      problems.push_back("--save: directory '" + dir.string() + "' does not exist");
    }
  }
  // --hang-timeout and --max-ranks are range-checked where they are parsed.
  if (layoutOk && p.worldSize > a.maxRanks) {
    problems.push_back("world size " + std::to_string(p.worldSize) + " is more than " +
                       std::to_string(a.maxRanks) + " ranks; raise the limit with --max-ranks");
  }
  auto launcher = underSlurm() ? findSrun() : findMpirun();
  if (!launcher.isOk()) problems.push_back(launcher.status().message());
  if (underSlurm() && launcher.isOk()) {
    auto plugin = srunMpiPlugin(*launcher);
    if (plugin.isOk()) {
      p.mpiPlugin = *plugin;
    } else {
      problems.push_back(plugin.status().message());
    }
  }
  p.hosts = layoutOk ? p.layout.hosts : std::vector<std::string>{};
  if (layoutOk && !p.layout.hostfile.empty() && !underSlurm()) {
    auto hosts = layout::hostfileHosts(p.layout.hostfile);
    if (hosts.isOk()) {
      p.hosts = *hosts;
    } else {
      problems.push_back(hosts.status().message());
    }
  }
  if (!problems.empty()) {
    std::string message;
    for (const auto& s : problems) message += (message.empty() ? "" : "; ") + s;
    return Status::invalidArgument(message);
  }
  p.launcher = *launcher;
  return p;
}

// The job's argv: the launcher, each rank's `train`, and with a trace the
// collector (mpirun: an app context of its own on this machine; srun: one
// more task of the same program, placed by `taskHostfile`).
std::vector<std::string> jobCommand(const Plan& p, const RunArgs& a,
                                    std::vector<std::string> program,
                                    std::vector<std::string> collector,
                                    const std::string& taskHostfile) {
  if (underSlurm()) {
    SrunRequest request;
    request.ranks = static_cast<int>(p.worldSize);
    request.program = std::move(program);
    request.mpiPlugin = p.mpiPlugin;
    request.taskHostfile = taskHostfile;
    request.netIf = a.netIf;
    return srunCommand(p.launcher, request);
  }
  MpirunRequest request;
  request.ranks = static_cast<int>(p.worldSize);  // bounded by --max-ranks above
  request.hosts = p.hosts;
  request.netIf = a.netIf;
  request.program = std::move(program);
  request.collector = std::move(collector);
  return mpirunCommand(p.launcher, request);
}

// Under srun, the collector's task and its node: this one when `run` runs in
// the allocation. Prints where the trace is written; a missing placement
// is an error (nothing has started yet).
Result<TaskHostfile> placeSrunCollector(const Plan& p) {
  BS_ASSIGN_OR_RETURN(SlurmPlacement placement, placeCollectedJob(static_cast<int>(p.worldSize)));
  if (!placement.collectorHere) {
    std::fprintf(stderr,
                 "run: this machine is not a node of the allocation, where Slurm starts tasks: "
                 "the trace collector runs on %s, the allocation's first node, and writes the "
                 "trace there (put it on a shared file system)\n",
                 placement.collectorNode.c_str());
  }
  std::printf("run: trace collector on %s (srun task %lld)\n", placement.collectorNode.c_str(),
              static_cast<long long>(p.worldSize));
  return TaskHostfile::write(placement.taskNodes);
}

// The last span of `rank` that reached the trace, e.g. "forward (step 13,
// micro-batch 0)"; "" when there is none or no trace.
std::string lastSpanOf(const std::string& trace, int64_t runId, int rank, int64_t lookBackNs) {
  if (trace.empty() || runId < 0) return "";
  auto reader = storage::TraceReader::open(trace);
  if (!reader.isOk()) return "";
  auto range = (*reader)->timeRange(runId);
  if (!range.isOk()) return "";
  auto events = (*reader)->eventsInWindow(runId, {rank}, range->second - lookBackNs,
                                          std::numeric_limits<int64_t>::max());
  if (!events.isOk() || events->empty()) return "";
  const trace_model::Event* last = &events->front();
  for (const trace_model::Event& e : *events) {
    if (e.endNs > last->endNs) last = &e;
  }
  std::string where = "step " + std::to_string(last->step);
  if (last->microBatch >= 0) where += ", micro-batch " + std::to_string(last->microBatch);
  return last->name + " (" + where + ")";
}

ExitCode runJob(const RunArgs& a) {
  auto planned = plan(a);
  if (!planned.isOk()) {
    std::fprintf(stderr, "error: %s\n", planned.status().message().c_str());
    return 2;
  }
  const Plan& p = *planned;
  std::vector<std::string> argv = {selfExecutable(), "train", "--layout-json",
                                   layout::toJson(p.layout).dump()};
  std::vector<std::string> collector;
  std::optional<TaskHostfile> taskHostfile;  // srun's placement, removed after the job
  // The run exists, with its id, before any rank starts; rank 0 attaches.
  std::optional<LaunchedRun> run;
  int64_t runId = -1;
  if (!a.trace.empty()) {
    auto begun = LaunchedRun::begin(
        a.trace, describeRun(p.layout, static_cast<int32_t>(p.worldSize), a.name));
    if (!begun.isOk()) {
      std::fprintf(stderr, "error: trace file: %s\n", begun.status().message().c_str());
      return 1;
    }
    run = std::move(*begun);
    runId = run->id();
    std::printf("run_id: %lld\n", static_cast<long long>(runId));  // for the app
    std::fflush(stdout);
    argv.insert(argv.end(), {"--trace", a.trace, "--collector"});
    if (underSlurm()) {  // every task runs `train`; the last one collects
      argv.insert(argv.end(), {"--run-id", std::to_string(runId), "--collector-task",
                               std::to_string(p.worldSize)});
      auto placed = placeSrunCollector(p);
      if (!placed.isOk()) {
        const std::string why = "cannot place the trace collector: " + placed.status().message();
        (void)run->end(storage::RunStatus::kFailed, why);
        std::fprintf(stderr, "error: %s\n", why.c_str());
        return 1;
      }
      taskHostfile.emplace(std::move(*placed));
    } else {
      collector = {selfExecutable(), "collect",  "--trace",
                   a.trace,          "--run-id", std::to_string(runId)};
    }
  }
  if (!a.injectFailure.empty()) argv.insert(argv.end(), {"--inject-failure", a.injectFailure});
  if (!a.save.empty()) {
    argv.insert(argv.end(), {"--save", std::filesystem::absolute(a.save).string()});
  }
  // The ranks end themselves when this process is gone (parent_watch.h).
  const std::string self = launcherArgument(storage::currentProcess());
  argv.insert(argv.end(), {"--launcher", self});
  if (!collector.empty()) collector.insert(collector.end(), {"--launcher", self});
  argv = jobCommand(p, a, std::move(argv), std::move(collector),
                    taskHostfile ? taskHostfile->path() : "");
  std::printf(
      "run: %lld ranks with %s%s\n", static_cast<long long>(p.worldSize),
      underSlurm() ? "srun" : "mpirun",
      a.trace.empty() ? "" : (", tracing to " + a.trace + " run " + std::to_string(runId)).c_str());
  std::fflush(stdout);
  // On this machine alone, more ranks than cores share them (mpirun is told
  // to oversubscribe): say so now rather than only in the trace's report.
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (p.layout.hosts.empty() && p.layout.hostfile.empty() && !underSlurm() && cores > 0 &&
      p.worldSize > cores) {
    std::fprintf(stderr,
                 "note: %lld ranks on %ld cores: the ranks share cores (oversubscribed), so "
                 "steps take longer than on %lld cores\n",
                 static_cast<long long>(p.worldSize), cores, static_cast<long long>(p.worldSize));
  }
  JobFailure failure;
  // A traced job's collector beats too: watched for silence (F8 of issue 32).
  HangWatchdog watchdog(static_cast<int>(p.worldSize), a.hangTimeoutS * 1000,
                        /*watchCollector=*/!a.trace.empty());
  std::optional<HangWatchdog::Hang> hang;
  JobHooks hooks;
  hooks.stopGraceMs = kStopGraceMs;
  hooks.onLine = [&](const std::string& line, bool) {
    if (watchdog.scan(line, monotonicNowMs())) return false;
    failure.scan(line);
    return true;
  };
  hooks.shouldAbort = [&]() -> std::optional<std::string> {
    hang = watchdog.check(monotonicNowMs());
    if (!hang) return std::nullopt;
    if (hang->collector) return std::string("the trace collector hangs");
    return "rank " + std::to_string(hang->rank) + " hangs";
  };
  auto job = runJobProcess(argv, hooks);
  if (!job.isOk()) {
    std::fprintf(stderr, "error: %s\n", job.status().message().c_str());
    return 1;
  }
  // Rank 0 is gone: the launcher ends the run it began. A run rank 0
  // already ended keeps its own status and message.
  auto endRun = [&](storage::RunStatus status, const std::string& message) {
    return run.has_value() && run->end(status, message);
  };
  if (job->stopSignal != 0) {
    const std::string why = "stopped by " + signalName(job->stopSignal);
    const bool marked = endRun(storage::RunStatus::kStopped, why);
    std::fprintf(stderr, "run: %s%s\n", why.c_str(),
                 marked ? ("; run " + std::to_string(runId) + " marked stopped").c_str() : "");
    return 128 + job->stopSignal;
  }
  if (hang && hang->collector) {
    const std::string message =
        "the trace collector (MPI rank " + std::to_string(hang->rank) + ") sent no heartbeat for " +
        std::to_string(hang->stalledMs / 1000) + " s (--hang-timeout " +
        std::to_string(a.hangTimeoutS) +
        "): it is stopped or frozen, and the spans the ranks sent since are not in the trace; "
        "the watchdog aborted the job";
    endRun(storage::RunStatus::kFailed, message);
    std::fprintf(stderr, "error: %s\n", message.c_str());
    return 1;
  }
  if (hang) {
    const std::string span =
        lastSpanOf(a.trace, runId, hang->rank, (a.hangTimeoutS + 60) * int64_t{1000000000});
    const std::string message =
        "rank " + std::to_string(hang->rank) + " made no progress for " +
        std::to_string(hang->stalledMs / 1000) + " s (--hang-timeout " +
        std::to_string(a.hangTimeoutS) + "); its last span: " +
        lastProgressText(span, hang->lastStep) +
        "; the watchdog aborted the job";
    endRun(storage::RunStatus::kFailed, message);
    std::fprintf(stderr, "error: %s\n", message.c_str());
    return 1;
  }
  if (job->exitCode == 0) return 0;
  // The collector is the job's last process (rank worldSize of mpirun's).
  const std::optional<int> collectorRank =
      a.trace.empty() ? std::nullopt : std::optional<int>(static_cast<int>(p.worldSize));
  const std::string message = failure.message(job->exitCode, collectorRank);
  endRun(storage::RunStatus::kFailed, message);
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return job->exitCode;
}

}  // namespace

void addRunCommand(Command app, CommandRunner& runner) {
  auto a = std::make_shared<RunArgs>();
  Command cmd = app.subcommand(
      "run", "Launch a parallel training run (mpirun, or srun under Slurm) and stream it");
  addLayoutFlags(cmd, a->layout);
  cmd.option("--net-if", a->netIf,
             "Network interfaces (or CIDR networks) MPI may use, comma-separated "
             "(default: loopback when every rank is on this machine)")
      .delimiter(',');
  cmd.option("--np", a->np, "Processes to launch (default dp x tp x pp; must match it)");
  cmd.option("--max-ranks", a->maxRanks,
             "Refuse a world of more ranks than this before anything starts")
      .showDefault()
      .positive();
  cmd.option("--trace", a->trace, "Trace file (.db) the run streams into");
  cmd.option("--hang-timeout", a->hangTimeoutS,
             "Abort the job when a rank makes no progress for this many seconds (0: off)")
      .showDefault()
      .range(0, kMaxHangTimeoutS);
  cmd.option("--name", a->name, "Name of the run in the trace (default e.g. 'dp2-zero1 tiny')");
  cmd.option("--save", a->save,
             "Write the whole model (parameters, AdamW state) at the end as the "
             "single-process checkpoint of the same global batch (rank 0 writes it)");
  cmd.option("--inject-failure", a->injectFailure, "RANK:STEP (tests)").hidden();
  cmd.callback([a, &runner] { runner = [a] { return runJob(*a); }; });
}

}  // namespace bubblescope::cli
