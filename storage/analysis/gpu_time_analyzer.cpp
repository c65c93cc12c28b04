#include "storage/analysis/gpu_time_analyzer.h"

#include <algorithm>


namespace bubblescope::analysis {

using trace_model::KernelType;

bool isCountedGpuRecord(trace_model::Lane lane, trace_model::EventKind kind) {
  return trace_model::isGpuStreamLane(lane) && kind != trace_model::EventKind::kOther;
}

void GpuTimeAnalyzer::RunningUnion::add(int64_t s, int64_t e) {
  if (s > endNs) {
    totalNs = value();
    startNs = s;
    endNs = e;
  } else {
    endNs = std::max(endNs, e);
  }
}

int64_t GpuTimeAnalyzer::RunningUnion::value() const {
  return endNs >= startNs ? totalNs + (endNs - startNs) : totalNs;
}

void GpuTimeAnalyzer::Totals::add(const trace_model::Event& e, int32_t stream, KernelType type,
                                  std::optional<int64_t> launchNs, int64_t kernelWaitNs) {
  if (!any) firstNs = e.startNs, lastNs = e.endNs;
  any = true;
  lastNs = std::max(lastNs, e.endNs);
  busy.add(e.startNs, e.endNs);
  const bool compute = type == KernelType::kComputation;
  const bool comm = type == KernelType::kCommunication;
  if (compute) this->compute.add(e.startNs, e.endNs);
  if (comm) this->comm.add(e.startNs, e.endNs);
  if (compute || comm) commOrCompute.add(e.startNs, e.endNs);

  auto s = std::find_if(streams.begin(), streams.end(),
                        [stream](const StreamGaps& g) { return g.stream == stream; });
  if (s == streams.end()) {
    streams.push_back({stream, false, 0, {stream, 0, 0, 0}});
    s = streams.end() - 1;
  }
  if (s->any) {
    // HTA: the gap to the previous record's end (negative if they overlap);
    // host wait when the launch began after that end, kernel wait when
    // shorter than the threshold, other otherwise.
    const int64_t gap = e.startNs - s->prevEndNs;
    if (launchNs && *launchNs > s->prevEndNs) {
      s->idle.hostWaitNs += gap;
    } else if (gap < kernelWaitNs) {
      s->idle.kernelWaitNs += gap;
    } else {
      s->idle.otherNs += gap;
    }
  }
  s->any = true;
  s->prevEndNs = e.endNs;
}

GpuTimeAnalyzer::GpuTimeAnalyzer(GpuTimeOptions options,
                                 std::optional<std::vector<trace_model::StepWindow>> profilerSteps)
    : options_(options), cut_(options.includeLastStep, std::move(profilerSteps)) {}

void GpuTimeAnalyzer::add(const trace_model::Event& e) {
  if (e.lane == trace_model::Lane::kCudaApi) {
    if (e.correlationId != 0) launches_.add({e.correlationId, e.startNs, e.endNs});
    return;
  }
  // A step starts after every record held so far, and so after their
  // launches: the last step starts later still, and they count.
  if (cut_.step(e) && pending_) {
    settled_ = std::move(ifAnotherStep_);
    ifAnotherStep_ = {};
    pending_ = false;
  }
  if (trace_model::isHostThreadLane(e.lane)) return;
  if (!isCountedGpuRecord(e.lane, e.kind)) return;
  const int32_t stream =
      static_cast<int32_t>(e.lane) - static_cast<int32_t>(trace_model::Lane::kGpuStreamBase);
  const KernelType type = trace_model::kernelTypeOf(e.kind, e.name);
  const LaunchCall* launch = e.correlationId != 0 ? launches_.find(e.correlationId) : nullptr;
  const std::optional<int64_t> launchNs =
      launch ? std::optional<int64_t>(launch->startNs) : std::nullopt;
  if (!options_.launchCut) {
    settled_.add(e, stream, type, launchNs, options_.kernelWaitNs);
    return;
  }
  if (e.correlationId != 0 && !launchNs) {
    auto b = std::find_if(beforeProfile_.begin(), beforeProfile_.end(),
                          [stream](const BeforeProfile& p) { return p.work.stream == stream; });
    if (b == beforeProfile_.end()) {
      beforeProfile_.push_back({{stream, 0, 0}, {}});
      b = beforeProfile_.end() - 1;
    }
    ++b->work.records;
    b->on.add(e.startNs, e.endNs);
    return;
  }
  const LastStepCut::Verdict verdict = cut_.judge(launchNs, e.startNs);
  if (verdict == LastStepCut::Verdict::kKept) {
    settled_.add(e, stream, type, launchNs, options_.kernelWaitNs);
    if (pending_) ifAnotherStep_.add(e, stream, type, launchNs, options_.kernelWaitNs);
    return;
  }
  if (verdict == LastStepCut::Verdict::kCut) return;
  if (!pending_) {
    ifAnotherStep_ = settled_;
    pending_ = true;
  }
  ifAnotherStep_.add(e, stream, type, launchNs, options_.kernelWaitNs);
}

std::optional<GpuTime> GpuTimeAnalyzer::finish() const {
  const Totals& t = settled_;
  if (!t.any && beforeProfile_.empty()) return std::nullopt;
  GpuTime g;
  g.windowNs = t.any ? t.lastNs - t.firstNs : 0;
  g.busyNs = t.busy.value();
  g.computeNs = t.compute.value();
  g.commNs = t.comm.value();
  // |comm ∩ compute| = |comm| + |compute| − |comm ∪ compute|
  g.overlapNs = g.commNs + g.computeNs - t.commOrCompute.value();
  g.launchCut = options_.launchCut;
  g.includeLastStep = options_.includeLastStep;
  g.steps =
      options_.launchCut ? std::max(1, cut_.steps() - (options_.includeLastStep ? 0 : 1)) : 1;
  for (const StreamGaps& s : t.streams) g.idle.push_back(s.idle);
  std::sort(g.idle.begin(), g.idle.end(),
            [](const GpuStreamIdle& a, const GpuStreamIdle& b) { return a.stream < b.stream; });
  for (const BeforeProfile& b : beforeProfile_) {
    GpuStreamWork w = b.work;
    w.ns = b.on.value();
    g.launchedBeforeProfile.push_back(w);
  }
  std::sort(g.launchedBeforeProfile.begin(), g.launchedBeforeProfile.end(),
            [](const GpuStreamWork& a, const GpuStreamWork& b) { return a.stream < b.stream; });
  return g;
}

}  // namespace bubblescope::analysis
