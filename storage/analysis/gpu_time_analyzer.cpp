#include "storage/analysis/gpu_time_analyzer.h"

#include <algorithm>

namespace bubblescope::analysis {

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

GpuTimeAnalyzer::GpuTimeAnalyzer(std::vector<trace_model::StepWindow> windows)
    : windows_(std::move(windows)), unions_(windows_.size()) {}

void GpuTimeAnalyzer::add(const trace_model::Event& e) {
  if (!trace_model::isGpuStreamLane(e.lane) || e.kind == trace_model::EventKind::kOther) return;
  const bool compute = e.kind == trace_model::EventKind::kKernel;
  const bool comm = trace_model::categoryOf(e.kind) == trace_model::EventCategory::kCommunication &&
                    e.kind != trace_model::EventKind::kMemcpy;
  while (first_ < windows_.size() && windows_[first_].endNs <= e.startNs) ++first_;
  for (size_t i = first_; i < windows_.size() && windows_[i].startNs < e.endNs; ++i) {
    const int64_t s = std::max(e.startNs, windows_[i].startNs);
    const int64_t t = std::min(e.endNs, windows_[i].endNs);
    if (t <= s) continue;
    sawGpu_ = true;
    Window& w = unions_[i];
    w.busy.add(s, t);
    if (compute) w.compute.add(s, t);
    if (comm) w.comm.add(s, t);
    if (compute || comm) w.commOrCompute.add(s, t);
  }
}

std::optional<GpuTime> GpuTimeAnalyzer::finish() const {
  if (!sawGpu_) return std::nullopt;
  GpuTime g;
  for (size_t i = 0; i < windows_.size(); ++i) {
    const Window& w = unions_[i];
    g.windowNs += windows_[i].endNs - windows_[i].startNs;
    g.busyNs += w.busy.value();
    g.computeNs += w.compute.value();
    g.commNs += w.comm.value();
    // |comm ∩ compute| = |comm| + |compute| − |comm ∪ compute|
    g.overlapNs += w.comm.value() + w.compute.value() - w.commOrCompute.value();
  }
  return g;
}

}  // namespace bubblescope::analysis
