// Per-pixel coverage binning: the arithmetic behind zoomed-out timelines.
//
// addCoverage() bins one span into columns; CoverageOverview keeps, for a
// whole run, per (rank, lane) and kind, the ns covered in fixed-width bins
// that double their width as the run grows, and resamples them to any set of
// columns. Pure code (no Qt widgets); not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "trace_model/event.h"

namespace bubblescope::gui {

// Adds to out[c] the share of column c of [t0Ns, t0Ns + out.size()·columnNs)
// covered by [startNs, endNs). Precondition: columnNs > 0.
void addCoverage(std::span<float> out, double t0Ns, double columnNs, int64_t startNs,
                 int64_t endNs);

class CoverageOverview {
 public:
  using RowKey = std::pair<int32_t, int32_t>;  // (rank, lane)

  // bins: the number of bins across the covered range (>= 2, even).
  explicit CoverageOverview(int32_t bins = 4096);

  // Starts over with the first bin at originNs and bins of binNs (>= 1).
  void reset(int64_t originNs, int64_t binNs);
  // Adds one event; spans past the last bin double the bin width as needed,
  // spans before the origin are clipped to it.
  void add(const trace_model::Event& event);
  // The same for a span of `kind` on row (rank, lane) (a timeline lane:
  // timelineLaneOf).
  void add(const RowKey& key, trace_model::EventKind kind, int64_t startNs, int64_t endNs);

  // The share of each of `columns` columns of [t0Ns, t1Ns) that `kind`
  // covers on row `key`, averaged over the bins each column overlaps.
  // Empty when the row never had that kind.
  std::vector<float> resample(const RowKey& key, trace_model::EventKind kind, double t0Ns,
                              double t1Ns, int columns) const;
  // Kinds present on a row, in increasing kind order.
  std::vector<trace_model::EventKind> kindsOf(const RowKey& key) const;

  int64_t originNs() const { return originNs_; }
  int64_t binNs() const { return binNs_; }
  int32_t bins() const { return bins_; }
  int64_t events() const { return events_; }

 private:
  void doubleBinWidth();

  int32_t bins_;
  int64_t originNs_ = 0;
  int64_t binNs_ = 1;
  int64_t events_ = 0;
  // ns covered per bin of one row and kind, with its running sum (rebuilt
  // lazily after adds) so that resampling costs O(columns).
  struct Series {
    std::vector<float> coveredNs;
    mutable std::vector<double> prefixNs;  // prefixNs[b] = sum of coveredNs[0, b)
    mutable bool dirty = true;
  };
  double cumulativeNs(const Series& s, double tNs) const;

  std::map<RowKey, std::map<int32_t, Series>> coveredNs_;
  // The series of the last add() (map nodes do not move): consecutive
  // events of one block often share it. Empty after reset() and in a copy.
  struct LastSeries {
    RowKey key{-1, 0};
    int32_t kind = -1;
    Series* series = nullptr;
    LastSeries() = default;
    LastSeries(const LastSeries&) {}
    LastSeries& operator=(const LastSeries&) {
      series = nullptr;
      return *this;
    }
  };
  LastSeries last_;
};

}  // namespace bubblescope::gui
