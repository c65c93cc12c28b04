#include "gui/window_cache.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "gui/all_to_all_lane.h"
#include "trace_model/kernel_category.h"

namespace bubblescope::gui {

Status WindowCache::fetch(storage::TraceReader& reader, int64_t runId, int64_t t0Ns, int64_t t1Ns) {
  valid_ = false;
  rows_.clear();
  arrows_.clear();
  kernelCategories_ = 0;
  auto events = reader.eventsInWindow(runId, {}, t0Ns, t1Ns);
  if (!events.isOk()) return events.status();
  eventCount_ = static_cast<int64_t>(events->size());
  for (trace_model::Event& e : *events) {
    Row& row = rows_[{e.rank, timelineLaneOf(e)}];
    row.maxDurationNs = std::max(row.maxDurationNs, e.endNs - e.startNs);
    row.events.push_back(std::move(e));
  }
  // Kernel names repeat: each distinct (kind, name) is classified once.
  std::unordered_map<std::string, int8_t> byName[trace_model::kEventKindCount];
  for (auto& [key, row] : rows_) {
    std::stable_sort(row.events.begin(), row.events.end(),
                     [](const trace_model::Event& a, const trace_model::Event& b) {
                       return a.startNs < b.startNs;
                     });
    if (!trace_model::isGpuStreamLane(static_cast<trace_model::Lane>(key.second))) continue;
    row.categories.reserve(row.events.size());
    for (const trace_model::Event& e : row.events) {
      const int k = static_cast<int>(e.kind);
      auto& memo = byName[k >= 0 && k < trace_model::kEventKindCount ? k : 0];
      auto [it, inserted] = memo.try_emplace(e.name, int8_t{0});
      if (inserted) {
        it->second = static_cast<int8_t>(trace_model::kernelCategoryOf(e.kind, e.name));
      }
      row.categories.push_back(it->second);
      kernelCategories_ |= uint32_t{1} << it->second;
    }
  }
  t0Ns_ = t0Ns;
  t1Ns_ = t1Ns;
  valid_ = true;
  matchTransfers();
  return Status::ok();
}

void WindowCache::matchTransfers() {
  // (sender, receiver, step, micro-batch) -> events in start order; the i-th
  // send of a key pairs with the i-th receive of that key.
  using Key = std::tuple<int32_t, int32_t, int32_t, int32_t>;
  std::map<Key, std::vector<const trace_model::Event*>> sends, recvs;
  for (const auto& [key, row] : rows_) {
    for (const trace_model::Event& e : row.events) {
      if (e.peer < 0) continue;
      if (e.kind == trace_model::EventKind::kSend) {
        sends[{e.rank, e.peer, e.step, e.microBatch}].push_back(&e);
      } else if (e.kind == trace_model::EventKind::kRecv) {
        recvs[{e.peer, e.rank, e.step, e.microBatch}].push_back(&e);
      }
    }
  }
  auto byStart = [](const trace_model::Event* a, const trace_model::Event* b) {
    return a->startNs < b->startNs;
  };
  for (auto& [key, s] : sends) {
    auto it = recvs.find(key);
    if (it == recvs.end()) continue;
    std::vector<const trace_model::Event*>& r = it->second;
    std::stable_sort(s.begin(), s.end(), byStart);
    std::stable_sort(r.begin(), r.end(), byStart);
    for (size_t i = 0; i < std::min(s.size(), r.size()); ++i) {
      arrows_.push_back({s[i]->rank, r[i]->rank, s[i]->startNs, r[i]->endNs});
    }
  }
  std::sort(arrows_.begin(), arrows_.end(), [](const FrameArrow& a, const FrameArrow& b) {
    return std::min(a.fromNs, a.toNs) < std::min(b.fromNs, b.toNs);
  });
}

std::vector<const trace_model::Event*> WindowCache::overlapping(const RowKey& key, double t0Ns,
                                                                double t1Ns) const {
  std::vector<const trace_model::Event*> out;
  overlapping(key, t0Ns, t1Ns, out);
  return out;
}

const WindowCache::Row* WindowCache::overlapping(const RowKey& key, double t0Ns, double t1Ns,
                                                 std::vector<const trace_model::Event*>& out) const {
  out.clear();
  auto it = rows_.find(key);
  if (it == rows_.end()) return nullptr;
  const Row& row = it->second;
  const double from = t0Ns - static_cast<double>(row.maxDurationNs);
  auto first = std::lower_bound(
      row.events.begin(), row.events.end(), from,
      [](const trace_model::Event& e, double t) { return static_cast<double>(e.startNs) < t; });
  for (auto e = first; e != row.events.end() && static_cast<double>(e->startNs) < t1Ns; ++e) {
    if (static_cast<double>(e->endNs) > t0Ns || (e->endNs == e->startNs && e->startNs >= t0Ns)) {
      out.push_back(&*e);
    }
  }
  return &row;
}

std::optional<trace_model::Event> WindowCache::eventAt(const RowKey& key, double tNs,
                                                       double toleranceNs) const {
  const trace_model::Event* best = nullptr;
  double bestDistance = toleranceNs;
  for (const trace_model::Event* e : overlapping(key, tNs - toleranceNs, tNs + toleranceNs)) {
    double distance = 0.0;
    if (tNs < e->startNs) distance = e->startNs - tNs;
    if (tNs > e->endNs) distance = tNs - e->endNs;
    // Inside a span wins; among spans inside, the shortest (the innermost).
    if (distance < bestDistance || (distance == 0.0 && best != nullptr && bestDistance == 0.0 &&
                                    e->endNs - e->startNs < best->endNs - best->startNs)) {
      best = e;
      bestDistance = distance;
    } else if (best == nullptr && distance <= bestDistance) {
      best = e;
      bestDistance = distance;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

int8_t WindowCache::kernelCategoryOf(const RowKey& key, const trace_model::Event* e) const {
  auto it = rows_.find(key);
  return kernelCategoryOf(it == rows_.end() ? nullptr : &it->second, e);
}

int8_t WindowCache::kernelCategoryOf(const Row* row, const trace_model::Event* e) {
  if (row == nullptr || row->categories.empty()) return -1;
  const std::ptrdiff_t i = e - row->events.data();
  return i >= 0 && i < static_cast<std::ptrdiff_t>(row->categories.size()) ? row->categories[i]
                                                                             : -1;
}

std::vector<WindowCache::RowKey> WindowCache::rowKeys() const {
  std::vector<RowKey> keys;
  for (const auto& [key, row] : rows_) keys.push_back(key);
  return keys;
}

}  // namespace bubblescope::gui
