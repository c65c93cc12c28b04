// OverviewIndex: the whole-run overview of one run (CoverageOverview) and
// what the timeline must know of the events binned into it so far, shared by
// the thread that builds it (BackgroundIndexer) and the GUI thread that draws
// from it.
//
// Contract: thread-safe. indexPage() reads one page of spans
// (TraceReader::spansAfter: names as ids) with the caller's reader and bins
// it, a GPU stream record in the series of its kernel category (trace_model/
// kernel_category.h), classified once per distinct (kind, name id) of the run:
// the first time an id is met its name is read (TraceReader::eventName), the
// rest is a table lookup. Pages are serialised (one at a time, from any
// thread), read and classified outside the lock and binned under it, so a
// reader sees whole pages. read() hands the overview and the
// per-rank indexed times to a callback under the lock: keep it short (one
// frame's resampling), and never call back into the index from it.
// takeProgress() returns what changed since its last call.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>
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
  // Classifies (name id, kind) once: reads the name the first time.
  Status classify(storage::TraceReader& reader, int64_t nameId, trace_model::EventKind kind);
  // The category classify() found (-1 if it was not called).
  int8_t categoryOf(int64_t nameId, trace_model::EventKind kind) const;

  // Guarded by pageMutex_ (used by pages alone): the kernel category of each
  // name id met on a GPU stream, with the kind it was classified for. Name
  // ids are a file's string ids, dense from 1: a table up to kNameTableIds;
  // ids beyond, and a name met again with another kind (rare: a name has
  // one kind in practice), in a map keyed nameId * kEventKindCount + kind.
  static constexpr int64_t kNameTableIds = int64_t{1} << 24;
  struct NameCategory {
    int8_t kind = -1;
    int8_t category = -1;
  };
  std::vector<NameCategory> categoryOfName_;
  std::unordered_map<int64_t, int8_t> categoryOfOtherName_;
  int64_t cursor_ = 0;
  CoverageOverview overview_;
  std::map<int32_t, int64_t> indexedUntilNs_;
  std::set<CoverageOverview::RowKey> rows_;
  IndexProgress progress_;
};

}  // namespace bubblescope::gui
