#include "gui/overview_index.h"

#include <algorithm>

#include "gui/all_to_all_lane.h"

namespace bubblescope::gui {

void OverviewIndex::reset(int32_t bins, int64_t originNs, int64_t binNs) {
  std::lock_guard<std::mutex> page(pageMutex_);
  std::lock_guard<std::mutex> lock(mutex_);
  cursor_ = 0;
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
  std::lock_guard<std::mutex> lock(mutex_);
  if (!spans.isOk()) {
    if (progress_.error.isOk()) progress_.error = spans.status();
    return spans.status();
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
    overview_.add(key, e.kind, e.startNs, e.endNs);
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
