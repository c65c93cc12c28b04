// WindowCache: the events of one time range of a run, fetched once through
// TraceReader::eventsInWindow and kept per (rank, lane) in start order, with
// the send -> receive pairs among them.
//
// Contract: holds at most what one fetch returned (the caller bounds the range
// so that this stays under its event budget). Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "common/status.h"
#include "gui/timeline_frame.h"
#include "storage/trace_reader.h"

namespace bubblescope::gui {

class WindowCache {
 public:
  using RowKey = std::pair<int32_t, int32_t>;  // (rank, lane)

  struct Row {
    std::vector<trace_model::Event> events;  // by start
    // GPU stream rows: each event's trace_model::KernelCategory (classified
    // once a fetch, by distinct name); empty on other rows.
    std::vector<int8_t> categories;
    int64_t maxDurationNs = 0;
  };

  // Replaces the content with the events of [t0Ns, t1Ns) of all ranks.
  Status fetch(storage::TraceReader& reader, int64_t runId, int64_t t0Ns, int64_t t1Ns);
  void invalidate() { valid_ = false; }
  bool covers(double t0Ns, double t1Ns) const { return valid_ && t0Ns >= t0Ns_ && t1Ns <= t1Ns_; }
  bool overlaps(int64_t startNs, int64_t endNs) const {
    return valid_ && endNs > t0Ns_ && startNs < t1Ns_;
  }

  // Events of a row that overlap [t0Ns, t1Ns), in start order (pointers into
  // the cache, valid until the next fetch).
  std::vector<const trace_model::Event*> overlapping(const RowKey& key, double t0Ns,
                                                     double t1Ns) const;
  // The same into `out` (cleared first; its capacity is reused across calls:
  // no allocation a row a frame). Returns the row (nullptr when none).
  const Row* overlapping(const RowKey& key, double t0Ns, double t1Ns,
                         std::vector<const trace_model::Event*>& out) const;
  // The event of a row under tNs, or the nearest within toleranceNs.
  std::optional<trace_model::Event> eventAt(const RowKey& key, double tNs,
                                            double toleranceNs) const;
  // The KernelCategory of `e` (a pointer overlapping() returned for `key`),
  // or -1 when its row is not a GPU stream.
  int8_t kernelCategoryOf(const RowKey& key, const trace_model::Event* e) const;
  // The same for `e` of `row` (what overlapping() returned), without the
  // look-up of the row.
  static int8_t kernelCategoryOf(const Row* row, const trace_model::Event* e);
  // Bit c set: some GPU record of the last fetch has KernelCategory c.
  uint32_t kernelCategories() const { return kernelCategories_; }
  // Lanes seen per rank in the fetched events.
  std::vector<RowKey> rowKeys() const;
  // Send -> receive pairs (FrameArrow), sorted by min(fromNs, toNs).
  const std::vector<FrameArrow>& arrows() const { return arrows_; }
  int64_t eventCount() const { return eventCount_; }

 private:
  void matchTransfers();

  bool valid_ = false;
  int64_t t0Ns_ = 0, t1Ns_ = 0;
  int64_t eventCount_ = 0;
  uint32_t kernelCategories_ = 0;
  std::map<RowKey, Row> rows_;
  std::vector<FrameArrow> arrows_;
};

}  // namespace bubblescope::gui
