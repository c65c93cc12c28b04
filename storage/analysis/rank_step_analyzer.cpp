#include "storage/analysis/rank_step_analyzer.h"

#include <algorithm>

#include "storage/analysis/bubbles.h"

namespace bubblescope::analysis {
namespace {

using trace_model::EventCategory;
using trace_model::EventKind;

bool isCollective(EventKind kind) {
  switch (kind) {
    case EventKind::kAllReduce:
    case EventKind::kReduceScatter:
    case EventKind::kAllGather:
    case EventKind::kBroadcast:
    case EventKind::kAllToAll:
    case EventKind::kReduce:
      return true;
    default:
      return false;
  }
}

int dimIndex(trace_model::ParallelDim dim) {
  const int d = static_cast<int>(dim);
  return d >= 0 && d < trace_model::kParallelDimCount ? d : 0;
}

}  // namespace

RankStepAnalyzer::RankStepAnalyzer(int32_t rank, std::vector<trace_model::StepWindow> windows)
    : rank_(rank), windows_(std::move(windows)), open_(windows_.size()) {}

void RankStepAnalyzer::add(const trace_model::Event& e) {
  // Windows ending at or before this start can receive no later event.
  size_t first = next_;
  while (first < windows_.size() && windows_[first].endNs <= e.startNs) ++first;
  finishUpTo(first);
  const EventCategory category = trace_model::categoryOf(e.kind);
  bool bytesCounted = false;
  for (size_t i = next_; i < windows_.size() && windows_[i].startNs < e.endNs; ++i) {
    const trace_model::StepWindow& w = windows_[i];
    const trace_model::Interval clipped{std::max(e.startNs, w.startNs), std::min(e.endNs, w.endNs)};
    if (clipped.endNs <= clipped.startNs) continue;
    OpenStep& s = open_[i];
    switch (category) {
      case EventCategory::kCompute:
        s.compute.push_back(clipped);
        break;
      case EventCategory::kWait:
        s.wait.push_back(clipped);
        break;
      case EventCategory::kOther:
        break;
      case EventCategory::kCommunication: {
        const int d = dimIndex(e.dim);
        s.comm.push_back(clipped);
        s.commByDim[d].push_back(clipped);
        if (!bytesCounted) {  // bytes go to the first step the span falls in
          bytesCounted = true;
          s.metrics.commBytesByDim[d] += e.bytes;
          s.metrics.commVolumeByDim[d] += e.kind == EventKind::kAllReduce ? 2 * e.bytes : e.bytes;
        }
        if (isCollective(e.kind) && (e.endNs - e.startNs) * 100 >= w.endNs - w.startNs) {
          s.lastCollectiveStartNs = std::max(s.lastCollectiveStartNs, e.startNs);
        }
        break;
      }
    }
  }
}

void RankStepAnalyzer::finishUpTo(size_t end) {
  for (; next_ < end; ++next_) {
    OpenStep& s = open_[next_];
    const trace_model::StepWindow& w = windows_[next_];
    RankStepMetrics m = s.metrics;
    m.rank = rank_;
    m.step = w.step;
    m.stepNs = w.endNs - w.startNs;
    const trace_model::IntervalSet compute =
        trace_model::IntervalSet::fromUnsorted(std::move(s.compute));
    const trace_model::IntervalSet comm = trace_model::IntervalSet::fromUnsorted(std::move(s.comm));
    const trace_model::IntervalSet wait = trace_model::IntervalSet::fromUnsorted(std::move(s.wait));
    const trace_model::IntervalSet busy = compute.unite(comm);
    m.computeNs = compute.totalNs();
    m.commNs = comm.totalNs();
    m.overlapNs = comm.intersect(compute).totalNs();
    m.exposedCommNs = m.commNs - m.overlapNs;
    const trace_model::IntervalSet bubble = bubbleIntervals(w, busy);
    m.waitNs = wait.intersect(bubble).totalNs();
    m.idleNs = bubble.totalNs() - m.waitNs;
    for (int d = 0; d < trace_model::kParallelDimCount; ++d) {
      const trace_model::IntervalSet dim =
          trace_model::IntervalSet::fromUnsorted(std::move(s.commByDim[d]));
      m.commNsByDim[d] = dim.totalNs();
      m.exposedCommNsByDim[d] = m.commNsByDim[d] - dim.intersect(compute).totalNs();
    }
    m.lastCollectiveStartNs = s.lastCollectiveStartNs;
    finished_.push_back(m);
    s = OpenStep();  // frees the step's intervals
  }
}

std::vector<RankStepMetrics> RankStepAnalyzer::takeFinished() {
  std::vector<RankStepMetrics> out;
  out.swap(finished_);
  return out;
}

std::vector<RankStepMetrics> RankStepAnalyzer::finish() {
  finishUpTo(windows_.size());
  return takeFinished();
}

}  // namespace bubblescope::analysis
