// `bubblescope-cli train`: single-process training of the GPT decoder on the
// CPU, a progress line per step, optional checkpoints and trace file.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "cli/backend_option.h"
#include "cli/commands.h"
#include "cli/gpu_tracing.h"
#include "cli/layout_flags.h"
#include "cli/moe_step_samples.h"
#include "cli/run_description.h"
#include "cli/train_dumps.h"
#include "cli/train_layout.h"
#include "engine/allocator.h"
#include "engine/checkpoint.h"
#include "engine/parallel/rank_trainer.h"
#include "engine/trainer_options.h"
#include "storage/process_identity.h"
#include "storage/trace_writer.h"
#include "tracer/gpu_event_collector.h"
#include "tracer/gpu_identity.h"
#include "tracer/nvml_sampler.h"

namespace bubblescope::cli {
namespace {

struct TrainArgs {
  std::string model = "tiny";
  int64_t steps = 20;
  std::string data;
  uint64_t seed = 1337;
  int32_t microBatches = 1;
  int64_t batchSize = 8;
  double lr = 3e-3;
  int64_t warmup = -1;      // -1: totalSteps / 10, at most 100
  int64_t totalSteps = -1;  // -1: steps
  double weightDecay = 0.1;
  double gradClip = 1.0;
  std::string save;
  std::string load;
  std::string trace;
  std::string backend = "cpu";
  std::string precision = "fp32";
  std::pair<int64_t, std::string> dumpBatch{-1, ""};  // --dump-batch STEP FILE
  std::string saveGrads;
  MoeFlags moe;  // --experts, --top-k, --capacity-factor, --moe-every, --aux-loss-coef
};

double mib(int64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

void printMemory(const engine::Allocator& a) {
  using engine::MemoryCategory;
  std::printf(
      "memory: parameters %.2f MiB, gradients %.2f MiB, optimizer %.2f MiB, "
      "activations %.2f MiB\n",
      mib(a.currentBytes(MemoryCategory::kParameters)),
      mib(a.currentBytes(MemoryCategory::kGradients)),
      mib(a.currentBytes(MemoryCategory::kOptimizerState)),
      mib(a.currentBytes(MemoryCategory::kActivations)));
}

// The trace file side of a run: open, one rank, per-step appends, finish.
class TraceOutput {
 public:
  // `backend`: what the run trains on ("cpu", or the GPU's description).
  // The run is described as `run` describes one: from its (1x1x1) layout.
  static Result<std::unique_ptr<TraceOutput>> open(const std::string& path,
                                                   const engine::TrainerOptions& options,
                                                   int64_t steps, const std::string& backend) {
    auto out = std::unique_ptr<TraceOutput>(new TraceOutput());
    BS_ASSIGN_OR_RETURN(out->writer_, storage::TraceWriter::open(path));
    const layout::Layout layout = singleProcessLayout(
        options, steps, backend == "cpu" ? layout::Backend::kCpu : layout::Backend::kCuda);
    BS_RETURN_IF_ERROR(
        out->writer_->beginRun(describeRun(layout, 1, "train " + options.model.preset)).status());
    storage::RankInfo rank;
    rank.rank = 0;
    rank.host = storage::currentHostName();
    rank.pid = static_cast<int64_t>(::getpid());
    rank.device = backend;
    rank.coresOnHost = static_cast<int32_t>(std::thread::hardware_concurrency());
    rank.ranksOnHost = 1;
    rank.parameters = options.model.parameterCount();
    BS_RETURN_IF_ERROR(out->writer_->addRank(rank));
    out->rank_ = rank;
    return out;
  }

  // `moe`: the step's MoE counts, written as "moe.*" samples at the step's
  // end (engine/layout/moe_samples.h).
  // A run on a GPU: its CUPTI collector's kernels, copies, sets and
  // launches go with every step's spans (not owned; outlives this).
  // `gpu`: its device's identity, by which NVML is sampled at each step's
  // end (none when NVML or the device is not found).
  void traceGpu(tracer::GpuActivitySource* source, const tracer::GpuIdentity* gpu) {
    gpu_ = source ? std::make_unique<tracer::GpuEventCollector>(*source, 0) : nullptr;
    if (gpu != nullptr) {
      auto nvml = tracer::NvmlSampler::open(*gpu);
      if (nvml.isOk()) nvml_ = std::move(nvml).value();
    }
  }

  Status appendStep(tracer::Recorder& recorder, const engine::StepResult& r,
                    const std::vector<engine::MoeBlockStats>& moe) {
    auto events = recorder.drain();
    // One process has no NCCL groups: no stream carries a dimension.
    if (gpu_) BS_RETURN_IF_ERROR(gpu_->collect({}, events));
    BS_RETURN_IF_ERROR(writer_->appendEvents(events));
    std::vector<trace_model::Sample> samples = moeStepSamples(0, r.endNs, moe);
    if (nvml_) {
      const std::vector<trace_model::Sample> gpu = nvml_->sample(0, r.endNs);
      samples.insert(samples.end(), gpu.begin(), gpu.end());
    }
    if (!samples.empty()) BS_RETURN_IF_ERROR(writer_->appendSamples(samples));
    const trace_model::StepRecord step{.rank = 0,
                                       .step = static_cast<int32_t>(r.step),
                                       .loss = r.loss,
                                       .tokens = r.tokens,
                                       .startNs = r.startNs,
                                       .endNs = r.endNs};
    return writer_->appendSteps({&step, 1});
  }

  Status finish(const Status& outcome) {
    if (gpu_) {  // the GPU clock map's error bound, now that every record is converted
      rank_.gpuClockUncertaintyNs = gpu_->clockUncertaintyNs();
      BS_RETURN_IF_ERROR(writer_->addRank(rank_));
    }
    if (outcome.isOk()) return writer_->finishRun(storage::RunStatus::kFinished);
    return writer_->finishRun(storage::RunStatus::kFailed, outcome.message());
  }

 private:
  TraceOutput() = default;
  std::unique_ptr<storage::TraceWriter> writer_;
  storage::RankInfo rank_;  // as described at open()
  std::unique_ptr<tracer::GpuEventCollector> gpu_;
  std::unique_ptr<tracer::NvmlSampler> nvml_;
};

// With --load and no --model, the model is the checkpoint's.
Result<engine::TrainerOptions> buildOptions(const TrainArgs& args, bool modelGiven) {
  engine::TrainerOptions o;
  if (!args.load.empty() && !modelGiven) {
    BS_ASSIGN_OR_RETURN(engine::Checkpoint checkpoint, engine::Checkpoint::read(args.load));
    o.model = checkpoint.meta().model;
  } else {
    BS_ASSIGN_OR_RETURN(o.model, layout::modelPreset(args.model));
  }
  if (args.moe.any()) {
    if (!args.load.empty() && !modelGiven) {
      return Status::invalidArgument(
          "--experts, --top-k, --capacity-factor, --moe-every and --aux-loss-coef change the "
          "model; a resumed run keeps the checkpoint's (give --model to start a new one)");
    }
    nlohmann::json model = layout::toJson(o.model);
    args.moe.applyTo(model);
    BS_ASSIGN_OR_RETURN(o.model, layout::modelConfigFromJson(model));
  }
  o.batchSize = args.batchSize;
  o.microBatches = args.microBatches;
  o.seed = args.seed;
  o.dataPath = args.data;
  o.schedule.peak = args.lr;
  // --steps 0 (the initial checkpoint) has no horizon of its own: 1 unless given.
  o.schedule.totalSteps = args.totalSteps >= 0 ? args.totalSteps : std::max<int64_t>(1, args.steps);
  o.schedule.warmupSteps =
      args.warmup >= 0 ? args.warmup : std::min<int64_t>(100, o.schedule.totalSteps / 10);
  o.optimizer.weightDecay = args.weightDecay;
  o.gradClip = args.gradClip;
  o.loadPath = args.load;
  return o;
}

// One line per MoE block of the step: aux loss (mean over micro-batches),
// dropped assignments, load imbalance max/mean of the tokens routed per expert.
void printMoeStats(const std::vector<engine::MoeBlockStats>& blocks) {
  for (const auto& b : blocks) {
    int64_t routed = 0, dropped = 0, most = 0;
    for (size_t e = 0; e < b.routed.size(); ++e) {
      routed += b.routed[e];
      dropped += b.dropped[e];
      most = std::max(most, b.routed[e]);
    }
    if (routed == 0) continue;
    const double mean = static_cast<double>(routed) / static_cast<double>(b.routed.size());
    std::printf("      moe h.%d | aux %.4f | dropped %lld/%lld (%.1f%%) | load max/mean %.2f\n",
                b.block, b.auxLossSum / b.forwards, static_cast<long long>(dropped),
                static_cast<long long>(routed), 100.0 * static_cast<double>(dropped) / routed,
                static_cast<double>(most) / mean);
  }
}

// Runs the training loop; progress on stdout. Returns the outcome.
Status train(engine::RankTrainer& trainer, const TrainArgs& args, tracer::Recorder* recorder,
             TraceOutput* trace) {
  const int64_t first = trainer.completedSteps();
  if (first >= args.steps && !args.load.empty()) {
    std::printf("checkpoint is already at step %lld of %lld; nothing to train\n",
                static_cast<long long>(first), static_cast<long long>(args.steps));
  }
  const int64_t startNs = tracer::hostNowNs();
  std::optional<engine::StepResult> last;
  for (int64_t s = first; s < args.steps; ++s) {
    BS_ASSIGN_OR_RETURN(engine::StepResult r, trainer.step());
    last = r;
    const double stepSeconds = static_cast<double>(r.endNs - r.startNs) / 1e9;
    const double elapsed = static_cast<double>(r.endNs - startNs) / 1e9;
    std::printf("step %5lld/%lld | loss %.4f | lr %.2e | grad norm %.3f | %8.0f tok/s | %7.2f s\n",
                static_cast<long long>(r.step + 1), static_cast<long long>(args.steps), r.loss,
                r.lr, r.gradNorm, static_cast<double>(r.tokens) / stepSeconds, elapsed);
    std::fflush(stdout);
    const auto moe = trainer.model().takeMoeStats();
    printMoeStats(moe);
    if (trace != nullptr) BS_RETURN_IF_ERROR(trace->appendStep(*recorder, r, moe));
  }
  if (!args.save.empty()) {
    BS_RETURN_IF_ERROR(trainer.save(args.save));
    std::printf("saved checkpoint at step %lld to %s\n",
                static_cast<long long>(trainer.completedSteps()), args.save.c_str());
  }
  if (!args.saveGrads.empty()) {
    if (!last) return Status::invalidArgument("--save-grads: no step was trained");
    BS_RETURN_IF_ERROR(writeGradients(trainer, *last, args.saveGrads));
    std::printf("saved the gradients of step index %lld to %s\n",
                static_cast<long long>(last->step), args.saveGrads.c_str());
  }
  return Status::ok();
}

// Exit code 2 for mistakes in the user's input, 1 for everything else.
ExitCode exitCodeOf(const Status& status) {
  const bool userError =
      status.code() == StatusCode::kInvalidArgument || status.code() == StatusCode::kNotFound;
  return userError ? 2 : 1;
}

ExitCode trainOnThisProcess(const TrainArgs& args, bool modelGiven,
                            const std::vector<std::string>& ignoredOnLoad) {
  auto options = buildOptions(args, modelGiven);
  if (!options.isOk()) {
    std::fprintf(stderr, "error: %s\n", options.status().message().c_str());
    return exitCodeOf(options.status());
  }
  // A single process trains on the CPU or one GPU (docs/gpu.md).
  auto device = resolveTrainingBackend(args.backend, engine::TrainingScope::kSingleProcess);
  if (!device.isOk()) {
    std::fprintf(stderr, "error: %s\n", device.status().message().c_str());
    return backendExitCode(device.status());
  }
  auto precision = layout::parsePrecision(args.precision);
  if (!precision.isOk()) {
    std::fprintf(stderr, "error: %s\n", precision.status().message().c_str());
    return 2;
  }
  auto backend = engine::createBackend(device->device, device->gpuIndex, *precision);
  if (!backend.isOk()) {
    std::fprintf(stderr, "error: %s\n", backend.status().message().c_str());
    return 1;
  }
  const std::string backendName =
      device->device == engine::Device::kHost ? "cpu" : (*backend)->description();
  if (!args.load.empty() && !ignoredOnLoad.empty()) {
    std::string flags;
    for (const auto& f : ignoredOnLoad) flags += (flags.empty() ? "" : ", ") + f;
    std::fprintf(stderr, "note: %s ignored: a resumed run keeps the checkpoint's settings\n",
                 flags.c_str());
  }
  std::unique_ptr<tracer::Recorder> recorder;
  std::unique_ptr<tracer::GpuActivitySource> gpuActivity;  // outlives trace
  std::unique_ptr<TraceOutput> trace;
  if (!args.trace.empty()) {
    recorder = std::make_unique<tracer::Recorder>(0, true);
    auto opened = TraceOutput::open(args.trace, *options, args.steps, backendName);
    if (!opened.isOk()) {
      std::fprintf(stderr, "error: trace file: %s\n", opened.status().message().c_str());
      return 1;
    }
    trace = std::move(opened).value();
    // As every traced GPU rank (cli/gpu_tracing.h): after the backend made
    // its device current.
    const std::string placement = device->device == engine::Device::kCuda
                                      ? "cuda:" + std::to_string(device->gpuIndex)
                                      : std::string("cpu");
    gpuActivity = startGpuActivity(placement, 0);
    std::optional<tracer::GpuIdentity> identity;
    if (tracesGpuActivity(placement)) {
      auto id = tracer::currentGpuIdentity();
      if (id.isOk()) identity = *id;
    }
    trace->traceGpu(gpuActivity.get(), identity ? &*identity : nullptr);
  }
  auto trainer = engine::RankTrainer::create(*options, {.backend = std::move(*backend)});
  if (!trainer.isOk()) {
    if (trace) (void)trace->finish(trainer.status());
    std::fprintf(stderr, "error: %s\n", trainer.status().message().c_str());
    return exitCodeOf(trainer.status());
  }
  auto& t = **trainer;
  t.setRecorder(recorder.get());
  const auto& eff = t.options();
  std::printf("model %s: %lld parameters (%s); data: %s (%lld tokens)\n", eff.model.preset.c_str(),
              static_cast<long long>(t.model().parameterCount()),
              engine::describeShape(eff.model).c_str(), t.dataSource().c_str(),
              static_cast<long long>(t.dataTokenCount()));
  if (eff.model.hasMoe()) {
    std::printf(
        "moe: %d experts, top-%d, capacity factor %.3g, every %d-th block (%d MoE blocks), aux "
        "loss coefficient %.3g; %lld parameters active per token\n",
        eff.model.experts, eff.model.topK, eff.model.capacityFactor, eff.model.moeEvery,
        eff.model.moeBlockCount(), eff.model.auxLossCoef,
        static_cast<long long>(eff.model.activeParameterCount()));
  }
  std::printf(
      "batch %lld x %lld tokens x %d micro-batches = %lld tokens/step; seed %llu; "
      "lr %.2e, warm-up %lld, schedule %lld steps\n",
      static_cast<long long>(eff.batchSize), static_cast<long long>(eff.model.seqLen),
      eff.microBatches, static_cast<long long>(t.tokensPerStep()),
      static_cast<unsigned long long>(eff.seed), eff.schedule.peak,
      static_cast<long long>(eff.schedule.warmupSteps),
      static_cast<long long>(eff.schedule.totalSteps));
  if (!args.load.empty()) {
    std::printf("resumed from %s at step %lld\n", args.load.c_str(),
                static_cast<long long>(t.completedSteps()));
  }
  printMemory(t.allocator());
  if (!args.dumpBatch.second.empty()) {
    const Status dumped = writeBatchJson(eff, args.dumpBatch.first, args.dumpBatch.second);
    if (!dumped.isOk()) {
      if (trace) (void)trace->finish(dumped);
      std::fprintf(stderr, "error: %s\n", dumped.message().c_str());
      return exitCodeOf(dumped);
    }
    std::printf("wrote the batch of step index %lld to %s\n",
                static_cast<long long>(args.dumpBatch.first), args.dumpBatch.second.c_str());
  }
  const Status outcome = train(t, args, recorder.get(), trace.get());
  if (trace) {
    const Status finished = trace->finish(outcome);
    if (!finished.isOk() && outcome.isOk()) {
      std::fprintf(stderr, "error: trace file: %s\n", finished.message().c_str());
      return 1;
    }
  }
  if (!outcome.isOk()) {
    std::fprintf(stderr, "error: %s\n", outcome.message().c_str());
    return 1;
  }
  return 0;
}

// A buffer larger than the memory available is refused before it is
// allocated (engine::OutOfMemory names the category and the bytes); any
// other allocation failure is still one line, not an uncaught exception.
ExitCode runTrain(const TrainArgs& args, bool modelGiven,
                  const std::vector<std::string>& ignoredOnLoad) {
  try {
    return trainOnThisProcess(args, modelGiven, ignoredOnLoad);
  } catch (const engine::OutOfMemory& e) {
    std::fprintf(stderr, "error: out of memory: %s\n", e.what());
  } catch (const std::bad_alloc& e) {
    std::fprintf(stderr, "error: out of memory (%s)\n", e.what());
  }
  return 1;
}

}  // namespace

void addTrainCommand(Command app, CommandRunner& runner) {
  auto args = std::make_shared<TrainArgs>();
  Command cmd = app.subcommand("train", "Train the GPT decoder on this process");
  Option model = cmd.option("--model", args->model,
                            "Model preset: tiny, small, gpt2-124m (with --load: the saved one)")
                     .showDefault();
  Option steps =
      cmd.option("--steps", args->steps,
                 "Train up to this step (a resumed run continues; 0 with --save: the initial "
                 "checkpoint)")
          .showDefault()
          .nonNegative();
  cmd.option("--data", args->data, "Text file to train on (default: built-in corpus)");
  Option seed =
      cmd.option("--seed", args->seed, "Seed of initialisation and data order").showDefault();
  Option micro =
      cmd.option("--micro-batches", args->microBatches, "Micro-batches accumulated per step")
          .showDefault()
          .positive();
  Option batch = cmd.option("--batch-size", args->batchSize, "Sequences per micro-batch")
                     .showDefault()
                     .positive();
  Option lr = cmd.option("--lr", args->lr, "Peak learning rate").showDefault().nonNegative();
  Option warmup = cmd.option("--warmup", args->warmup,
                             "Warm-up steps (default: a tenth of the schedule, at most 100)")
                      .nonNegative();
  Option total = cmd.option("--total-steps", args->totalSteps,
                            "Steps of the cosine schedule (default: --steps)")
                     .positive();
  Option wd = cmd.option("--weight-decay", args->weightDecay, "AdamW weight decay")
                  .showDefault()
                  .nonNegative();
  Option clip = cmd.option("--grad-clip", args->gradClip, "Max gradient norm (0: off)")
                    .showDefault()
                    .nonNegative();
  cmd.option("--save", args->save, "Write a safetensors checkpoint at the end");
  cmd.option("--load", args->load,
             "Resume from a checkpoint (its seed, batch and schedule are kept)");
  cmd.option("--trace", args->trace, "Write spans and steps to this trace file (.db)");
  Option dumpBatch = cmd.option("--dump-batch", args->dumpBatch,
                                "STEP FILE: write the token batch of (0-based) step STEP as "
                                "JSON (docs/engine.md)");
  Option saveGrads = cmd.option(
      "--save-grads", args->saveGrads,
      "Write the last step's gradients (after clipping) as safetensors (docs/engine.md)");
  Option backend = cmd.option("--backend", args->backend, kBackendHelp).showDefault();
  Option precision = cmd.option("--precision", args->precision, kPrecisionHelp).showDefault();
  addMoeFlags(cmd, args->moe);
  // One rank of a parallel run (under mpirun or srun; see `run`).
  auto layoutArgs = std::make_shared<LayoutTrainArgs>();
  Option layoutFile = cmd.option("--layout", layoutArgs->layoutFile,
                                 "Layout file: train as one rank of the job it describes "
                                 "(start it with mpirun, or use `run`)");
  Option layoutJson = cmd.option("--layout-json", layoutArgs->layoutJson,
                                 "The layout as JSON text (how `run` passes it)")
                          .hidden();
  cmd.option("--run-id", layoutArgs->runId,
             "With --layout and --trace: the run `run` began in the trace file");
  cmd.option("--inject-failure", layoutArgs->injectFailure, "RANK:STEP (tests)").hidden();
  cmd.option("--launcher", layoutArgs->launcher, "HOST:PID:TICKS of `run`").hidden();
  cmd.flag("--collector", layoutArgs->collected,
           "The job's last process is run's trace collector (collected_job.h)")
      .hidden();
  // Under srun every task runs the same argv (cli/mpirun.h, SrunRequest).
  auto collectorTask = std::make_shared<int64_t>(-1);
  cmd.option("--collector-task", *collectorTask,
             "The Slurm task (SLURM_PROCID) that is the collector instead of a rank")
      .hidden();
  cmd.callback([args, &runner, model, seed, micro, batch, lr, warmup, total, wd, clip, layoutArgs,
                layoutFile, layoutJson, steps, backend, precision, dumpBatch, saveGrads,
                collectorTask] {
    if (layoutFile.given() || layoutJson.given()) {
      if (dumpBatch.given() || saveGrads.given()) {
        failUsage("--dump-batch and --save-grads are for single-process train");
      }
      if (args->moe.any()) {
        failUsage(
            "--experts and the other MoE flags are for single-process train; a layout gives them "
            "in its model (or use `run --experts`)");
      }
      LayoutTrainArgs a = *layoutArgs;
      a.trace = args->trace;
      const char* task = std::getenv("SLURM_PROCID");
      if (*collectorTask >= 0 && task != nullptr && std::to_string(*collectorTask) == task) {
        runner = [a] { return runTraceCollector(a.trace, a.runId, a.launcher); };
        return;
      }
      a.save = args->save;
      if (steps.given()) a.steps = static_cast<int32_t>(args->steps);
      if (backend.given()) a.backend = args->backend;
      if (precision.given()) a.precision = args->precision;
      runner = [a] { return runLayoutTraining(a); };
      return;
    }
    std::vector<std::string> ignored;
    for (const Option& o : {seed, micro, batch, lr, warmup, total, wd, clip}) {
      if (o.given()) ignored.push_back(o.name());
    }
    if (args->steps == 0 && args->save.empty()) {
      failUsage("--steps 0 trains nothing: it writes the initial checkpoint, with --save FILE");
    }
    const bool modelGiven = model.given();
    runner = [args, modelGiven, ignored] { return runTrain(*args, modelGiven, ignored); };
  });
}

}  // namespace bubblescope::cli
