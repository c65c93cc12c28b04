// Per-pixel coverage binning: the arithmetic behind zoomed-out timelines.
//
// addCoverage() bins one span into columns; CoverageOverview keeps, for a
// whole run, per (rank, lane) and series (a kind, and for a GPU record its
// trace_model::KernelCategory), the ns covered in fixed-width bins that
// double their width as the run grows, and resamples them to any set of
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
  // What one series of a row holds: events of `kind`, and of kernel category
  // `kernelCategory` (a trace_model::KernelCategory; -1 when not classified).
  struct Series {
    trace_model::EventKind kind = trace_model::EventKind::kOther;
    int8_t kernelCategory = -1;
    bool operator==(const Series&) const = default;
  };

  // bins: the number of bins across the covered range (>= 2, even).
  explicit CoverageOverview(int32_t bins = 4096);

  // Starts over with the first bin at originNs and bins of binNs (>= 1).
  void reset(int64_t originNs, int64_t binNs);
  // Adds one event (a GPU stream record in the series of its kernel
  // category); spans past the last bin double the bin width as needed, spans
  // before the origin are clipped to it.
  void add(const trace_model::Event& event);
  // The same for a span of series `series` on row (rank, lane) (a timeline
  // lane: timelineLaneOf).
  void add(const RowKey& key, const Series& series, int64_t startNs, int64_t endNs);

  // The share of each of `columns` columns of [t0Ns, t1Ns) that `series`
  // covers on row `key`, averaged over the bins each column overlaps.
  // Empty when the row never had that series.
  std::vector<float> resample(const RowKey& key, const Series& series, double t0Ns, double t1Ns,
                              int columns) const;
  // Series present on a row, by kind then category.
  std::vector<Series> seriesOf(const RowKey& key) const;
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
  // ns covered per bin of one row and series, with its running sum (rebuilt
  // lazily after adds) so that resampling costs O(columns).
  struct Bins {
    std::vector<float> coveredNs;
    mutable std::vector<double> prefixNs;  // prefixNs[b] = sum of coveredNs[0, b)
    mutable bool dirty = true;
  };
  double cumulativeNs(const Bins& s, double tNs) const;
  // A series as a map key: by kind, then category.
  static int32_t codeOf(const Series& s);
  static Series seriesOfCode(int32_t code);

  std::map<RowKey, std::map<int32_t, Bins>> coveredNs_;
  // The series of the last add() (map nodes do not move): consecutive
  // events of one block often share it. Empty after reset() and in a copy.
  struct LastSeries {
    RowKey key{-1, 0};
    int32_t code = -1;
    Bins* series = nullptr;
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
