// `bubblescope-cli bench allreduce`: bus bandwidth of the engine's bucketed
// gradient all-reduce (DataParallel, ZeRO 0, buckets on the communicator's
// worker; `--algorithm flat|hierarchical`, `--compression C` as in training)
// against one bare MPI_Allreduce of the uncompressed fp32 buffer, interleaved
// in the same job. Bus bandwidth as nccl-tests defines it (docs/formulas.md):
// busbw = 2(n-1)/n x bytes / time, with bytes the UNCOMPRESSED buffer on both
// sides, so a compressed or hierarchical reduction's figure is its effective
// bandwidth: how fast it delivers the sum of the fp32 gradients.
// `bytes_sent_per_iteration` are the bus bytes the engine's reductions put
// on the wire (bucket_reduction.h), `compression_ratio` the fp32 all-reduce's
// over them. `predicted_*` are the planner's cost model of the same
// reduction (printPrediction below).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cli/commands.h"
#include "cli/mpi_bench_command.h"
#include "cli/mpirun.h"
#include "cli/slowest_rank_seconds.h"
#include "common/median.h"
#include "engine/layout/grad_comm.h"
#include "planning/grad_reduction_cost.h"
#include "engine/parallel/data_parallel.h"
#include "engine/parallel/mpi_communicator.h"
#include "engine/parallel/node_groups.h"

namespace bubblescope::cli {
namespace {

struct Options {
  int ranks = 4;
  std::string model = "small";
  double bucketMb = 4.0;
  int iterations = 20;
  std::string algorithm = "flat";
  std::string compression = "none";
  int ranksPerNode = 0;
  double interNodeGbps = 0.0;
  double interNodeLatencyUs = 0.0;
};

std::vector<std::string> rankArgs(const Options& o) {
  return {"--model",
          o.model,
          "--bucket-mb",
          std::to_string(o.bucketMb),
          "--iterations",
          std::to_string(o.iterations),
          "--algorithm",
          o.algorithm,
          "--compression",
          o.compression,
          "--ranks-per-node",
          std::to_string(o.ranksPerNode),
          "--inter-node-gbps",
          std::to_string(o.interNodeGbps),
          "--inter-node-latency-us",
          std::to_string(o.interNodeLatencyUs)};
}

// What the bench's reduction runs: the options checked against the job's
// size, every problem in one message.
struct BenchSetup {
  layout::AllReduceAlgorithm algorithm = layout::AllReduceAlgorithm::kFlat;
  layout::GradCompressionSpec compression;
  engine::InterNodeLink link;
};
Result<BenchSetup> benchSetup(const Options& o, int size) {
  BenchSetup b;
  std::vector<std::string> problems;
  auto algorithm = layout::parseAllReduceAlgorithm(o.algorithm);
  if (algorithm.isOk()) b.algorithm = *algorithm;
  if (!algorithm.isOk()) problems.push_back(algorithm.status().message());
  auto compression = layout::parseGradCompression(o.compression);
  if (compression.isOk()) b.compression = *compression;
  if (!compression.isOk()) problems.push_back(compression.status().message());
  b.link = {o.interNodeGbps, o.interNodeLatencyUs};
  const bool hierarchical = b.algorithm == layout::AllReduceAlgorithm::kHierarchical;
  if (hierarchical && b.compression.compresses()) {
    problems.push_back("--algorithm hierarchical runs uncompressed, got --compression " +
                       b.compression.toString());
  }
  if ((hierarchical || b.link.paced()) && (o.ranksPerNode < 1 || size % o.ranksPerNode != 0)) {
    problems.push_back(
        "--algorithm hierarchical and --inter-node-gbps need --ranks-per-node K "
        "dividing the " +
        std::to_string(size) + " ranks, got " + std::to_string(o.ranksPerNode));
  }
  if (!(o.interNodeGbps >= 0) || !(o.interNodeLatencyUs >= 0)) {
    problems.push_back("--inter-node-gbps and --inter-node-latency-us must be >= 0");
  }
  if (problems.empty()) return b;
  std::string message;
  for (const std::string& p : problems) message += (message.empty() ? "" : "; ") + p;
  return Status::invalidArgument(message);
}

ExitCode runBench(const Options& o) {
  if (auto b = benchSetup(o, o.ranks); !b.isOk()) {  // one message before anything starts
    std::fprintf(stderr, "error: %s\n", b.status().message().c_str());
    return 2;
  }
  return launchMpiBench("allreduce", o.ranks, rankArgs(o));
}

// The planner's cost model of this reduction (planning/grad_reduction_cost.h),
// calibrated by this job's bare MPI all-reduce (bandwidth only, at this group
// size, for both links: the nodes are emulated on one machine), the encoding
// from the model's measured constants.
void printPrediction(const Options& o, const BenchSetup& setup, const layout::ModelConfig& config,
                     int size, int64_t elements, int64_t bucketElements, double mpiS) {
  const double bytes = static_cast<double>(elements) * 4.0;
  layout::Calibration fit;
  for (const char* link : {"same_host", "other_host"}) {
    fit.links.push_back({"dp", link, "allreduce", size, 0.0, mpiS * 1e9 / bytes, 1,
                         static_cast<int64_t>(bytes), static_cast<int64_t>(bytes)});
  }
  layout::GradReductionInput in;
  in.compression = setup.compression;
  in.algorithm = setup.algorithm;
  if (setup.algorithm == layout::AllReduceAlgorithm::kHierarchical || setup.link.paced()) {
    in.link = {o.ranksPerNode, setup.link.gbps, setup.link.latencyUs};
  }
  in.group = size;
  in.elements = static_cast<double>(elements);
  in.bucketElements = bucketElements;
  in.tensors = layout::gradTensors(config, 1, 0, config.numLayers, true, true);
  const layout::GradReductionCost cost = layout::gradReductionCost(in, fit);
  std::printf("predicted_bytes_sent_per_iteration: %.0f\n", cost.sentBytes);
  std::printf("predicted_comm_ms: %.3f\n", cost.commNs / 1e6);
  std::printf("predicted_codec_ms: %.3f\n", cost.codecNs / 1e6);
  std::printf("predicted_ms: %.3f\n", cost.totalNs() / 1e6);
}

Status measure(const Options& o, int rank, int size) {
  BS_ASSIGN_OR_RETURN(const auto config, layout::modelPreset(o.model));
  engine::Allocator allocator;
  BS_ASSIGN_OR_RETURN(auto model, engine::GptModel::create(config, &allocator));
  BS_ASSIGN_OR_RETURN(const BenchSetup setup, benchSetup(o, size));
  BS_ASSIGN_OR_RETURN(auto comm, engine::MpiCommunicator::split(MPI_COMM_WORLD, 0, rank,
                                                                trace_model::ParallelDim::kDp));
  const bool hierarchical = setup.algorithm == layout::AllReduceAlgorithm::kHierarchical;
  engine::NodeGroups nodes;  // emulated nodes of K consecutive ranks
  if (hierarchical || setup.link.paced()) {
    BS_ASSIGN_OR_RETURN(
        nodes, engine::splitIntoNodes(comm->comm(), o.ranksPerNode, trace_model::ParallelDim::kDp));
  }
  if (setup.link.paced()) {  // the all-reduce whose messages cross nodes
    engine::MpiCommunicator& crossing = hierarchical ? *nodes.interNode : *comm;
    std::vector<int32_t> nodeOf(crossing.size());
    for (int32_t g = 0; g < crossing.size(); ++g) {
      nodeOf[g] = hierarchical ? g : g / o.ranksPerNode;  // inter-node ranks: one per node
    }
    crossing.emulateInterNodeLink(std::move(nodeOf), setup.link);
  }
  engine::GradTraffic traffic;
  engine::DataParallelOptions d;
  d.bucketElements = std::max<int64_t>(1, static_cast<int64_t>(o.bucketMb * (1 << 20) / 4));
  d.compression = setup.compression;
  d.traffic = &traffic;
  if (hierarchical) {
    d.intraNode = nodes.intraNode.get();
    d.interNode = nodes.interNode.get();
  }
  BS_ASSIGN_OR_RETURN(auto dp, engine::DataParallel::create(*model, allocator, *comm, d));
  const int64_t elements = dp->flat().total();
  std::vector<float> bare(static_cast<size_t>(elements), 1.0f);
  std::vector<double> engineS, mpiS;
  Status failed;
  // Every iteration reduces the same gradients (untimed refill): values of
  // mixed sign and size, different per rank, so compressors see real data
  // and sums neither vanish nor overflow fp16 over the iterations.
  auto fillGradients = [&] {
    uint64_t x = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(rank + 1);
    for (engine::Parameter* p : model->parameters()) {
      for (float& g : p->grad.span()) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        g = static_cast<float>(static_cast<int64_t>(x >> 40) - (int64_t{1} << 23)) * 0x1p-33f;
      }
    }
  };
  for (int i = -1; i < o.iterations; ++i) {  // i = -1 warms both up
    fillGradients();
    const double e = slowestRankSeconds([&] {
      const Status s = dp->synchronizeAll();
      if (!s.isOk() && failed.isOk()) failed = s;
    });
    const double m = slowestRankSeconds([&] {
      MPI_Allreduce(MPI_IN_PLACE, bare.data(), static_cast<int>(elements), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
    });
    if (i >= 0) {
      engineS.push_back(e);
      mpiS.push_back(m);
    }
  }
  BS_RETURN_IF_ERROR(failed);
  if (rank == 0) {
    const double bytes = static_cast<double>(elements) * 4.0;
    const double factor = 2.0 * (size - 1) / size;  // nccl-tests all-reduce bus factor
    const double engineBus = factor * bytes / median(engineS) / 1e9;
    const double mpiBus = factor * bytes / median(mpiS) / 1e9;
    const double iterations = static_cast<double>(o.iterations + 1);  // the warm-up counted too
    std::printf("ranks: %d\n", size);
    std::printf("model: %s\n", o.model.c_str());
    std::printf("algorithm: %s\n", o.algorithm.c_str());
    std::printf("compression: %s\n", setup.compression.toString().c_str());
    if (nodes.intraNode) std::printf("ranks_per_node: %d (emulated)\n", o.ranksPerNode);
    if (setup.link.paced()) {
      std::printf("inter_node_link: %g Gb/s, %g us (emulated; the MPI side is not paced)\n",
                  setup.link.gbps, setup.link.latencyUs);
    }
    std::printf("bytes: %.0f\n", bytes);
    std::printf("bytes_sent_per_iteration: %.0f\n",
                static_cast<double>(traffic.sentBytes.load()) / iterations);
    std::printf("bytes_uncompressed_per_iteration: %.0f\n",
                static_cast<double>(traffic.uncompressedBytes.load()) / iterations);
    std::printf("compression_ratio: %.3f\n", traffic.ratio());
    std::printf("buckets: %lld\n",
                static_cast<long long>((elements + d.bucketElements - 1) / d.bucketElements));
    std::printf("engine_ms: %.3f\n", median(engineS) * 1e3);
    std::printf("mpi_ms: %.3f\n", median(mpiS) * 1e3);
    std::printf("engine_busbw_gb_s: %.3f\n", engineBus);
    std::printf("mpi_busbw_gb_s: %.3f\n", mpiBus);
    std::printf("engine_to_mpi_ratio: %.3f\n", engineBus / mpiBus);
    printPrediction(o, setup, config, size, elements, d.bucketElements, median(mpiS));
  }
  return Status::ok();
}

ExitCode runRank(const Options& o) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const Status s = measure(o, rank, size);
  if (!s.isOk()) {
    std::fprintf(stderr, "error: rank %d: %s\n", rank, s.message().c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}

void addOptions(Command cmd, Options& o) {
  cmd.option("--model", o.model, "Model preset whose parameter count sizes the buffer")
      .showDefault();
  cmd.option("--bucket-mb", o.bucketMb, "Gradient bucket size in MiB").showDefault();
  cmd.option("--iterations", o.iterations, "Timed iterations per side (interleaved)")
      .positive()
      .showDefault();
  cmd.option("--algorithm", o.algorithm, "The engine's all-reduce: flat or hierarchical")
      .showDefault();
  cmd.option("--compression", o.compression,
             "Gradient compression: none, fp16, bf16, int8, topk:RATIO, powersgd:RANK")
      .showDefault();
  cmd.option("--ranks-per-node", o.ranksPerNode,
             "Emulated nodes of K consecutive ranks (hierarchical, paced link)")
      .showDefault();
  cmd.option("--inter-node-gbps", o.interNodeGbps,
             "Pace the engine's messages between emulated nodes (0: off)")
      .showDefault();
  cmd.option("--inter-node-latency-us", o.interNodeLatencyUs,
             "Latency added to each message between emulated nodes")
      .showDefault();
}

}  // namespace

void addBenchAllreduce(Command bench, CommandRunner& runner) {
  addMpiBench<Options>(bench, runner, "allreduce",
                       "Bus bandwidth of the engine's bucketed all-reduce vs MPI_Allreduce",
                       "Ranks of the job", addOptions, runBench, runRank);
}

}  // namespace bubblescope::cli
