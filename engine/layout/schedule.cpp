#include "engine/layout/schedule.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace bubblescope::layout {
namespace {

// Appends compute ops to one stage's list together with the receives they
// consume and the sends they produce (the placement contract in schedule.h).
class StageBuilder {
 public:
  StageBuilder(const Schedule& s, int32_t stage, std::vector<Op>& out)
      : p_(s.stages), v_(s.chunks), stage_(stage), zero_(s.zeroStage), out_(out) {}

  void forward(int32_t mb, int32_t chunk) {
    const int32_t vs = chunk * p_ + stage_;
    if (vs > 0 && p_ > 1) out_.push_back({OpType::kRecvActivation, mb, chunk, prevStage()});
    out_.push_back({OpType::kForward, mb, chunk, -1});
    if (vs < p_ * v_ - 1 && p_ > 1) {
      out_.push_back({OpType::kSendActivation, mb, chunk, nextStage()});
    }
  }

  // type is kBackward or kBackwardInput: both consume the output gradient and
  // produce the input gradient.
  void backward(OpType type, int32_t mb, int32_t chunk) {
    const int32_t vs = chunk * p_ + stage_;
    if (vs < p_ * v_ - 1 && p_ > 1) out_.push_back({OpType::kRecvGrad, mb, chunk, nextStage()});
    out_.push_back({type, mb, chunk, -1});
    if (vs > 0 && p_ > 1) out_.push_back({OpType::kSendGrad, mb, chunk, prevStage()});
    if (type == OpType::kBackward) reduceMicroBatch(mb, chunk);
  }

  void weight(int32_t mb, int32_t chunk) {
    out_.push_back({OpType::kBackwardWeight, mb, chunk, -1});
    reduceMicroBatch(mb, chunk);
  }

  void finish() {
    if (!shardsGradients(zero_)) {
      const GradSync sync = gradSyncFor(zero_);
      out_.push_back(
          {sync == GradSync::kAllReduce ? OpType::kAllReduceGrads : OpType::kReduceScatterGrads, -1,
           0, -1});
    }
    out_.push_back({OpType::kOptimizerStep, -1, 0, -1});
    if (gathersUpdatedParameters(zero_)) out_.push_back({OpType::kAllGatherParams, -1, 0, -1});
  }

 private:
  // ZeRO 2, 3: the micro-batch's gradients of the chunk are final after its
  // Backward or W; their reduce-scatter is an op of its own.
  void reduceMicroBatch(int32_t mb, int32_t chunk) {
    if (shardsGradients(zero_)) out_.push_back({OpType::kReduceScatterGrads, mb, chunk, -1});
  }
  int32_t prevStage() const { return (stage_ - 1 + p_) % p_; }
  int32_t nextStage() const { return (stage_ + 1) % p_; }

  int32_t p_, v_, stage_;
  ZeroStage zero_;
  std::vector<Op>& out_;
};

Status checkPM(const char* name, int32_t p, int32_t m) {
  if (p < 1 || m < 1) {
    return Status::invalidArgument(std::string(name) + " needs p >= 1 and m >= 1, got p " +
                                   std::to_string(p) + ", m " + std::to_string(m));
  }
  return Status::ok();
}

Schedule emptySchedule(ScheduleKind kind, int32_t p, int32_t m, int32_t v, ZeroStage zero) {
  Schedule s;
  s.kind = kind;
  s.zeroStage = zero;
  s.stages = p;
  s.microBatches = m;
  s.chunks = v;
  s.stageOps.resize(p);
  return s;
}

// Stage k of 1F1B (v = 1): slot x pairs F_x with B_{x-(p-1-k)}, so the first
// p-1-k slots are the warm-up forwards and the last p-1-k the cool-down
// backwards. With `splitWeight` (ZB-H1) the backward is B only and slot x
// also runs W_{x-(p-1)}: W deferred by k micro-batches fills the cool-down.
void oneFOneBStage(Schedule& s, int32_t k, bool splitWeight) {
  const int32_t p = s.stages, m = s.microBatches;
  StageBuilder b(s, k, s.stageOps[k]);
  for (int32_t x = 0; x < m + p - 1; ++x) {
    if (x < m) b.forward(x, 0);
    const int32_t y = x - (p - 1 - k);
    if (y >= 0 && y < m) {
      b.backward(splitWeight ? OpType::kBackwardInput : OpType::kBackward, y, 0);
    }
    const int32_t z = x - (p - 1);
    if (splitWeight && z >= 0 && z < m) b.weight(z, 0);
  }
  b.finish();
}

// Megatron-LM get_model_chunk_id / microbatch id for the interleaved schedule:
// virtual micro-batch j walks groups of p micro-batches through every chunk.
int32_t interleavedChunk(int32_t j, int32_t p, int32_t v, bool forward) {
  const int32_t c = (j % (p * v)) / p;
  return forward ? c : v - 1 - c;
}
int32_t interleavedMicroBatch(int32_t j, int32_t p, int32_t v) {
  return (j / (p * v)) * p + j % p;
}

}  // namespace

const char* scheduleKindName(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kGPipe:
      return "gpipe";
    case ScheduleKind::kOneFOneB:
      return "1f1b";
    case ScheduleKind::kInterleaved:
      return "interleaved";
    case ScheduleKind::kZeroBubbleH1:
      return "zb-h1";
  }
  return "unknown";
}

std::vector<ScheduleKind> allScheduleKinds() {
  return {ScheduleKind::kGPipe, ScheduleKind::kOneFOneB, ScheduleKind::kInterleaved,
          ScheduleKind::kZeroBubbleH1};
}

Result<ScheduleKind> parseScheduleKind(const std::string& name) {
  std::string known;
  for (ScheduleKind k : allScheduleKinds()) {
    if (name == scheduleKindName(k)) return k;
    known += (known.empty() ? "" : ", ") + std::string(scheduleKindName(k));
  }
  return Status::invalidArgument("unknown schedule '" + name + "' (known: " + known + ")");
}

Result<Schedule> gpipe(int32_t p, int32_t m, ZeroStage zero) {
  BS_RETURN_IF_ERROR(checkPM("gpipe", p, m));
  Schedule s = emptySchedule(ScheduleKind::kGPipe, p, m, 1, zero);
  for (int32_t k = 0; k < p; ++k) {
    StageBuilder b(s, k, s.stageOps[k]);
    for (int32_t mb = 0; mb < m; ++mb) b.forward(mb, 0);
    for (int32_t mb = 0; mb < m; ++mb) b.backward(OpType::kBackward, mb, 0);
    b.finish();
  }
  return s;
}

Result<Schedule> oneFOneB(int32_t p, int32_t m, ZeroStage zero) {
  BS_RETURN_IF_ERROR(checkPM("1f1b", p, m));
  Schedule s = emptySchedule(ScheduleKind::kOneFOneB, p, m, 1, zero);
  for (int32_t k = 0; k < p; ++k) oneFOneBStage(s, k, false);
  return s;
}

Result<Schedule> interleaved(int32_t p, int32_t m, int32_t v, ZeroStage zero) {
  BS_RETURN_IF_ERROR(checkPM("interleaved", p, m));
  if (v < 2) {
    return Status::invalidArgument("interleaved needs v >= 2 chunks per stage, got v " +
                                   std::to_string(v) + " (with v = 1 use 1f1b)");
  }
  if (m % p != 0) {
    return Status::invalidArgument("interleaved needs m divisible by p, got m " +
                                   std::to_string(m) + ", p " + std::to_string(p));
  }
  Schedule s = emptySchedule(ScheduleKind::kInterleaved, p, m, v, zero);
  const int32_t total = m * v;
  for (int32_t k = 0; k < p; ++k) {
    StageBuilder b(s, k, s.stageOps[k]);
    const int32_t warmup = warmupForwards(ScheduleKind::kInterleaved, p, m, v, k);
    auto fwd = [&](int32_t j) {
      b.forward(interleavedMicroBatch(j, p, v), interleavedChunk(j, p, v, true));
    };
    auto bwd = [&](int32_t j) {
      b.backward(OpType::kBackward, interleavedMicroBatch(j, p, v),
                 interleavedChunk(j, p, v, false));
    };
    for (int32_t j = 0; j < warmup; ++j) fwd(j);
    for (int32_t i = 0; i < total - warmup; ++i) {
      fwd(warmup + i);
      bwd(i);
    }
    for (int32_t i = total - warmup; i < total; ++i) bwd(i);
    b.finish();
  }
  return s;
}

Result<Schedule> zeroBubbleH1(int32_t p, int32_t m, ZeroStage zero) {
  BS_RETURN_IF_ERROR(checkPM("zb-h1", p, m));
  if (m < p) {
    return Status::invalidArgument("zb-h1 needs m >= p, got m " + std::to_string(m) + ", p " +
                                   std::to_string(p));
  }
  Schedule s = emptySchedule(ScheduleKind::kZeroBubbleH1, p, m, 1, zero);
  for (int32_t k = 0; k < p; ++k) oneFOneBStage(s, k, true);
  return s;
}

Result<Schedule> makeSchedule(ScheduleKind kind, int32_t p, int32_t m, int32_t v, ZeroStage zero) {
  switch (kind) {
    case ScheduleKind::kGPipe:
      return gpipe(p, m, zero);
    case ScheduleKind::kOneFOneB:
      return oneFOneB(p, m, zero);
    case ScheduleKind::kInterleaved:
      return interleaved(p, m, v, zero);
    case ScheduleKind::kZeroBubbleH1:
      return zeroBubbleH1(p, m, zero);
  }
  return Status::invalidArgument("unknown schedule kind");
}

int32_t warmupForwards(ScheduleKind kind, int32_t p, int32_t m, int32_t v, int32_t stage) {
  switch (kind) {
    case ScheduleKind::kGPipe:
      return m;
    case ScheduleKind::kOneFOneB:
    case ScheduleKind::kZeroBubbleH1:
      return std::min(p - stage - 1, m);
    case ScheduleKind::kInterleaved:
      // Megatron-LM forward_backward_pipelining_with_interleaving, group size p.
      return std::min(2 * (p - stage - 1) + (v - 1) * p, m * v);
  }
  return 0;
}

Status checkOpList(const std::vector<Op>& ops, ZeroStage zero, int32_t stage, int32_t chunks) {
  const bool perMicroBatch = shardsGradients(zero);
  size_t lastCompute = 0, lastCollective = 0, optimizer = ops.size(), gather = ops.size();
  int32_t stepCollectives = 0, microBatchCollectives = 0, optimizers = 0, gathers = 0;
  // ZeRO 2, 3: (micro-batch, chunk) -> its reduce-scatters minus its
  // gradient-completing backwards (Backward or W), each in that order.
  std::map<std::pair<int32_t, int32_t>, int32_t> unreduced;
  bool reducedBeforeBackward = false;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.chunk >= chunks) {
      return Status::invalidArgument("stage " + std::to_string(stage) + "'s op " + toString(op) +
                                     " names a chunk beyond its " + std::to_string(chunks));
    }
    if (isCompute(op.type)) lastCompute = i;
    if (op.type == OpType::kBackward || op.type == OpType::kBackwardWeight) {
      ++unreduced[{op.microBatch, op.chunk}];
    }
    if (isGradientCollective(op.type)) {
      lastCollective = i;
      if (op.microBatch < 0) {
        ++stepCollectives;
      } else {
        ++microBatchCollectives;
        reducedBeforeBackward |= --unreduced[{op.microBatch, op.chunk}] < 0;
      }
    }
    if (op.type == OpType::kOptimizerStep) {
      optimizer = i;
      ++optimizers;
    }
    if (op.type == OpType::kAllGatherParams) {
      gather = i;
      ++gathers;
    }
  }
  const std::string who = "stage " + std::to_string(stage) + "'s op list";
  const bool everyMicroBatchReduced =
      std::all_of(unreduced.begin(), unreduced.end(), [](const auto& u) { return u.second == 0; });
  if (perMicroBatch
          ? stepCollectives != 0 || reducedBeforeBackward || !everyMicroBatchReduced
          : stepCollectives != 1 || microBatchCollectives != 0 || lastCollective < lastCompute) {
    return Status::invalidArgument(
        who + (perMicroBatch ? " must reduce-scatter each micro-batch's gradients (one "
                               "ReduceScatterGrads per micro-batch and chunk, after its backward) "
                               "under ZeRO " +
                                   std::to_string(zeroStageNumber(zero))
                             : " must hold one gradient collective after its last backward"));
  }
  if (optimizers != 1 || optimizer < lastCollective || optimizer < lastCompute) {
    return Status::invalidArgument(
        who +
        " must hold one gradient collective after its last backward and one "
        "OptimizerStep after that");
  }
  const int32_t wantGathers = gathersUpdatedParameters(zero) ? 1 : 0;
  if (gathers != wantGathers || (wantGathers == 1 && gather < optimizer)) {
    return Status::invalidArgument(
        who +
        (wantGathers == 1 ? " must hold one AllGatherParams after its OptimizerStep under ZeRO "
                          : " must hold no AllGatherParams under ZeRO ") +
        std::to_string(zeroStageNumber(zero)));
  }
  return Status::ok();
}


}  // namespace bubblescope::layout
