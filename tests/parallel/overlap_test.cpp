// Overlap on the timeline: with overlap, gradient buckets are launched while
// the last micro-batch's backward still runs; with --no-overlap they all
// start after it. ZeRO-3 gathers every layer's parameters before its forward
// and before its backward.
//
// When a launched bucket's all-reduce actually starts depends on when the
// communicator's worker thread gets a core (on a busy machine, possibly only
// after backward), so the overlap is checked where the training thread
// launches each bucket, in its own program order, not by the span's start.
#include "parallel_fixture.h"

namespace bubblescope::engine::testing {
namespace {

using trace_model::EventKind;

// Backward must last long enough for a bucket to start under it on two
// oversubscribed cores: a wider, deeper variant of tiny.
TrainerOptions heavierOptions() {
  TrainerOptions o = perRankOptions();
  o.model.preset = "custom";
  o.model.hidden = 128;
  o.model.numLayers = 4;
  o.model.seqLen = 64;
  o.batchSize = 4;
  return o;
}

// A transparent dp group that notes, on the calling (training) thread, the
// host clock at each float all-reduce's launch: the gradient buckets.
class LaunchClock final : public Communicator {
 public:
  explicit LaunchClock(Communicator& inner)
      : Communicator(inner.dim(), inner.worldRanks(), inner.rank()), inner_(inner) {}
  const std::vector<int64_t>& bucketLaunches() const { return launches_; }

 protected:
  Result<std::unique_ptr<PendingComm>> launch(const CommOp& op, bool blocking) override {
    (void)blocking;
    if (op.kind == CollectiveKind::kAllReduce && op.type == ElementType::kFloat32) {
      launches_.push_back(tracer::hostNowNs());
    }
    BS_ASSIGN_OR_RETURN(CommHandle handle, inner_.start(op));
    return std::unique_ptr<PendingComm>(std::make_unique<Forwarded>(inner_, std::move(handle)));
  }

 private:
  struct Forwarded : PendingComm {
    Forwarded(Communicator& inner, CommHandle handle) : inner_(inner), handle_(std::move(handle)) {}
    Status wait(CommTimes& times) override { return inner_.wait(handle_, &times); }
    Communicator& inner_;
    CommHandle handle_;
  };
  Communicator& inner_;
  std::vector<int64_t> launches_;
};

std::vector<trace_model::Event> tracedStep(const DpCase& c, Communicator& comm,
                                           const TrainerOptions& options = perRankOptions()) {
  ParallelOptions p;
  p.zeroStage = layout::zeroStageFromNumber(c.zero).value();
  p.overlap = c.overlap;
  p.bucketElements = c.bucketElements;
  auto trainer =
      std::move(RankTrainer::create(options, {.parallel = p, .groups = {.dp = &comm}}).value());
  tracer::Recorder recorder(worldRank(), true, 1 << 16);
  trainer->setRecorder(&recorder);
  EXPECT_TRUE(trainer->step().isOk());
  trainer->setRecorder(nullptr);
  return recorder.drain();
}

// End of the backward of the step's last micro-batch (the embedding's
// backward is the last layer it runs).
int64_t lastBackwardEnd(const std::vector<trace_model::Event>& events, int32_t lastMicroBatch) {
  int64_t end = 0;
  for (const auto& e : events) {
    if (e.kind == EventKind::kBackward && e.microBatch == lastMicroBatch)
      end = std::max(end, e.endNs);
  }
  return end;
}

TEST(OverlapTest, BucketsLaunchDuringBackwardOnlyWithOverlap) {
  auto inner = dpGroup(2);
  for (bool overlap : {true, false}) {
    LaunchClock comm(*inner);
    const auto events =
        tracedStep({.dp = 2, .overlap = overlap, .bucketElements = 100000}, comm, heavierOptions());
    const int64_t backwardEnd = lastBackwardEnd(events, 1);
    int buckets = 0, earlySpans = 0;
    for (const auto& e : events) {
      if (e.kind != EventKind::kAllReduce || e.name != "grad_all_reduce") continue;
      ++buckets;
      EXPECT_EQ(e.dim, trace_model::ParallelDim::kDp);
      EXPECT_EQ(e.lane, trace_model::Lane::kCommunication);
      if (e.startNs < backwardEnd) ++earlySpans;
    }
    const int64_t psi = heavierOptions().model.parameterCount();
    EXPECT_EQ(buckets, (psi + 99999) / 100000);
    const auto& launches = comm.bucketLaunches();
    const auto earlyLaunches =
        std::count_if(launches.begin(), launches.end(), [&](int64_t t) { return t < backwardEnd; });
    if (overlap) {
      // The buckets of the head and the last blocks are final long before
      // backward ends; the embedding's only at its end.
      EXPECT_GE(earlyLaunches, 1) << "buckets should launch while backward runs (" << buckets
                                  << ")";
    } else {
      EXPECT_EQ(earlyLaunches, 0) << "without overlap no bucket launches before backward ends";
      EXPECT_EQ(earlySpans, 0) << "without overlap no bucket starts before backward ends";
    }
  }
}

TEST(OverlapTest, Zero3GathersEachLayerBeforeForwardAndBackward) {
  auto comm = dpGroup(4);
  const auto events = tracedStep({.dp = 4, .zero = 3, .bucketElements = 1 << 20}, *comm);
  int gathers = 0, scatters = 0;
  for (const auto& e : events) {
    if (e.name == "param_all_gather") ++gathers;
    if (e.kind == EventKind::kReduceScatter) {
      ++scatters;
      EXPECT_EQ(e.dim, trace_model::ParallelDim::kZero);
    }
  }
  // 4 slots (embedding, 2 blocks, head) x 2 micro-batches x (forward + backward).
  EXPECT_EQ(gathers, 4 * 2 * 2);
  EXPECT_EQ(scatters, 2);  // one bucket per micro-batch
}

}  // namespace
}  // namespace bubblescope::engine::testing
