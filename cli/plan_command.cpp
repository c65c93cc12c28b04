// `bubblescope-cli plan --world N --model M [--memory-per-rank GiB]
// [--calibration F] [--top K] [--every-variant] [--grad-compression LIST] [--ranks-per-node K
// --inter-node-gbps X --inter-node-latency-us Y | --hosts H,...] [--json]
// [--out-dir D] [--run [--steps S] [--trace T]]`: the valid layouts of N ranks for model M,
// predicted (planning/planner.h), the best K by tokens/s printed with the seeds' reasons and
// written as layout files. --run then runs each of them (cli/layout_trial.h, the path `bench
// predict` measures with) and prints predicted against measured step time and bubble.
//
// `plan --hardware H --gpus N --model M --global-batch B [--dtype D] [--top K] [--json]`:
// the layouts of M on N GPUs of hardware profile H ranked by the cluster cost model
// (planning/cluster_plan.h; docs/prediction.md, "The cluster model").
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/cluster_text.h"
#include "cli/commands.h"
#include "cli/contention_probe.h"
#include "cli/layout_flags.h"
#include "cli/layout_trial.h"
#include "cli/run_description.h"
#include "planning/planner.h"
#include "storage/analysis/text_table.h"
#include "storage/calibration_store.h"

namespace bubblescope::cli {
namespace {

struct PlanArgs {
  int32_t world = 0;  // 0: not given (required without --hardware)
  std::string model = "tiny";
  MoeFlags moe;          // --experts etc.: the preset made a mixture of experts
  double memoryGiB = 0;  // 0: no limit
  std::string calibration;
  int64_t calibrationId = 0;
  std::string background;  // "": none; "measure"; or busy threads (contention_probe.h)
  int32_t top = 5;
  bool everyVariant = false;
  int32_t microBatchSize = 1;
  std::string compressions;  // "": layout::defaultPlanCompressions()
  int32_t ranksPerNode = 0;
  double interNodeGbps = 0;
  double interNodeLatencyUs = 0;
  std::vector<std::string> hosts;
  bool json = false;
  std::string outDir = "plan";
  bool run = false;
  int32_t runSteps = 4;
  int32_t repeats = 1;  // runs of each candidate with --run, by turns
  std::string trace;  // "": <out-dir>/plan-runs.db
  // The cluster planner (--hardware).
  std::string hardware;
  int32_t gpus = 0;
  int64_t globalBatch = 0;
  std::string dtype = "fp16";
  int32_t simulated = 24;
};

ExitCode runClusterPlan(const PlanArgs& a) {
  auto fail = [](int code, const std::string& message) {
    std::fprintf(stderr, "error: %s\n", message.c_str());
    return code;
  };
  if (a.gpus < 1) return fail(2, "plan --hardware needs --gpus N");
  if (a.globalBatch < 1) return fail(2, "plan --hardware needs --global-batch B (sequences)");
  auto hw = layout::loadHardware(a.hardware);
  if (!hw.isOk()) return fail(2, hw.status().message());
  auto model = layout::modelPreset(a.model);
  if (!model.isOk()) return fail(2, model.status().message());
  layout::ClusterPlanRequest r;
  r.hardware = *hw;
  r.model = *model;
  r.gpus = a.gpus;
  r.globalBatch = a.globalBatch;
  r.settings.dtype = a.dtype;
  r.top = a.top;
  r.simulated = a.simulated;
  auto plan = layout::planCluster(r);
  if (!plan.isOk()) return fail(1, plan.status().message());
  if (a.json) {
    std::printf("%s\n", clusterPlanToJson(r, *plan).dump(2).c_str());
  } else {
    std::fputs(clusterPlanToText(r, *plan).c_str(), stdout);
  }
  return 0;
}

// Runs every candidate; predicted against measured, or the first failure.
// With --repeats N the candidates run N rounds, by turns, and each keeps
// its run of the median step (the lower middle one of an even count), so a
// machine that drifts during the check moves every candidate alike instead
// of reordering them.
Result<std::vector<LayoutTrial>> runCandidates(const layout::Plan& plan, const PlanArgs& a) {
  const std::string trace = a.trace.empty() ? a.outDir + "/plan-runs.db" : a.trace;
  std::vector<std::vector<LayoutTrial>> runs(plan.best.size());
  for (int32_t round = 0; round < a.repeats; ++round) {
    for (size_t i = 0; i < plan.best.size(); ++i) {
      const layout::PlanCandidate& c = plan.best[i];
      layout::Layout l = c.layout;
      l.steps = a.runSteps;
      std::fprintf(stderr, "running %s m%d (%d of %d) ...\n", runName(l).c_str(),
                   l.microBatches, round + 1, a.repeats);
      BS_ASSIGN_OR_RETURN(LayoutTrial t, runLayoutTrial(l, c.prediction, trace));
      runs[i].push_back(std::move(t));
    }
  }
  std::vector<LayoutTrial> trials;
  for (std::vector<LayoutTrial>& r : runs) {
    std::sort(r.begin(), r.end(), [](const LayoutTrial& x, const LayoutTrial& y) {
      return x.measuredStepNs < y.measuredStepNs;
    });
    trials.push_back(std::move(r[(r.size() - 1) / 2]));
  }
  std::fprintf(stderr, "runs in %s\n", trace.c_str());
  return trials;
}

// "none,fp16,powersgd:4": every problem in one message.
Result<std::vector<layout::GradCompressionSpec>> parseCompressionList(const std::string& list) {
  std::vector<layout::GradCompressionSpec> specs;
  std::string problems;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    auto spec = layout::parseGradCompression(list.substr(start, comma - start));
    if (spec.isOk()) specs.push_back(*spec);
    if (!spec.isOk()) problems += (problems.empty() ? "" : "; ") + spec.status().message();
    start = comma + 1;
  }
  if (!problems.empty()) return Status::invalidArgument("--grad-compression: " + problems);
  return specs;
}

// The dp gradient reduction of a candidate (ZeRO 0, dp > 1), for --json.
nlohmann::json gradReductionJson(const layout::GradReductionCost& g) {
  return {{"sent_bytes", g.sentBytes},
          {"uncompressed_bytes", g.uncompressedBytes},
          {"compression_ratio", g.compressionRatio()},
          {"inter_node_bytes", g.interNodeBytes},
          {"comm_ms", g.commNs / 1e6},
          {"codec_ms", g.codecNs / 1e6}};
}

Status writeLayouts(const layout::Plan& plan, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::invalidArgument("--out-dir " + dir + ": " + ec.message());
  for (size_t i = 0; i < plan.best.size(); ++i) {
    const std::string path = dir + "/plan-" + std::to_string(i + 1) + ".json";
    std::ofstream out(path);
    out << layout::toJson(plan.best[i].layout).dump(2) << "\n";
    if (!out) return Status::invalidArgument("cannot write " + path);
  }
  return Status::ok();
}

ExitCode runPlan(const PlanArgs& a) {
  auto fail = [](int code, const std::string& message) {
    std::fprintf(stderr, "error: %s\n", message.c_str());
    return code;
  };
  if (!a.hardware.empty()) return runClusterPlan(a);
  if (a.world < 1) return fail(2, "plan needs --world N (or --hardware H --gpus N)");
  auto preset = layout::modelPreset(a.model);
  if (!preset.isOk()) return fail(2, preset.status().message());
  auto model = a.moe.appliedTo(*preset);
  if (!model.isOk()) return fail(2, model.status().message());
  layout::Calibration calibration;
  if (a.calibration.empty()) {
    calibration = layout::flopsCalibration(*model, layout::kFlopsEstimatePerSecond);
    // The estimate's rate is one core's: ranks beyond this machine's cores
    // time-share them (prediction.h).
    calibration.cores = static_cast<int32_t>(std::thread::hardware_concurrency());
  } else {
    auto loaded = storage::loadCalibration(a.calibration, a.calibrationId);
    if (!loaded.isOk()) return fail(1, loaded.status().message());
    calibration = *loaded;
  }
  layout::PlanRequest request;
  request.world = a.world;
  request.model = *model;
  request.top = a.top;
  request.everyVariant = a.everyVariant;
  request.microBatchSize = a.microBatchSize;
  if (a.memoryGiB > 0) request.memoryPerRankBytes = a.memoryGiB * 1024.0 * 1024.0 * 1024.0;
  request.ranksPerNode = a.ranksPerNode;
  request.interNodeGbps = a.interNodeGbps;
  request.interNodeLatencyUs = a.interNodeLatencyUs;
  request.hosts = a.hosts;
  if (!a.background.empty()) {
    auto b = backgroundOption(a.background);
    if (!b.isOk()) return fail(2, b.status().message());
    request.predict.background = *b;
  }
  if (!a.compressions.empty()) {
    auto specs = parseCompressionList(a.compressions);
    if (!specs.isOk()) return fail(2, specs.status().message());
    request.compressions = std::move(*specs);
  }
  auto plan = layout::planLayouts(request, calibration);
  if (!plan.isOk()) return fail(1, plan.status().message());
  // Every candidate has the world's ranks: say once when they share cores.
  if (a.hosts.empty() && calibration.cores > 0 && a.world > calibration.cores) {
    std::fprintf(stderr,
                 "note: %d ranks on %d cores: the ranks share the cores (oversubscribed), so "
                 "every candidate's compute is predicted up to %.2fx slower on the whole "
                 "(time-sharing; a pipeline's less: a stage waiting in its bubbles leaves its "
                 "cores to the others, and stages of one rank are placed on the cores as the "
                 "scheduler does)\n",
                 a.world, calibration.cores, static_cast<double>(a.world) / calibration.cores);
  }
  if (Status s = writeLayouts(*plan, a.outDir); !s.isOk()) return fail(1, s.message());
  std::optional<std::vector<LayoutTrial>> trials;
  if (a.run) {
    auto ran = runCandidates(*plan, a);
    if (!ran.isOk()) return fail(1, ran.status().message());
    trials = std::move(*ran);
  }
  if (a.json) {
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < plan->best.size(); ++i) {
      const layout::PlanCandidate& c = plan->best[i];
      out.push_back({{"rank", i + 1},
                     {"name", runName(c.layout)},
                     {"layout_file", a.outDir + "/plan-" + std::to_string(i + 1) + ".json"},
                     {"layout", layout::toJson(c.layout)},
                     {"step_ms", c.prediction.stepNs / 1e6},
                     {"tokens_per_s", c.prediction.tokensPerSecond},
                     {"bubble", c.prediction.bubble},
                     {"exposed_comm_ms", c.prediction.exposedCommNs},
                     {"peak_memory_bytes", c.peakMemoryBytes},
                     {"rule", c.rule},
                     {"limit", c.limit},
                     {"variants", c.variants}});
      if (c.prediction.gradReduction.sentBytes > 0) {
        out.back()["grad_reduction"] = gradReductionJson(c.prediction.gradReduction);
      }
      if (trials) {
        const LayoutTrial& t = (*trials)[i];
        out.back()["measured"] = {{"run_id", t.runId},
                                  {"step_ms", t.measuredStepNs / 1e6},
                                  {"bubble", t.measuredBubble},
                                  {"step_rel_error", t.stepRelError()},
                                  {"bubble_error_points", t.bubbleErrorPoints()},
                                  {"exposed_comm", t.measuredExposedComm},
                                  {"exposed_comm_error_points", t.exposedCommErrorPoints()}};
      }
    }
    std::printf("%s\n", nlohmann::json{{"valid", plan->valid},
                                       {"fitting", plan->fitting},
                                       {"shapes", plan->shapes},
                                       {"every_variant", a.everyVariant},
                                       {"calibration", calibration.name},
                                       {"candidates", out}}
                            .dump(2)
                            .c_str());
    return 0;
  }
  std::printf("%d valid layouts of %d ranks, %d fit in %d shape%s (%s); calibration: %s%s\n",
              plan->valid, a.world, plan->fitting, plan->shapes, plan->shapes == 1 ? "" : "s",
              a.everyVariant ? "every variant listed"
                             : "the best of each dp x tp x pp x ep listed, --every-variant for all",
              calibration.name.c_str(),
              a.calibration.empty() ? (a.interNodeGbps > 0 || a.interNodeLatencyUs > 0
                                           ? " (no --calibration: 10 GFLOP/s, communication "
                                             "free but for the emulated link)"
                                           : " (no --calibration: 10 GFLOP/s, communication free)")
                                    : "");
  analysis::TextTable t{{"#", "layout", "m", "recompute", "step ms", "tokens/s", "memory",
                         "variants", "why (seed rule)", "limited by"},
                        {},
                        true};
  for (size_t i = 0; i < plan->best.size(); ++i) {
    const layout::PlanCandidate& c = plan->best[i];
    t.rows.push_back({std::to_string(i + 1), runName(c.layout),
                      std::to_string(c.layout.microBatches), c.layout.recompute ? "yes" : "no",
                      analysis::formatMs(c.prediction.stepNs),
                      analysis::formatNumber(c.prediction.tokensPerSecond, 0),
                      analysis::formatBytes(c.peakMemoryBytes),
                      a.everyVariant ? "-" : "+" + std::to_string(c.variants), c.rule, c.limit});
  }
  std::fputs(t.render(false).c_str(), stdout);
  std::printf("layout files: %s/plan-1.json ... (bubblescope-cli run --layout FILE)\n",
              a.outDir.c_str());
  if (trials) {
    std::printf("\npredicted vs measured (%d steps each, the first left out%s)\n", a.runSteps,
                a.repeats > 1
                    ? (", " + std::to_string(a.repeats) +
                       " runs of each by turns: the run of the median step")
                          .c_str()
                    : "");
    std::fputs(trialsToText(*trials).c_str(), stdout);
  }
  return 0;
}

}  // namespace

void addPlanCommand(Command app, CommandRunner& runner) {
  auto a = std::make_shared<PlanArgs>();
  Command cmd =
      app.subcommand("plan", "Rank the valid layouts of a world size by predicted tokens/s");
  cmd.option("--world", a->world, "Ranks").range(1, layout::kMaxPlanWorld);
  cmd.option("--hardware", a->hardware,
             "Plan a GPU cluster: a hardware profile (a100-40g, a100-80g, h100-sxm, h200, "
             "b200) or a profile JSON file");
  cmd.option("--gpus", a->gpus, "GPUs of the cluster (--hardware)").positive();
  cmd.option("--global-batch", a->globalBatch, "Sequences per iteration (--hardware)").positive();
  cmd.option("--dtype", a->dtype, "The GEMMs' dtype (--hardware): fp16, bf16, fp8, tf32")
      .showDefault();
  cmd.option("--simulated", a->simulated,
             "How many of the best estimated layouts are simulated (--hardware)")
      .showDefault()
      .positive();
  cmd.option("--model", a->model, "Model preset").showDefault();
  addMoeFlags(cmd, a->moe);
  cmd.option("--memory-per-rank", a->memoryGiB, "GiB per rank (default: no limit)").nonNegative();
  cmd.option("--calibration", a->calibration,
             "Trace file holding a calibration (default: FLOPs at 10 GFLOP/s)");
  cmd.option("--calibration-id", a->calibrationId, "Which calibration of that file");
  cmd.option("--background", a->background,
             "Predict for other work on this machine: 'measure' it now, or N busy threads "
             "(compute from thread CPU time, docs/prediction.md)");
  cmd.option("--top", a->top, "How many to print and write").showDefault().positive();
  cmd.flag("--every-variant", a->everyVariant,
           "List every candidate, not only the best of each dp x tp x pp x ep shape (its "
           "schedules, ZeRO stages, m, recompute and compressions are often closer than the "
           "predictor's error)");
  cmd.option("--micro-batch-size", a->microBatchSize, "Sequences per micro-batch")
      .showDefault()
      .positive();
  cmd.option("--grad-compression", a->compressions,
             "Comma-separated gradient compressions tried at ZeRO 0 (default: "
             "none,fp16,bf16,int8,powersgd:4)");
  cmd.option("--ranks-per-node", a->ranksPerNode,
             "Emulated nodes of K ranks (plan then tries the hierarchical all-reduce)")
      .nonNegative();
  cmd.option("--inter-node-gbps", a->interNodeGbps, "Emulated inter-node link, Gb/s").nonNegative();
  cmd.option("--inter-node-latency-us", a->interNodeLatencyUs,
             "Emulated inter-node link latency, us")
      .nonNegative();
  cmd.option("--hosts", a->hosts, "Hosts the candidates run on (host or host:slots)")
      .delimiter(',');
  cmd.option("--out-dir", a->outDir, "Folder the layout files are written to").showDefault();
  cmd.flag("--json", a->json, "One JSON object");
  Option runFlag = cmd.flag("--run", a->run,
                            "Run each candidate and print predicted vs measured step time and "
                            "bubble");
  cmd.option("--steps", a->runSteps, "Steps of each --run (the first is left out)")
      .showDefault()
      .range(2, 1000000);
  cmd.option("--repeats", a->repeats,
             "Runs of each candidate with --run, by turns (each keeps its median step's run)")
      .needs(runFlag)
      .showDefault()
      .range(1, 20);
  cmd.option("--trace", a->trace, "Trace file of the --run runs (default OUT_DIR/plan-runs.db)");
  cmd.callback([a, &runner] { runner = [a] { return runPlan(*a); }; });
}

}  // namespace bubblescope::cli
