#include "storage/analysis/pipeline_hops.h"

#include <algorithm>
#include <string_view>

namespace bubblescope::analysis {
namespace {

bool endsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

}  // namespace

void PipelineHops::add(const trace_model::Event& e) {
  if (e.dim != trace_model::ParallelDim::kPp || e.step < 0 || e.peer < 0) return;
  const bool send = e.kind == trace_model::EventKind::kSend;
  if (!send && e.kind != trace_model::EventKind::kWait) return;
  const bool activation = endsWith(e.name, "activation");
  if (!activation && !endsWith(e.name, "grad")) return;
  const int32_t chunk = std::max(0, e.chunk);
  if (send) {
    const int32_t next = chunk * stages_ + std::max(0, e.stage) + (activation ? 1 : -1);
    if (next < 0) return;
    sends_[{e.peer, e.rank, e.step, e.microBatch, activation, next / stages_}] = {e.endNs,
                                                                                  e.bytes};
  } else {
    waits_[{e.rank, e.peer, e.step, e.microBatch, activation, chunk}] = {e.startNs, e.endNs};
  }
}

std::vector<HopSample> PipelineHops::hops() const {
  std::vector<HopSample> out;
  for (const auto& [key, wait] : waits_) {
    auto it = sends_.find(key);
    if (it == sends_.end()) continue;
    const Send& s = it->second;
    if (s.endNs <= wait.startNs || s.endNs > wait.endNs) continue;
    out.push_back({std::get<0>(key), std::get<2>(key), s.bytes,
                   static_cast<double>(wait.endNs - s.endNs)});
  }
  return out;
}

}  // namespace bubblescope::analysis
