// `bubblescope-cli calibrate --trace F [--run ID] [--json]`: a cost model of
// this machine extracted from a measured run of F (the newest finished one
// by default), stored in F's calibration tables (docs/prediction.md).
// `calibrate --model M --world N [--hosts H,...] --trace F`: without a run,
// a short micro-benchmark of M's layers and of the collectives (real short
// runs into F, on this machine or the hosts, cli/calibrate_benchmark.h),
// stored the same way.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/calibrate_benchmark.h"
#include "cli/codec_calibration.h"
#include "cli/commands.h"
#include "cli/contention_probe.h"
#include "cli/layout_flags.h"
#include "common/median.h"
#include "planning/contention.h"
#include "storage/analysis/calibration_text.h"
#include "storage/analysis/run_calibration.h"
#include "storage/calibration_store.h"
#include "storage/process_identity.h"
#include "storage/trace_reader.h"

namespace bubblescope::cli {
namespace {

struct CalibrateArgs {
  std::string trace;
  int64_t runId = 0;  // 0: the newest finished measured run
  std::string name;
  bool json = false;
  std::string model;  // set: the micro-benchmark instead of a run
  int32_t world = 2;
  int32_t steps = 8;  // 3 gave predictions up to 40 % apart run to run (docs/prediction.md)
  BenchmarkHosts where;  // --hosts, --net-if
  MoeFlags moe;          // --experts etc. (with --model): the preset made a mixture of experts
};

Result<int64_t> pickRun(storage::TraceReader& reader, const std::string& path) {
  BS_ASSIGN_OR_RETURN(auto runs, reader.runs());
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
    if (!it->info.simulated && it->status == storage::RunStatus::kFinished) return it->id;
  }
  return Status::notFound(path +
                          " holds no finished measured run to calibrate from: run one "
                          "first (bubblescope-cli run --trace " +
                          path + "), or benchmark this machine (calibrate --model M --world N)");
}

Result<layout::Calibration> fromRun(const CalibrateArgs& a) {
  BS_ASSIGN_OR_RETURN(auto reader, storage::TraceReader::open(a.trace));
  int64_t runId = a.runId;
  if (runId == 0) {
    BS_ASSIGN_OR_RETURN(runId, pickRun(*reader, a.trace));
  }
  BS_ASSIGN_OR_RETURN(layout::Calibration c, analysis::calibrateFromRun(*reader, runId));
  // The compressors' costs are measured on this machine, so only for a run of it.
  if (c.host == storage::currentHostName()) BS_RETURN_IF_ERROR(addCodecCosts(c, /*progress=*/false));
  return c;
}

Result<layout::Calibration> calibrate(const CalibrateArgs& a) {
  layout::Calibration c;
  if (a.model.empty()) {
    if (a.moe.any()) {
      return Status::invalidArgument(
          "--experts, --top-k, --capacity-factor, --moe-every and --aux-loss-coef need --model "
          "(a run's calibration takes the run's model)");
    }
    BS_ASSIGN_OR_RETURN(c, fromRun(a));
  } else {
    BS_ASSIGN_OR_RETURN(const layout::ModelConfig preset, layout::modelPreset(a.model));
    BS_ASSIGN_OR_RETURN(const layout::ModelConfig model, a.moe.appliedTo(preset));
    // The background the runs meet on this machine (planning/contention.h):
    // the median of the probe's readings before them and twice after, so
    // one transient reading (a run that just ended still exiting) does not
    // stand for the calibration; not measured for other hosts.
    const bool here = a.where.hosts.empty();
    std::vector<double> readings;
    if (here) {
      BS_ASSIGN_OR_RETURN(const BackgroundLoad before, measureBackground());
      readings.push_back(before.background);
    }
    BS_ASSIGN_OR_RETURN(c, benchmarkCalibration(model, a.world, a.trace, a.steps, a.where));
    if (here) {
      for (int i = 0; i < 2; ++i) {
        BS_ASSIGN_OR_RETURN(const BackgroundLoad after, measureBackground());
        readings.push_back(after.background);
      }
      c = layout::withBackground(std::move(c), median(readings));
    }
  }
  if (!a.name.empty()) c.name = a.name;
  BS_ASSIGN_OR_RETURN(c.id, storage::saveCalibration(a.trace, c));
  return c;
}

ExitCode runCalibrate(const CalibrateArgs& a) {
  auto c = calibrate(a);
  if (!c.isOk()) {
    std::fprintf(stderr, "error: %s\n", c.status().message().c_str());
    return 1;
  }
  if (a.json) {
    std::printf("%s\n", analysis::calibrationToJson(*c).dump(2).c_str());
  } else {
    std::fputs(analysis::calibrationToText(*c).c_str(), stdout);
    std::printf("calibration_id: %lld\n", static_cast<long long>(c->id));
  }
  return 0;
}

}  // namespace

void addCalibrateCommand(Command app, CommandRunner& runner) {
  auto a = std::make_shared<CalibrateArgs>();
  Command cmd = app.subcommand(
      "calibrate",
      "Extract a cost model of this machine from a measured run (or benchmark it) and store it");
  cmd.option("--trace", a->trace,
             "Trace file (.db) holding the run; the calibration is "
             "stored in it")
      .required();
  Option run = cmd.option("--run", a->runId, "Run id (default: the newest finished measured run)")
                   .positive();
  cmd.option("--name", a->name, "Name of the calibration (default 'from run N')");
  cmd.flag("--json", a->json, "Print the calibration as JSON");
  Option model = cmd.option("--model", a->model,
                            "Benchmark this model preset's layers and the collectives with "
                            "short runs into --trace instead of reading a run")
                     .excludes(run);
  cmd.option("--world", a->world, "Ranks of the collectives' benchmark runs (with --model)")
      .showDefault()
      .positive()
      .needs(model);
  cmd.option("--steps", a->steps, "Steps of each benchmark run (with --model)")
      .showDefault()
      .range(2, 1000)
      .needs(model);
  Option hosts = cmd.option("--hosts", a->where.hosts,
                            "Benchmark on these hosts (host or host:slots, comma-separated; "
                            "with --model): the layers and same_host links on the first, "
                            "dp and pp spread over them for the other_host links")
                     .delimiter(',')
                     .needs(model);
  cmd.option("--net-if", a->where.netIf,
             "Network interfaces (or CIDR networks) MPI may use between the hosts, "
             "comma-separated (as run's --net-if)")
      .delimiter(',')
      .needs(hosts);
  addMoeFlags(cmd, a->moe);
  cmd.callback([a, &runner] { runner = [a] { return runCalibrate(*a); }; });
}

}  // namespace bubblescope::cli
