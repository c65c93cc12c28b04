// `bubblescope-cli bench alltoall`: the engine's MoE dispatch + combine (the
// three all-to-alls of an MoE block's forward: counts, dispatch, combine,
// through Communicator::allToAll with the ep dimension and a recorder, as a
// traced ep run calls them) against bare MPI_Alltoallv calls of the same
// counts and bytes, interleaved in the same job. Bandwidths as nccl-tests
// defines them for all-to-all (docs/formulas.md): algbw = bytes / time with
// bytes = a rank's send buffers, busbw = algbw · (n−1)/n. The routing is
// real: each rank routes its tokens top-k over the experts by a seeded
// softmax router whose logits favour no expert, caps each expert at
// ceil(F·k·T/E) rows and sends only the kept rows (docs/benchmarks.md).
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "cli/commands.h"
#include "cli/mpi_bench_command.h"
#include "cli/mpirun.h"
#include "cli/slowest_rank_seconds.h"
#include "common/median.h"
#include "engine/parallel/mpi_communicator.h"
#include "tracer/recorder.h"

namespace bubblescope::cli {
namespace {

struct Options {
  int ranks = 4;
  int tokens = 2048;  // per rank and micro-batch
  int hidden = 768;
  int experts = 8;
  int topK = 2;
  double capacityFactor = 1.25;
  int iterations = 20;
};

std::vector<std::string> rankArgs(const Options& o) {
  return {"--tokens",          std::to_string(o.tokens),
          "--hidden",          std::to_string(o.hidden),
          "--experts",         std::to_string(o.experts),
          "--top-k",           std::to_string(o.topK),
          "--capacity-factor", std::to_string(o.capacityFactor),
          "--iterations",      std::to_string(o.iterations)};
}

ExitCode runBench(const Options& o) {
  if (o.experts % o.ranks != 0) {
    std::fprintf(stderr, "error: --experts %d is not a multiple of --ranks %d (the ep group)\n",
                 o.experts, o.ranks);
    return 1;
  }
  if (o.topK > o.experts) {
    std::fprintf(stderr, "error: --top-k %d is more than --experts %d\n", o.topK, o.experts);
    return 1;
  }
  return launchMpiBench("alltoall", o.ranks, rankArgs(o));
}

// Kept rows per expert of this rank's tokens: top-k of a softmax over seeded
// Gaussian logits, at most ceil(F·k·T/E) rows per expert (tokens in order).
std::vector<int> keptRowsPerExpert(const Options& o, int rank) {
  std::mt19937 rng(1337u + static_cast<unsigned>(rank));
  std::normal_distribution<float> logit(0.0f, 1.0f);
  const int capacity =
      static_cast<int>(std::ceil(o.capacityFactor * o.topK * o.tokens / o.experts));
  std::vector<int> kept(static_cast<size_t>(o.experts), 0);
  std::vector<int> order(static_cast<size_t>(o.experts));
  std::vector<float> z(static_cast<size_t>(o.experts));
  for (int t = 0; t < o.tokens; ++t) {
    for (float& v : z) v = logit(rng);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + o.topK, order.end(),
                      [&z](int a, int b) { return z[a] > z[b]; });
    for (int j = 0; j < o.topK; ++j) {
      int& rows = kept[static_cast<size_t>(order[static_cast<size_t>(j)])];
      if (rows < capacity) ++rows;  // over capacity: dropped, not sent
    }
  }
  return kept;
}

// One all-to-all's element counts, both ways, and MPI's displacements.
struct Exchange {
  std::vector<int> send, recv;
  int64_t sendTotal() const { return std::accumulate(send.begin(), send.end(), int64_t{0}); }
  int64_t recvTotal() const { return std::accumulate(recv.begin(), recv.end(), int64_t{0}); }
  Exchange reversed() const { return {recv, send}; }
};

int mpiAllToAll(const float* send, float* recv, const Exchange& x) {
  const auto sd = engine::displacements(x.send), rd = engine::displacements(x.recv);
  return MPI_Alltoallv(send, x.send.data(), sd.data(), MPI_FLOAT, recv, x.recv.data(), rd.data(),
                       MPI_FLOAT, MPI_COMM_WORLD);
}

Status measure(const Options& o, int rank, int size) {
  BS_ASSIGN_OR_RETURN(auto comm, engine::MpiCommunicator::split(MPI_COMM_WORLD, 0, rank,
                                                                trace_model::ParallelDim::kEp));
  tracer::Recorder recorder(rank, true);
  comm->setRecorder(&recorder);
  const int perRank = o.experts / size;
  // Counts: E floats, this rank's kept rows for each expert, to the experts' ranks.
  const std::vector<int> kept = keptRowsPerExpert(o, rank);
  const Exchange counts{std::vector<int>(static_cast<size_t>(size), perRank),
                        std::vector<int>(static_cast<size_t>(size), perRank)};
  std::vector<float> keptF(kept.begin(), kept.end()), theirs(static_cast<size_t>(o.experts));
  if (mpiAllToAll(keptF.data(), theirs.data(), counts) != MPI_SUCCESS)
    return Status::internal("MPI_Alltoallv of the counts failed");
  // Dispatch: rows to each expert's rank; combine: the same rows back.
  Exchange dispatch{std::vector<int>(static_cast<size_t>(size), 0),
                    std::vector<int>(static_cast<size_t>(size), 0)};
  for (int e = 0; e < o.experts; ++e) {
    dispatch.send[static_cast<size_t>(e / perRank)] += kept[static_cast<size_t>(e)] * o.hidden;
  }
  for (int r = 0; r < size; ++r) {
    for (int e = rank * perRank; e < (rank + 1) * perRank; ++e) {
      // theirs holds rank r's counts for this rank's experts at r·perRank …
      dispatch.recv[static_cast<size_t>(r)] +=
          static_cast<int>(theirs[static_cast<size_t>(r * perRank + e - rank * perRank)]) *
          o.hidden;
    }
  }
  const Exchange combine = dispatch.reversed();
  std::vector<float> tokens(static_cast<size_t>(dispatch.sendTotal()), 1.0f);
  std::vector<float> atExperts(static_cast<size_t>(dispatch.recvTotal()));
  std::vector<float> back(static_cast<size_t>(combine.recvTotal()));
  std::vector<float> countsIn(static_cast<size_t>(o.experts));
  std::vector<trace_model::Event> spans;
  std::vector<double> engineS, mpiS;
  Status failed;
  auto check = [&failed](const Status& s) {
    if (!s.isOk() && failed.isOk()) failed = s;
  };
  for (int i = -1; i < o.iterations; ++i) {  // i = -1 warms both up
    const double e = slowestRankSeconds([&] {
      check(comm->allToAll(keptF, countsIn, counts.send, counts.recv, {.name = "moe_counts"}));
      check(comm->allToAll(tokens, atExperts, dispatch.send, dispatch.recv,
                           {.name = "moe_dispatch"}));
      check(comm->allToAll(atExperts, back, combine.send, combine.recv, {.name = "moe_combine"}));
    });
    spans.clear();
    recorder.drainInto(spans);
    const double m = slowestRankSeconds([&] {
      int rc = mpiAllToAll(keptF.data(), countsIn.data(), counts);
      rc |= mpiAllToAll(tokens.data(), atExperts.data(), dispatch);
      rc |= mpiAllToAll(atExperts.data(), back.data(), combine);
      if (rc != MPI_SUCCESS) check(Status::internal("MPI_Alltoallv failed"));
    });
    if (i >= 0) {
      engineS.push_back(e);
      mpiS.push_back(m);
    }
  }
  BS_RETURN_IF_ERROR(failed);
  // A rank's send buffers of the three all-to-alls, in bytes; the mean over ranks.
  double mine =
      4.0 * static_cast<double>(counts.sendTotal() + dispatch.sendTotal() + combine.sendTotal());
  double sum = 0.0;
  MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  int64_t keptMine = std::accumulate(kept.begin(), kept.end(), int64_t{0}), keptAll = 0;
  MPI_Allreduce(&keptMine, &keptAll, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    const double bytes = sum / size;
    const double busFactor = static_cast<double>(size - 1) / size;  // nccl-tests all-to-all
    const double engineAlg = bytes / median(engineS) / 1e9, mpiAlg = bytes / median(mpiS) / 1e9;
    const double assignments = static_cast<double>(o.tokens) * o.topK * size;
    std::printf("ranks: %d\n", size);
    std::printf("tokens_per_rank: %d\n", o.tokens);
    std::printf("hidden: %d\n", o.hidden);
    std::printf("experts: %d\n", o.experts);
    std::printf("top_k: %d\n", o.topK);
    std::printf("capacity_factor: %.2f\n", o.capacityFactor);
    std::printf("drop_rate: %.4f\n", 1.0 - static_cast<double>(keptAll) / assignments);
    std::printf("bytes_per_rank: %.0f\n", bytes);
    std::printf("engine_ms: %.3f\n", median(engineS) * 1e3);
    std::printf("mpi_ms: %.3f\n", median(mpiS) * 1e3);
    std::printf("engine_algbw_gb_s: %.3f\n", engineAlg);
    std::printf("mpi_algbw_gb_s: %.3f\n", mpiAlg);
    std::printf("engine_busbw_gb_s: %.3f\n", engineAlg * busFactor);
    std::printf("mpi_busbw_gb_s: %.3f\n", mpiAlg * busFactor);
    std::printf("engine_to_mpi_ratio: %.3f\n", engineAlg / mpiAlg);
  }
  return Status::ok();
}

ExitCode runRank(const Options& o) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const Status s = o.experts % size == 0
                       ? measure(o, rank, size)
                       : Status::invalidArgument("--experts must be a multiple of the ranks");
  if (!s.isOk()) {
    std::fprintf(stderr, "error: rank %d: %s\n", rank, s.message().c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}

void addOptions(Command cmd, Options& o) {
  cmd.option("--tokens", o.tokens, "Tokens per rank (one micro-batch: b·s)")
      .positive()
      .showDefault();
  cmd.option("--hidden", o.hidden, "Hidden size C (elements per row)").positive().showDefault();
  cmd.option("--experts", o.experts, "Experts E (a multiple of the ranks)")
      .positive()
      .showDefault();
  cmd.option("--top-k", o.topK, "Experts per token").range(1, 2).showDefault();
  cmd.option("--capacity-factor", o.capacityFactor, "Expert capacity factor F")
      .positive()
      .showDefault();
  cmd.option("--iterations", o.iterations, "Timed iterations per side (interleaved)")
      .positive()
      .showDefault();
}

}  // namespace

void addBenchAlltoall(Command bench, CommandRunner& runner) {
  addMpiBench<Options>(bench, runner, "alltoall",
                       "The engine's MoE dispatch + combine all-to-alls vs MPI_Alltoallv",
                       "Ranks of the job (the ep group)", addOptions, runBench, runRank);
}

}  // namespace bubblescope::cli
