#include "gui/overview_index.h"

#include <algorithm>

#include "gui/all_to_all_lane.h"
#include "trace_model/kernel_category.h"

namespace bubblescope::gui {

void OverviewIndex::reset(int32_t bins, int64_t originNs, int64_t binNs) {
  std::lock_guard<std::mutex> page(pageMutex_);
  std::lock_guard<std::mutex> lock(mutex_);
  cursor_ = 0;
  categoryOfName_.clear();
  categoryOfOtherName_.clear();
  overview_ = CoverageOverview(bins);
  overview_.reset(originNs, binNs);
  indexedUntilNs_.clear();
  rows_.clear();
  progress_ = {};
}

Result<int64_t> OverviewIndex::indexPage(storage::TraceReader& reader, int64_t runId,
                                         int64_t limit) {
  std::lock_guard<std::mutex> page(pageMutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!progress_.error.isOk()) return progress_.error;
  }
  // Read and decode outside the lock: the GUI thread draws meanwhile.
  auto spans = reader.spansAfter(runId, cursor_, limit);
  // Classify the GPU records' names not met before (reading them) outside
  // the lock too; binning then looks each category up.
  Status classified = spans.status();
  if (spans.isOk()) {
    for (const storage::EventSpan& e : spans->spans) {
      if (!trace_model::isGpuStreamLane(e.lane)) continue;
      classified = classify(reader, e.nameId, e.kind);
      if (!classified.isOk()) break;
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (!classified.isOk()) {
    if (progress_.error.isOk()) progress_.error = classified;
    return classified;
  }
  IndexProgress& p = progress_;
  // Events come a block (one rank) at a time: look rows and ranks up only
  // when they change.
  CoverageOverview::RowKey lastKey{-1, 0};
  int32_t lastRank = -1;
  int64_t* until = nullptr;
  for (const storage::EventSpan& e : spans->spans) {
    const CoverageOverview::RowKey key{e.rank, timelineLaneOf(e.lane, e.dim)};
    if (key != lastKey && rows_.insert(key).second) p.newRows.push_back(key);
    lastKey = key;
    const int8_t category =
        trace_model::isGpuStreamLane(e.lane) ? categoryOf(e.nameId, e.kind) : int8_t{-1};
    overview_.add(key, {e.kind, category}, e.startNs, e.endNs);
    if (e.rank != lastRank || until == nullptr) {
      until = &indexedUntilNs_.try_emplace(e.rank, e.endNs).first->second;
      lastRank = e.rank;
    }
    *until = std::max(*until, e.endNs);
    p.chunkCount = std::max(p.chunkCount, e.chunk + 1);
    p.startNs = std::min(p.startNs, e.startNs);
    p.endNs = std::max(p.endNs, e.endNs);
  }
  const auto n = static_cast<int64_t>(spans->spans.size());
  cursor_ = spans->cursor;
  p.events += n;
  p.caughtUp = n < limit;
  return n;
}

Status OverviewIndex::classify(storage::TraceReader& reader, int64_t nameId,
                               trace_model::EventKind kind) {
  const auto k = static_cast<int8_t>(kind);
  NameCategory* slot = nullptr;
  if (nameId >= 0 && nameId < kNameTableIds) {
    if (nameId >= static_cast<int64_t>(categoryOfName_.size())) {
      categoryOfName_.resize(std::max<size_t>(nameId + 1, categoryOfName_.size() * 2));
    }
    slot = &categoryOfName_[nameId];
    if (slot->kind == k) return Status::ok();
    if (slot->kind >= 0) slot = nullptr;  // the name met with another kind: the map
  }
  if (slot == nullptr &&
      categoryOfOtherName_.count(nameId * trace_model::kEventKindCount + k) > 0) {
    return Status::ok();
  }
  BS_ASSIGN_OR_RETURN(const std::string name, reader.eventName(nameId));
  const auto category = static_cast<int8_t>(trace_model::kernelCategoryOf(kind, name));
  if (slot != nullptr) {
    *slot = {k, category};
  } else {
    categoryOfOtherName_[nameId * trace_model::kEventKindCount + k] = category;
  }
  return Status::ok();
}

int8_t OverviewIndex::categoryOf(int64_t nameId, trace_model::EventKind kind) const {
  const auto k = static_cast<int8_t>(kind);
  if (nameId >= 0 && nameId < static_cast<int64_t>(categoryOfName_.size())) {
    const NameCategory& c = categoryOfName_[nameId];
    if (c.kind == k) return c.category;
  }
  auto it = categoryOfOtherName_.find(nameId * trace_model::kEventKindCount + k);
  return it == categoryOfOtherName_.end() ? int8_t{-1} : it->second;
}

void OverviewIndex::fail(const Status& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (progress_.error.isOk()) progress_.error = error;
}

IndexProgress OverviewIndex::takeProgress() {
  std::lock_guard<std::mutex> lock(mutex_);
  IndexProgress out = progress_;
  progress_.newRows.clear();
  progress_.startNs = INT64_MAX;
  progress_.endNs = INT64_MIN;
  return out;
}

}  // namespace bubblescope::gui
