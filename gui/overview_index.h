// OverviewIndex: the whole-run overview of one run (CoverageOverview) and
// what the timeline must know of the events binned into it so far, shared by
// the thread that builds it (BackgroundIndexer) and the GUI thread that draws
// from it.
//
// Contract: thread-safe. indexPage() reads one page of spans
// (TraceReader::spansAfter, no names) with the caller's reader and bins it;
// pages are serialised (one at a time, from any thread) and binned under the
// lock, so a reader sees whole pages. read() hands the overview and the
// per-rank indexed times to a callback under the lock: keep it short (one
// frame's resampling), and never call back into the index from it.
// takeProgress() returns what changed since its last call.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "common/result.h"
#include "gui/coverage_bins.h"
#include "storage/trace_reader.h"

namespace bubblescope::gui {

// What indexing added since the last OverviewIndex::takeProgress().
struct IndexProgress {
  int64_t events = 0;      // events binned in all, since reset()
  bool caughtUp = false;   // the last page was short: all committed events were binned
  int32_t chunkCount = 0;  // 1 + the highest chunk index seen (0: none)
  // Rows (rank, timeline lane) first seen since the last call.
  std::vector<CoverageOverview::RowKey> newRows;
  // [first start, last end] of the events binned since the last call;
  // startNs > endNs when there were none.
  int64_t startNs = INT64_MAX;
  int64_t endNs = INT64_MIN;
  Status error;  // the first error a page met (indexing stops there)
};

class OverviewIndex {
 public:
  // Starts over: `bins` bins from originNs, each binNs wide (CoverageOverview).
  void reset(int32_t bins, int64_t originNs, int64_t binNs);

  // Reads up to `limit` events of run `runId` appended after the last page
  // with `reader` and bins them. Returns how many; errors are also kept for
  // takeProgress().
  Result<int64_t> indexPage(storage::TraceReader& reader, int64_t runId, int64_t limit);

  IndexProgress takeProgress();
  // Records an error met outside indexPage() (e.g. opening a reader); the
  // first error stays, and indexPage() returns it from then on.
  void fail(const Status& error);

  // Calls fn(overview, indexedUntilNs) under the lock; indexedUntilNs holds,
  // per rank, the latest end of its binned events.
  template <typename Fn>
  void read(Fn&& fn) const {
    std::lock_guard<std::mutex> lock(mutex_);
    fn(overview_, indexedUntilNs_);
  }

 private:
  std::mutex pageMutex_;      // held for a whole indexPage(): serialises pages
  mutable std::mutex mutex_;  // guards everything below
  int64_t cursor_ = 0;
  CoverageOverview overview_;
  std::map<int32_t, int64_t> indexedUntilNs_;
  std::set<CoverageOverview::RowKey> rows_;
  IndexProgress progress_;
};

}  // namespace bubblescope::gui
