// `bubblescope-cli bench allreduce`: bus bandwidth of the engine's bucketed
// gradient all-reduce (DataParallel, ZeRO 0, buckets on the communicator's
// worker) against one bare MPI_Allreduce of the same bytes, interleaved in
// the same job. Bus bandwidth as nccl-tests defines it (REFERENCE.md):
// busbw = 2(n-1)/n x bytes / time.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cli/commands.h"
#include "cli/mpirun.h"
#include "common/median.h"
#include "engine/parallel/data_parallel.h"
#include "engine/parallel/mpi_communicator.h"

namespace bubblescope::cli {
namespace {

struct Options {
  int ranks = 4;
  std::string model = "small";
  double bucketMb = 4.0;
  int iterations = 20;
};

std::vector<std::string> rankArgs(const Options& o) {
  return {"--model",      o.model,
          "--bucket-mb",  std::to_string(o.bucketMb),
          "--iterations", std::to_string(o.iterations)};
}

ExitCode runBench(const Options& o) {
  auto mpirun = findMpirun();
  if (!mpirun.isOk()) {
    std::fprintf(stderr, "error: %s\n", mpirun.status().message().c_str());
    return 1;
  }
  MpirunRequest request;
  request.ranks = o.ranks;
  request.program = {selfExecutable(), "bench", "allreduce-rank"};
  const auto args = rankArgs(o);
  request.program.insert(request.program.end(), args.begin(), args.end());
  auto rc = runChild(mpirunCommand(*mpirun, request));
  if (!rc.isOk()) {
    std::fprintf(stderr, "error: %s\n", rc.status().message().c_str());
    return 1;
  }
  return *rc;
}

// Seconds of `body` on the slowest rank, started together.
template <class F>
double timed(F&& body) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  body();
  double mine = MPI_Wtime() - t0, slowest = 0.0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

Status measure(const Options& o, int rank, int size) {
  BS_ASSIGN_OR_RETURN(const auto config, layout::modelPreset(o.model));
  engine::Allocator allocator;
  BS_ASSIGN_OR_RETURN(auto model, engine::GptModel::create(config, &allocator));
  BS_ASSIGN_OR_RETURN(auto comm, engine::MpiCommunicator::split(MPI_COMM_WORLD, 0, rank,
                                                                trace_model::ParallelDim::kDp));
  engine::DataParallelOptions d;
  d.bucketElements = std::max<int64_t>(1, static_cast<int64_t>(o.bucketMb * (1 << 20) / 4));
  BS_ASSIGN_OR_RETURN(auto dp, engine::DataParallel::create(*model, allocator, *comm, d));
  const int64_t elements = dp->flat().total();
  std::vector<float> bare(static_cast<size_t>(elements), 1.0f);
  std::vector<double> engineS, mpiS;
  Status failed;
  for (int i = -1; i < o.iterations; ++i) {  // i = -1 warms both up
    const double e = timed([&] {
      const Status s = dp->synchronizeAll();
      if (!s.isOk() && failed.isOk()) failed = s;
    });
    const double m = timed([&] {
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
    std::printf("ranks: %d\n", size);
    std::printf("model: %s\n", o.model.c_str());
    std::printf("bytes: %.0f\n", bytes);
    std::printf("buckets: %lld\n",
                static_cast<long long>((elements + d.bucketElements - 1) / d.bucketElements));
    std::printf("engine_ms: %.3f\n", median(engineS) * 1e3);
    std::printf("mpi_ms: %.3f\n", median(mpiS) * 1e3);
    std::printf("engine_busbw_gb_s: %.3f\n", engineBus);
    std::printf("mpi_busbw_gb_s: %.3f\n", mpiBus);
    std::printf("engine_to_mpi_ratio: %.3f\n", engineBus / mpiBus);
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

void addOptions(CLI::App* cmd, Options& o) {
  cmd->add_option("--model", o.model, "Model preset whose parameter count sizes the buffer")
      ->capture_default_str();
  cmd->add_option("--bucket-mb", o.bucketMb, "Gradient bucket size in MiB")->capture_default_str();
  cmd->add_option("--iterations", o.iterations, "Timed iterations per side (interleaved)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

}  // namespace

void addBenchAllreduce(CLI::App& bench, CommandRunner& runner) {
  auto o = std::make_shared<Options>();
  auto* cmd = bench.add_subcommand(
      "allreduce", "Bus bandwidth of the engine's bucketed all-reduce vs MPI_Allreduce");
  cmd->add_option("--ranks", o->ranks, "Ranks of the job")
      ->check(CLI::Range(2, 64))
      ->capture_default_str();
  addOptions(cmd, *o);
  cmd->callback([&runner, o] { runner = [o] { return runBench(*o); }; });
  auto* worker = bench.add_subcommand("allreduce-rank", "One rank of `bench allreduce`");
  worker->group("");  // hidden: started through mpirun
  addOptions(worker, *o);
  worker->callback([&runner, o] { runner = [o] { return runRank(*o); }; });
}

}  // namespace bubblescope::cli
