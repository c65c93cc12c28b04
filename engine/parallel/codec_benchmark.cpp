#include "engine/parallel/codec_benchmark.h"

#include <algorithm>
#include <limits>

#include "engine/parallel/bucket_reduction.h"
#include "engine/parallel/mirror_communicator.h"
#include "engine/rng.h"
#include "tracer/clock.h"

namespace bubblescope::engine {

namespace {

struct Least {
  double wallNs = std::numeric_limits<double>::infinity();
  double cpuNs = std::numeric_limits<double>::infinity();
};

// Runs `round` once untimed, then `repetitions` times, keeping the least
// wall and CPU time of a round.
template <typename Round>
Result<Least> timeRounds(int32_t repetitions, Round round) {
  BS_RETURN_IF_ERROR(round());
  Least least;
  for (int32_t i = 0; i < repetitions; ++i) {
    const int64_t wall0 = tracer::hostNowNs(), cpu0 = tracer::threadCpuNowNs();
    BS_RETURN_IF_ERROR(round());
    const int64_t cpu1 = tracer::threadCpuNowNs(), wall1 = tracer::hostNowNs();
    least.wallNs = std::min(least.wallNs, static_cast<double>(wall1 - wall0));
    least.cpuNs = std::min(least.cpuNs, static_cast<double>(cpu1 - cpu0));
  }
  return least;
}

}  // namespace

Result<CodecCost> measureCodecCost(const layout::GradCompressionSpec& spec,
                                   const std::vector<std::pair<int64_t, int64_t>>& shapes,
                                   int32_t groupSize, int32_t repetitions) {
  if (!spec.compresses()) {
    return Status::invalidArgument("codec cost: grad compression none has no codec to measure");
  }
  if (repetitions < 1) return Status::invalidArgument("codec cost: repetitions must be >= 1");
  if (groupSize < 2) return Status::invalidArgument("codec cost: a group needs 2 ranks or more");
  int64_t n = 0;
  std::vector<GradMatrix> matrices;
  for (const auto& [rows, cols] : shapes) {
    if (rows < 1 || cols < 1) return Status::invalidArgument("codec cost: a shape is empty");
    if (rows > 1 && cols > 1) matrices.push_back({n, rows, cols});
    n += rows * cols;
  }
  if (n == 0) return Status::invalidArgument("codec cost: the bucket is empty");

  std::vector<float> grads(static_cast<size_t>(n)), sum(static_cast<size_t>(n));
  Rng rng(1);
  for (float& g : grads) g = static_cast<float>(rng.normal());

  MirrorCommunicator comm(trace_model::ParallelDim::kDp, groupSize);
  BS_ASSIGN_OR_RETURN(auto reduction, makeBucketReduction(spec, comm, n, std::move(matrices)));
  // The least time inside the collectives of a compressed round.
  Least inside;
  auto compressedRound = [&]() -> Status {
    const MirrorCommunicator::Time before = comm.inCollectives();
    BS_RETURN_IF_ERROR(reduction->start(grads, {}));
    BS_RETURN_IF_ERROR(reduction->finish(sum));
    const MirrorCommunicator::Time after = comm.inCollectives();
    inside.wallNs = std::min(inside.wallNs, static_cast<double>(after.wallNs - before.wallNs));
    inside.cpuNs = std::min(inside.cpuNs, static_cast<double>(after.cpuNs - before.cpuNs));
    return Status::ok();
  };
  auto plainRound = [&]() -> Status {
    std::copy(grads.begin(), grads.end(), sum.begin());
    return comm.allReduce(std::span<float>(sum));
  };
  BS_ASSIGN_OR_RETURN(const Least compressed, timeRounds(repetitions, compressedRound));
  BS_ASSIGN_OR_RETURN(const Least plain, timeRounds(repetitions, plainRound));

  CodecCost c;
  c.elements = n;
  c.repetitions = repetitions;
  const auto sent = static_cast<double>(reduction->busBytes());
  const auto fp32 = static_cast<double>(busBytes(CollectiveKind::kAllReduce, 4 * n, groupSize));
  c.ratio = sent > 0 ? fp32 / sent : 0;
  c.compressedWallNs = compressed.wallNs;
  c.compressedCpuNs = compressed.cpuNs;
  c.plainWallNs = plain.wallNs;
  c.plainCpuNs = plain.cpuNs;
  auto codec = [&](double tCompressed, double tPlain) {
    const double share = c.ratio > 0 ? tPlain / c.ratio : 0;
    return std::max(0.0, tCompressed - share) / static_cast<double>(n);
  };
  c.wallNsPerElement = codec(compressed.wallNs, plain.wallNs);
  c.cpuNsPerElement = codec(compressed.cpuNs, plain.cpuNs);
  c.inCollectivesWallNs = inside.wallNs;
  c.inCollectivesCpuNs = inside.cpuNs;
  c.reduceWallNsPerElement = std::min(c.wallNsPerElement, codec(inside.wallNs, plain.wallNs));
  c.reduceCpuNsPerElement = std::min(c.cpuNsPerElement, codec(inside.cpuNs, plain.cpuNs));
  return c;
}

}  // namespace bubblescope::engine
