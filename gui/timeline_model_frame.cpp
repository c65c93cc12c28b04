// TimelineModel::frame(): spans, coverage, bubbles and arrows of one view.
#include <QStringList>
#include <algorithm>
#include <cmath>
#include <set>

#include "gui/span_palette.h"
#include "gui/timeline_model.h"
#include "storage/analysis/bubbles.h"

namespace bubblescope::gui {

namespace {

// Position of a kind in the legend (coverage is stacked in this order).
int legendPosition(trace_model::EventKind kind) {
  static const std::vector<int> positions = [] {
    std::vector<int> p(trace_model::kEventKindCount, 0);
    const auto entries = legendEntries();
    for (size_t i = 0; i < entries.size(); ++i) p[static_cast<int>(entries[i].kind)] = int(i);
    return p;
  }();
  const int k = static_cast<int>(kind);
  return k >= 0 && k < trace_model::kEventKindCount ? positions[k] : trace_model::kEventKindCount;
}

}  // namespace

const TimelineFrame& TimelineModel::frame(double t0Ns, double t1Ns, int columns, int firstRow,
                                          int lastRow) {
  columns = std::max(columns, 1);
  if (t1Ns <= t0Ns) t1Ns = t0Ns + 1;
  firstRow = std::max(firstRow, 0);
  const int requestedLastRow = lastRow;
  lastRow = std::min(lastRow, static_cast<int>(rows_.size()) - 1);
  if (frameVersion_ == version_ && frame_.t0Ns == t0Ns && frame_.t1Ns == t1Ns &&
      frame_.columns == columns && frame_.firstRow == firstRow && frame_.lastRow == lastRow) {
    return frame_;
  }
  TimelineFrame f;
  f.t0Ns = t0Ns;
  f.t1Ns = t1Ns;
  f.columns = columns;
  f.firstRow = firstRow;
  f.lastRow = lastRow;
  if (reader_ != nullptr && lastRow >= firstRow) {
    bool window = estimatedEvents(t0Ns, t1Ns) <= options_.windowBudgetEvents;
    bool loading = false;
    if (window && !cache_.covers(t0Ns, t1Ns)) {
      const double margin = fetchMarginNs(t0Ns, t1Ns);
      const auto a = static_cast<int64_t>(std::floor(t0Ns - margin));
      const auto b = static_cast<int64_t>(std::ceil(t1Ns + margin));
      if (estimatedEvents(static_cast<double>(a), static_cast<double>(b)) >
          static_cast<double>(options_.inlineFetchEvents)) {
        // Too big to fetch in a frame: on the fetch thread, once; the
        // overview meanwhile.
        const auto inFlight = fetcher_.inFlight();
        const bool failed = failedWindow_ && failedWindow_->covers(t0Ns, t1Ns);
        if (!failed && !(inFlight && inFlight->covers(t0Ns, t1Ns))) requestWindow(a, b);
        window = false;
        loading = !failed;
      } else {
        ++windowFetches_;
        const Status s = cache_.fetch(*reader_, runId_, a, b);
        if (!s.isOk()) {
          lastError_ = s;
          window = false;
        } else if (adoptCacheRows()) {
          emit rowsChanged();
          f.lastRow = lastRow = std::min(requestedLastRow, static_cast<int>(rows_.size()) - 1);
        }
      }
    }
    if (window) {
      buildWindowFrame(f);
    } else {
      buildOverviewFrame(f);
    }
    QStringList notes;
    if (!caughtUp_ && f.fromOverview) {
      notes << QStringLiteral("indexing %1%").arg(static_cast<int>(ingestProgress() * 100));
    }
    if (loading) notes << QStringLiteral("loading spans");
    f.note = notes.join(QStringLiteral(" · "));
  }
  frame_ = std::move(f);
  frameVersion_ = version_;
  return frame_;
}

double TimelineModel::fetchMarginNs(double t0Ns, double t1Ns) const {
  const double w = t1Ns - t0Ns;
  if (estimatedEvents(t0Ns - w, t1Ns + w) <= options_.windowBudgetEvents) return w;
  // What the budget leaves after the view, half each side, at the run's
  // mean density (estimatedEvents' own): panning a little and zooming in a
  // little then fetch nothing (issue 31 item 7: a view 0.6 of the budget
  // used to fetch itself alone, and every pan refetched it all).
  const double events = static_cast<double>(std::max(run_.eventCount, ingested_));
  const double density = events / static_cast<double>(std::max<int64_t>(endNs_ - startNs_, 1));
  if (density <= 0) return w;
  const double spare = static_cast<double>(options_.windowBudgetEvents) - density * w;
  return std::clamp(spare / (2 * density), 0.0, w);
}

std::vector<int32_t> TimelineModel::ranksOf(const TimelineFrame& f) const {
  std::vector<int32_t> ranks;
  for (int r = f.firstRow; r <= f.lastRow; ++r) {
    if (ranks.empty() || ranks.back() != rows_[r].rank) ranks.push_back(rows_[r].rank);
  }
  return ranks;
}

void TimelineModel::buildWindowFrame(TimelineFrame& f) {
  const double columnNs = f.columnNs();
  const double maxSpans = f.columns * options_.maxSpansPerColumn;
  // Reused across rows (no allocation a row): the row's events, and its
  // coverage by legend position (a GPU record's category after every kind),
  // in position order.
  std::vector<const trace_model::Event*> events;
  constexpr int kPositions = trace_model::kEventKindCount + trace_model::kKernelCategoryCount + 1;
  std::vector<KindCoverage> byPosition(kPositions);
  for (int r = f.firstRow; r <= f.lastRow; ++r) {
    const TimelineRow& row = rows_[r];
    const WindowCache::RowKey key{row.rank, static_cast<int32_t>(row.lane)};
    const WindowCache::Row* cached = cache_.overlapping(key, f.t0Ns, f.t1Ns, events);
    if (static_cast<double>(events.size()) <= maxSpans) {
      for (const trace_model::Event* e : events) {
        f.spans.push_back({r, e->startNs, e->endNs, e->kind, e->microBatch, e->chunk,
                           WindowCache::kernelCategoryOf(cached, e)});
      }
      continue;
    }
    for (const trace_model::Event* e : events) {
      const int8_t category = WindowCache::kernelCategoryOf(cached, e);
      const int position = category >= 0 ? trace_model::kEventKindCount + category
                                         : legendPosition(e->kind);
      KindCoverage& k = byPosition[std::clamp(position, 0, kPositions - 1)];
      if (k.fraction.empty()) {
        k.kind = e->kind;
        k.kernelCategory = category;
        k.fraction.assign(f.columns, 0.0f);
      }
      addCoverage(k.fraction, f.t0Ns, columnNs, e->startNs, e->endNs);
    }
    RowCoverage rc{r, {}};
    for (KindCoverage& k : byPosition) {
      if (k.fraction.empty()) continue;
      for (float& v : k.fraction) v = std::min(v, 1.0f);
      rc.kinds.push_back(std::move(k));
      k = KindCoverage{};
    }
    f.coverage.push_back(std::move(rc));
  }

  const std::vector<int32_t> ranks = ranksOf(f);
  for (int32_t rank : ranks) {
    auto steps = rankSteps_.find(rank);
    if (steps == rankSteps_.end()) continue;
    std::vector<trace_model::Interval> busySpans;
    for (int32_t lane : lanesOfRank_[rank]) {
      cache_.overlapping({rank, lane}, f.t0Ns, f.t1Ns, events);
      for (const trace_model::Event* e : events) {
        if (analysis::isBusy(e->lane, e->kind)) busySpans.push_back({e->startNs, e->endNs});
      }
    }
    const auto busy = trace_model::IntervalSet::fromUnsorted(std::move(busySpans));
    const auto t0 = static_cast<int64_t>(std::floor(f.t0Ns));
    const auto t1 = static_cast<int64_t>(std::ceil(f.t1Ns));
    for (const trace_model::StepWindow& w : steps->second) {
      if (w.endNs <= f.t0Ns || w.startNs >= f.t1Ns) continue;
      // Only real gaps are drawn: those a column wide or more (the painter
      // hatches the whole columns inside them). Narrower ones lie in columns
      // that also hold work, and a column with any work in it is never
      // hatched: summing slivers into "mostly idle" columns hatched lanes of
      // dense short kernels whole when zoomed out.
      // Only the busy intervals inside the step matter (bubbleIntervals
      // subtracts them from it): found by binary search, so a view of many
      // steps costs O(busy), not O(steps × busy).
      const auto& all = busy.intervals();
      const auto from = std::partition_point(
          all.begin(), all.end(), [&](const trace_model::Interval& i) { return i.endNs <= w.startNs; });
      const auto to = std::partition_point(
          from, all.end(), [&](const trace_model::Interval& i) { return i.startNs < w.endNs; });
      const auto inStep = trace_model::IntervalSet::fromUnsorted({from, to});
      const trace_model::IntervalSet gaps = analysis::bubbleIntervals(w, inStep).clip(t0, t1);
      for (const trace_model::Interval& gap : gaps.intervals()) {
        if (static_cast<double>(gap.endNs - gap.startNs) >= columnNs) {
          f.bubbles.push_back({rank, gap.startNs, gap.endNs});
        }
      }
    }
  }

  addArrows(f, ranks);
}

void TimelineModel::addArrows(TimelineFrame& f, const std::vector<int32_t>& ranks) const {
  // Readable: the arrows between any two ranks (both directions, one band of
  // the view) have at least minPxPerArrow of the width each. An arrow leaves
  // one micro-batch's forward or backward, so this is when those spans get
  // about that wide; zoomed out further they are a mesh.
  const auto readable = static_cast<int>(f.columns / options_.minPxPerArrow);
  const std::set<int32_t> visible(ranks.begin(), ranks.end());
  std::map<std::pair<int32_t, int32_t>, int> perPair;
  for (const FrameArrow& a : cache_.arrows()) {
    if (std::min(a.fromNs, a.toNs) >= f.t1Ns) break;
    if (std::max(a.fromNs, a.toNs) < f.t0Ns) continue;
    if (visible.count(a.fromRank) == 0 && visible.count(a.toRank) == 0) continue;
    const int n = ++perPair[std::minmax(a.fromRank, a.toRank)];
    if (n > readable || static_cast<int32_t>(f.arrows.size()) >= options_.maxArrows) {
      f.arrows.clear();
      return;
    }
    f.arrows.push_back(a);
  }
}

void TimelineModel::buildOverviewFrame(TimelineFrame& f) {
  f.fromOverview = true;
  index_.read(
      [&](const CoverageOverview& overview, const std::map<int32_t, int64_t>& indexedUntilNs) {
        buildOverviewFrame(f, overview, indexedUntilNs);
      });
}

void TimelineModel::buildOverviewFrame(TimelineFrame& f, const CoverageOverview& overview,
                                       const std::map<int32_t, int64_t>& indexedUntilNs) {
  for (int r = f.firstRow; r <= f.lastRow; ++r) {
    const TimelineRow& row = rows_[r];
    const CoverageOverview::RowKey key{row.rank, static_cast<int32_t>(row.lane)};
    // The overview bins a GPU record by its kernel category (OverviewIndex):
    // stacked as window frames stack them, each kind in legend order, then
    // the categories after every kind.
    std::vector<CoverageOverview::Series> series = overview.seriesOf(key);
    auto position = [](const CoverageOverview::Series& s) {
      return s.kernelCategory >= 0 ? trace_model::kEventKindCount + s.kernelCategory
                                   : legendPosition(s.kind);
    };
    std::stable_sort(series.begin(), series.end(),
                     [&](const CoverageOverview::Series& a, const CoverageOverview::Series& b) {
                       return position(a) < position(b);
                     });
    RowCoverage rc{r, {}};
    for (const CoverageOverview::Series& s : series) {
      rc.kinds.push_back({s.kind, s.kernelCategory,
                          overview.resample(key, s, f.t0Ns, f.t1Ns, f.columns)});
    }
    if (!rc.kinds.empty()) f.coverage.push_back(std::move(rc));
  }
  const double columnNs = f.columnNs();
  for (int32_t rank : ranksOf(f)) {
    // Columns whose centre lies past the rank's latest ingested event are
    // not indexed yet: unknown, not idle.
    int indexedColumns = f.columns;
    if (!caughtUp_) {
      auto until = indexedUntilNs.find(rank);
      const double untilNs = until == indexedUntilNs.end() ? -1e300 : double(until->second);
      const double first = std::floor((untilNs - f.t0Ns) / columnNs - 0.5) + 1;
      indexedColumns = static_cast<int>(std::clamp(first, 0.0, double(f.columns)));
      if (indexedColumns < f.columns) f.unindexed.push_back({rank, indexedColumns});
    }
    auto steps = rankSteps_.find(rank);
    if (steps == rankSteps_.end()) continue;
    std::vector<float> busy(f.columns, 0.0f);
    for (int32_t lane : lanesOfRank_[rank]) {
      for (const CoverageOverview::Series& s : overview.seriesOf({rank, lane})) {
        if (!analysis::isBusy(static_cast<trace_model::Lane>(lane), s.kind)) continue;
        const auto v = overview.resample({rank, lane}, s, f.t0Ns, f.t1Ns, f.columns);
        for (int c = 0; c < f.columns; ++c) busy[c] += v[c];
      }
    }
    RankIdleColumns idle{rank, std::vector<uint8_t>(f.columns, 0)};
    size_t s = 0;
    const auto& windows = steps->second;
    for (int c = 0; c < indexedColumns; ++c) {
      const double t = f.t0Ns + (c + 0.5) * columnNs;
      while (s < windows.size() && windows[s].endNs <= t) ++s;
      const bool inStep = s < windows.size() && windows[s].startNs <= t;
      // Idle only when no work at all falls in the column (a bin that is
      // partly busy spreads its work over every column it covers, so this
      // never hatches a column with work in it).
      idle.idle[c] = inStep && busy[c] <= 0.0f ? 1 : 0;
    }
    f.idleColumns.push_back(std::move(idle));
  }
}

}  // namespace bubblescope::gui
