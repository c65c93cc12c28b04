#include "cli/train_layout.h"

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cli/backend_option.h"
#include "cli/collected_job.h"
#include "cli/gpu_tracing.h"
#include "cli/heartbeat.h"
#include "cli/moe_step_samples.h"
#include "cli/parent_watch.h"
#include "cli/run_description.h"
#include "engine/backend_factory.h"
#include "engine/device_selection.h"
#include "engine/parallel/data_parallel.h"
#include "engine/parallel/device_groups.h"
#include "engine/parallel/layout_options.h"
#include "engine/parallel/mpi_grid.h"
#include "engine/parallel/rank_trainer.h"
#include "storage/trace_writer.h"
#include "tracer/gpu_identity.h"
#include "tracer/trace_session.h"

namespace bubblescope::cli {
namespace {

using engine::MemoryReport;

// Ends the whole job: this rank cannot go on and the others may be blocked
// in a collective with it.
[[noreturn]] void abortJob(int rank, const std::string& why) {
  std::fprintf(stderr, "error: rank %d: %s\n", rank, why.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return
}

Result<layout::Layout> readLayout(const LayoutTrainArgs& args, int worldSize) {
  if (!args.layoutJson.empty()) return layout::layoutFromString(args.layoutJson, worldSize);
  return layout::layoutFromFile(args.layoutFile, worldSize);
}

double mib(int64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

// Every rank's memory, printed by rank 0.
void reportMemory(const MemoryReport& m, MPI_Comm job, int rank, int size) {
  const int64_t mine[8] = {m.parameters,     m.gradients,     m.optimizer,     m.activations,
                           m.peakParameters, m.peakGradients, m.peakOptimizer, m.peakActivations};
  std::vector<int64_t> all(rank == 0 ? 8 * size : 0);
  MPI_Gather(mine, 8, MPI_INT64_T, all.data(), 8, MPI_INT64_T, 0, job);
  if (rank != 0) return;
  std::printf("memory per rank, bytes now (peak during training):\n");
  std::printf("%6s %22s %22s %22s %22s\n", "rank", "parameters", "gradients", "optimizer",
              "activations");
  for (int r = 0; r < size; ++r) {
    const int64_t* v = &all[8 * r];
    std::printf("%6d", r);
    for (int c = 0; c < 4; ++c) {
      std::printf(" %10lld (%9lld)", static_cast<long long>(v[c]),
                  static_cast<long long>(v[4 + c]));
    }
    std::printf("\n");
  }
  const int64_t* v = all.data();
  std::printf("rank 0 model states: %.3f MiB (parameters %.3f + gradients %.3f + optimizer %.3f)\n",
              mib(v[0] + v[1] + v[2]), mib(v[0]), mib(v[1]), mib(v[2]));
}

struct Injection {
  int rank = -1;
  int64_t step = -1;
};

Result<Injection> parseInjection(const std::string& spec) {
  if (spec.empty()) return Injection{};
  const size_t colon = spec.find(':');
  try {
    if (colon == std::string::npos) throw std::invalid_argument(spec);
    return Injection{std::stoi(spec.substr(0, colon)), std::stoll(spec.substr(colon + 1))};
  } catch (const std::exception&) {
    return Status::invalidArgument("--inject-failure wants RANK:STEP, got '" + spec + "'");
  }
}

template <class T>
T valueOrAbort(Result<T> result, int rank) {
  if (!result.isOk()) abortJob(rank, result.status().message());
  return std::move(result).value();
}

void okOrAbort(const Status& status, int rank) {
  if (!status.isOk()) abortJob(rank, status.message());
}

// What one rank holds while it trains. Declared outside the try block of
// trainRank() so a failure aborts the job before any destructor runs (a
// communicator's worker may be blocked in a collective no peer will join).
struct RankState {
  std::unique_ptr<engine::MpiGrid> grid;
  std::unique_ptr<engine::DeviceGroups> deviceGroups;  // on a GPU: dp, tp, pp over device buffers
  std::unique_ptr<engine::RankTrainer> trainer;
  std::unique_ptr<storage::TraceWriter> writer;
  std::unique_ptr<tracer::GpuActivitySource> gpuActivity;  // CUPTI: outlives the session
  std::unique_ptr<tracer::TraceSession> session;
};

std::unique_ptr<tracer::TraceSession> startTracing(const layout::Layout& layout,
                                                   const LayoutTrainArgs& args, RankState& st,
                                                   const std::string& placement, int rank,
                                                   int size) {
  if (rank == 0 && !args.collected) {
    st.writer = valueOrAbort(storage::TraceWriter::open(args.trace), rank);
    if (args.runId >= 0) {
      okOrAbort(st.writer->attachRun(args.runId), rank);
    } else {  // started by hand (mpirun ... train --layout): rank 0 begins the run
      okOrAbort(st.writer->beginRun(describeRun(layout, size)).status(), rank);
    }
  }
  tracer::SessionOptions so;
  so.lastRankCollects = args.collected;  // the session then spans the collector too
  const engine::Allocator* a = &st.trainer->allocator();
  using engine::MemoryCategory;
  auto gauge = [a](MemoryCategory c) {
    return [a, c] { return static_cast<double>(a->currentBytes(c)); };
  };
  so.gauges = {{"mem.parameters", gauge(MemoryCategory::kParameters)},
               {"mem.gradients", gauge(MemoryCategory::kGradients)},
               {"mem.optimizer", gauge(MemoryCategory::kOptimizerState)},
               {"mem.activations", gauge(MemoryCategory::kActivations)}};
  // Data-parallel gradient traffic (docs/trace-format.md): bus bytes so far,
  // sent and as plain fp32 collectives, and their ratio.
  const engine::GradTraffic* traffic = &st.trainer->gradTraffic();
  so.gauges.push_back(
      {"grad.bytes_sent", [traffic] { return static_cast<double>(traffic->sentBytes.load()); }});
  so.gauges.push_back({"grad.bytes_uncompressed", [traffic] {
                         return static_cast<double>(traffic->uncompressedBytes.load());
                       }});
  so.gauges.push_back({"grad.compression_ratio", [traffic] { return traffic->ratio(); }});
  // A GPU rank's kernels, copies and sets on its stream lanes (CUPTI). Without
  // it the run is still traced: one note, the host spans only.
  st.gpuActivity = startGpuActivity(placement, rank);
  so.gpu = st.gpuActivity.get();
  // Its NVML samples: the GPU found by PCI bus id or UUID, not by index.
  if (tracesGpuActivity(placement)) {
    auto identity = tracer::currentGpuIdentity();
    if (identity.isOk()) so.gpuIdentity = *identity;
  }
  const layout::GridCoord c = st.grid->coord();
  auto session = valueOrAbort(
      tracer::TraceSession::start(MPI_COMM_WORLD, st.writer.get(),
                                  {c.dp, c.tp, c.pp, placement, st.trainer->parameterCount()}, so),
      rank);
  // NCCL kernels as their group's communication: each device communicator's
  // streams carry its dimension (cli/gpu_tracing.h).
  if (st.gpuActivity && st.deviceGroups) {
    auto dims = deviceStreamDims(*st.deviceGroups, *st.gpuActivity,
                                 engine::dataParallelDim(layout.zeroStage));
    if (dims.isOk()) {
      for (const auto& [stream, dim] : *dims) session->setStreamDimension(stream, dim);
    } else {
      std::fprintf(stderr, "note: rank %d: NCCL kernels untagged in the trace: %s\n", rank,
                   dims.status().message().c_str());
    }
  }
  return session;
}

void printHeader(const layout::Layout& layout, const engine::RankTrainer& trainer,
                 const engine::MpiGrid& grid, const std::string& device, int size) {
  const engine::ParallelOptions& p = trainer.parallelOptions();
  std::printf(
      "layout: dp %d, tp %d, pp %d (%s), ep %d, zero %d, overlap %s, buckets of %lld elements; "
      "world %d\n"
      "model %s: %lld parameters (%lld on this rank); global batch %d x %d micro-batches x dp %d = "
      "%lld "
      "sequences (%lld tokens) per step\n",
      layout.dp, layout.tp, layout.pp, layout::scheduleKindName(layout.schedule), layout.ep,
      layout::zeroStageNumber(layout.zeroStage), layout.overlap ? "on" : "off",
      static_cast<long long>(p.bucketElements), size, layout.model.preset.c_str(),
      static_cast<long long>(layout.model.parameterCount()),
      static_cast<long long>(trainer.parameterCount()), layout.microBatchSize, layout.microBatches,
      layout.dp,
      static_cast<long long>(int64_t{layout.microBatchSize} * layout.microBatches * layout.dp),
      static_cast<long long>(trainer.tokensPerStep()));
  if (!device.empty()) std::printf("backend: %s\n", device.c_str());
  if (p.compression.compresses()) {
    std::printf("grad compression: %s (dp buckets)\n", p.compression.toString().c_str());
  }
  if (grid.dpNodes() > 0) {
    std::printf("all-reduce %s: the dp group spans %d nodes of %d dp ranks (%s)\n",
                layout::allReduceAlgorithmName(layout.allReduce), grid.dpNodes(),
                grid.dpRanksPerNode(),
                layout.ranksPerNode > 0 ? "emulated nodes" : "the hosts' nodes");
  }
  if (layout.emulatesInterNodeLink()) {
    std::printf("%s\n", layout::interNodeLinkLine(layout).c_str());
  }
  std::fflush(stdout);
}

// A GPU rank's backend and groups (nothing for the CPU).
struct RankDevice {
  std::unique_ptr<engine::Backend> backend;  // null: the CPU
  std::unique_ptr<engine::DeviceGroups> groups;
  std::string placement = "cpu";  // the trace's: "cuda:N" on a GPU
  std::string description;        // rank 0's header line
};

// On kCuda: this rank's GPU from its place on its node (MPI's split of the
// job, then the launcher's variables and CUDA_VISIBLE_DEVICES:
// engine/device_selection.h), its CudaBackend, and its dp, tp and pp groups
// through the backend's device communicators (NCCL, or host staging when
// ranks share a GPU). Collective over `job`.
Result<RankDevice> rankDevice(const engine::BackendChoice& choice, const layout::Layout& layout,
                              engine::MpiGrid& grid, MPI_Comm job, int rank) {
  RankDevice d;
  if (choice.device != engine::Device::kCuda) return d;
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(job, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  engine::NodeRank onNode;
  MPI_Comm_rank(node, &onNode.localRank);
  MPI_Comm_size(node, &onNode.localSize);
  MPI_Comm_free(&node);
  BS_ASSIGN_OR_RETURN(const engine::DeviceSelection gpu,
                      engine::selectDevice({.environment = engine::launcherEnvironmentOfThisProcess(),
                                            .mpiNodeRank = onNode,
                                            .visibleDevices = choice.visibleDevices}));
  BS_ASSIGN_OR_RETURN(d.backend,
                      engine::createBackend(engine::Device::kCuda, gpu.device, layout.precision));
  BS_ASSIGN_OR_RETURN(const engine::DeviceCommFactory factory,
                      engine::deviceCommFactoryFor(*d.backend));
  BS_ASSIGN_OR_RETURN(d.groups, engine::DeviceGroups::create(grid, layout.pp > 1, factory));
  d.placement = "cuda:" + std::to_string(gpu.device);
  d.description = d.backend->description() + "; rank 0: " + gpu.describe();
  return d;
}

// `deviceGroups` and `backend`: a GPU rank's (null: the CPU and the grid's groups).
Result<std::unique_ptr<engine::RankTrainer>> makeTrainer(
    const layout::Layout& layout, engine::MpiGrid& grid, engine::DeviceGroups* deviceGroups,
    std::unique_ptr<engine::Backend> backend) {
  engine::RankSetup setup;
  setup.parallel = engine::parallelOptionsFor(layout);
  setup.groups = {&grid.dp(),         nullptr,           &grid.tp(), grid.ep(), grid.expertDp(),
                  grid.dpIntraNode(), grid.dpInterNode()};
  setup.backend = std::move(backend);
  if (deviceGroups != nullptr) {  // device buffers move through the device groups
    setup.groups.dp = &deviceGroups->dp();
    setup.groups.tp = &deviceGroups->tp();
    setup.groups.dpIntraNode = deviceGroups->dpIntraNode();
    setup.groups.dpInterNode = deviceGroups->dpInterNode();
    setup.groups.dpHost = &grid.dp();  // the grad codecs' payloads, staged through the host
    // Experts' gradients on device buffers; the ep all-to-alls stay the
    // grid's (host buffers: moe_layer.h).
    setup.groups.expertDp = deviceGroups->expertDp();
  }
  // Activation checkpointing whatever the pipeline (a single stage too).
  setup.pipeline.recompute = layout.recompute;
  if (layout.pp > 1) {  // pp = 1: the one-stage schedule (forward, backward per micro-batch)
    setup.pipeline.schedule = layout.schedule;
    setup.pipeline.chunks = layout.virtualChunks;
    setup.pipeline.stageLayers = layout.stageLayers;
    setup.groups.pp = deviceGroups != nullptr ? deviceGroups->pp() : &grid.pp();
  }
  return engine::RankTrainer::create(engine::trainerOptionsFor(layout), std::move(setup));
}

// One rank's run; any failure aborts the job (see RankState).
void trainRank(const layout::Layout& layout, const LayoutTrainArgs& args,
               const engine::BackendChoice& choice, MPI_Comm job, int rank, int size) {
  RankState st;
  try {
    const Injection inject = valueOrAbort(parseInjection(args.injectFailure), rank);
    st.grid = valueOrAbort(engine::MpiGrid::create(job, layout), rank);
    RankDevice device = valueOrAbort(rankDevice(choice, layout, *st.grid, job, rank), rank);
    st.deviceGroups = std::move(device.groups);
    st.trainer = valueOrAbort(
        makeTrainer(layout, *st.grid, st.deviceGroups.get(), std::move(device.backend)), rank);
    if (!args.trace.empty()) {
      st.session = startTracing(layout, args, st, device.placement, rank, size);
      st.trainer->setRecorder(st.session->recorder());
    }
    const int64_t steps = args.steps >= 0 ? args.steps : layout.steps;
    if (!args.launcher.empty()) startHeartbeat(rank);  // for run's hang watchdog
    if (rank == 0) printHeader(layout, *st.trainer, *st.grid, device.description, size);
    const int64_t t0 = tracer::hostNowNs();
    for (int64_t s = 0; s < steps; ++s) {
      if (rank == inject.rank && s == inject.step) {
        throw std::runtime_error("injected failure at step " + std::to_string(s));
      }
      const engine::StepResult r = valueOrAbort(st.trainer->step(), rank);
      noteStepDone(s);
      if (st.session) {
        // Every rank's MoE counts (its own tokens' routing), all chunks.
        std::vector<engine::MoeBlockStats> moe;
        for (int32_t c = 0; c < st.trainer->chunks(); ++c) {
          for (auto& b : st.trainer->model(c).takeMoeStats()) moe.push_back(std::move(b));
        }
        st.session->addSamples(moeStepSamples(rank, r.endNs, moe));
        st.session->addStep({.rank = rank,
                             .step = static_cast<int32_t>(r.step),
                             .loss = r.loss,
                             .tokens = r.tokens,
                             .startNs = r.startNs,
                             .endNs = r.endNs});
      }
      if (rank == 0) {
        const double stepSeconds = static_cast<double>(r.endNs - r.startNs) / 1e9;
        std::printf(
            "step %5lld/%lld | loss %.4f | lr %.2e | grad norm %.3f | %8.0f tok/s | %7.2f s\n",
            static_cast<long long>(r.step + 1), static_cast<long long>(steps), r.loss, r.lr,
            r.gradNorm, static_cast<double>(r.tokens) / stepSeconds,
            static_cast<double>(tracer::hostNowNs() - t0) / 1e9);
        std::fflush(stdout);
      }
    }
    reportMemory(st.trainer->memory(), job, rank, size);
    if (st.session) st.trainer->setRecorder(nullptr);
    if (!args.save.empty()) {  // collective: the whole model to the writing rank
      bool wrote = false;
      okOrAbort(st.trainer->save(args.save, &wrote), rank);
      if (wrote) {
        std::printf("saved checkpoint at step %lld to %s\n",
                    static_cast<long long>(st.trainer->completedSteps()), args.save.c_str());
        std::fflush(stdout);
      }
    }
    if (st.session) okOrAbort(st.session->finish(), rank);
    if (st.writer) okOrAbort(st.writer->finishRun(storage::RunStatus::kFinished), rank);
  } catch (const std::exception& e) {
    abortJob(rank, e.what());
  }
}

}  // namespace

std::string unsupportedLayoutFeature(const layout::Layout& l) {
  // cuda: no usable GPU here (every layout runs on one).
  if (l.backend == layout::Backend::kCpu) {  // bf16 on the CPU (auto: after the probe)
    if (const Status s = engine::checkPrecision(engine::Device::kHost, l.precision); !s.isOk()) {
      return s.message();
    }
  }
  if (l.backend == layout::Backend::kCuda) {
    auto choice = engine::chooseBackend(l.backend);
    if (!choice.isOk()) return choice.status().message();
  }
  return "";
}

ExitCode runLayoutTraining(const LayoutTrainArgs& args) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  const MPI_Comm job = args.collected ? splitTrainers(/*isCollector=*/false) : MPI_COMM_WORLD;
  int rank = 0, size = 1;
  MPI_Comm_rank(job, &rank);
  MPI_Comm_size(job, &size);
  std::optional<storage::ProcessIdentity> launcher;
  if (!args.launcher.empty()) {
    auto parsed = parseLauncherArgument(args.launcher);
    if (parsed.isOk()) launcher = *parsed;
  }
  watchParent(rank, launcher);
  // Problems every rank finds alike: each returns, rank 0 says why.
  auto refuse = [&](const std::string& message, ExitCode code) {
    if (rank == 0) std::fprintf(stderr, "error: %s\n", message.c_str());
    if (args.collected) agreeToStart(false);  // the collector ends too
    MPI_Finalize();
    return code;
  };
  if (provided < MPI_THREAD_MULTIPLE) {
    return refuse(
        "MPI does not provide MPI_THREAD_MULTIPLE (the tracer and the gradient "
        "buckets need it)",
        1);
  }
  auto layout = readLayout(args, size);
  if (!layout.isOk()) return refuse(layout.status().message(), 2);
  if (!args.backend.empty()) {
    auto backend = layout::parseBackend(args.backend);
    if (!backend.isOk()) return refuse(backend.status().message(), 2);
    layout->backend = *backend;
  }
  if (!args.precision.empty()) {
    auto precision = layout::parsePrecision(args.precision);
    if (!precision.isOk()) return refuse(precision.status().message(), 2);
    layout->precision = *precision;
  }
  if (const std::string unsupported = unsupportedLayoutFeature(*layout); !unsupported.empty()) {
    return refuse(unsupported, 2);
  }
  // Every rank probes its own GPU for auto; rank 0 says what it found (cuda
  // was checked above).
  auto choice = engine::chooseBackend(layout->backend);
  if (!choice.isOk()) return refuse(choice.status().message(), backendExitCode(choice.status()));
  if (const Status s = engine::checkPrecision(choice->device, layout->precision); !s.isOk()) {
    return refuse(s.message(), 2);  // auto without a GPU, asked for bf16
  }
  if (rank == 0 && !choice->note.empty()) std::fprintf(stderr, "note: %s\n", choice->note.c_str());
  if (args.collected && !agreeToStart(true)) {  // another rank refused and said why
    MPI_Finalize();
    return 1;
  }
  trainRank(*layout, args, *choice, job, rank, size);  // aborts the job on failure
  MPI_Finalize();
  return 0;
}

}  // namespace bubblescope::cli
