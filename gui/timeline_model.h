// TimelineModel: what the timeline shows of one run, with no widget code.
//
// Contract:
// - Reads only through storage::TraceReader (not owned; it must outlive the
//   model or be detached with clear()). Not thread-safe: GUI thread only.
// - Rows are one per (rank, lane): every rank's compute lane, and each other
//   lane (communication, pipeline, data, cuda api, GPU streams) once an
//   event shows it.
// - frame() returns what [t0, t1) shows at `columns` pixels. When the window
//   holds few enough events (options.windowBudgetEvents) they are fetched with
//   eventsInWindow into a cache three windows wide (panning and zooming in
//   inside it fetch nothing); a row with more than maxSpansPerColumn spans per
//   column is binned into per-column coverage per kind. Wider windows are
//   drawn from the whole-run overview (CoverageOverview), which ingest()
//   fills from eventsAfter() a page at a time, at open and while a run grows.
// - Bubbles: analysis::bubbleIntervals of each rank's steps (storage/analysis/
//   bubbles.h), the same definition the report uses; the model only decides
//   which are wide enough to draw exactly and bins the rest per column.
// - Not indexed yet: until ingest() has caught up, the overview knows each
//   rank only up to the latest end time of its ingested events; overview
//   frames mark the columns past it as unindexed (never as idle).
// - Arrows: only in window frames, and only when few enough to read
//   (options.minPxPerArrow pixels of width per arrow between two ranks).
#pragma once

#include <QObject>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "common/result.h"
#include "gui/coverage_bins.h"
#include "gui/timeline_frame.h"
#include "gui/window_cache.h"
#include "storage/trace_reader.h"
#include "trace_model/step_window.h"

namespace bubblescope::gui {

struct TimelineOptions {
  int64_t windowBudgetEvents = 200000;  // the most events one window fetch may bring
  double maxSpansPerColumn = 0.34;      // above this a row is drawn as coverage
  int32_t overviewBins = 8192;          // bins of the whole-run overview (at most)
  // The overview's memory bound: bins of all its (rank, lane, kind) series
  // together (4 bytes each), counting kOverviewSeriesPerRank series a rank.
  // A run of many ranks gets fewer bins (never under kMinOverviewBins): the
  // default keeps 8,192 up to 256 ranks, 2,048 at 1,024 (64 MB).
  int64_t overviewBinBudget = int64_t{16} << 20;
  int32_t maxArrows = 3000;  // more arrows than this are not drawn
  // Send -> receive arrows are drawn only when they are few enough to read:
  // at least this many pixels of the view's width per arrow between any two
  // ranks (each leaves one micro-batch's forward or backward, so its spans
  // are about that wide). Zoomed out to a whole pipeline run they would be
  // a mesh.
  double minPxPerArrow = 8.0;
};

// Series a rank is counted with for TimelineOptions::overviewBinBudget: the
// kinds of its compute, pipeline and communication lanes (forward, backward,
// optimizer; send, receive, wait; a collective), rounded up.
constexpr int64_t kOverviewSeriesPerRank = 8;
constexpr int32_t kMinOverviewBins = 1024;

class TimelineModel : public QObject {
  Q_OBJECT

 public:
  explicit TimelineModel(TimelineOptions options = {}, QObject* parent = nullptr);

  // Shows run `runId` of `reader` (not owned). Reads the run, its ranks, steps
  // and time range; events come with ingest() and frame().
  Status setRun(storage::TraceReader* reader, int64_t runId);
  void clear();
  bool hasRun() const { return reader_ != nullptr; }

  // Adds up to maxEvents appended events to the overview; returns how many.
  Result<int64_t> ingest(int64_t maxEvents);
  // True when the last ingest() found no more events than it returned.
  bool caughtUp() const { return caughtUp_; }
  // The largest number of model chunks an ingested event shows (1 + its
  // highest chunk index; 0 before any event with a chunk): 2 or more for an
  // interleaved schedule.
  int32_t chunkCount() const { return chunkCount_; }
  // The overview's bins for a run of `ranks` ranks: options.overviewBins,
  // fewer when the run's series would pass options.overviewBinBudget.
  int32_t overviewBinsFor(int64_t ranks) const;
  int32_t overviewBinCount() const { return overview_.bins(); }
  // Share of the run's committed events the overview holds, in [0, 1].
  double ingestProgress() const;
  // Re-reads the run record (status, event count) and its steps.
  Status refresh();

  const storage::RunRecord& run() const { return run_; }
  const std::vector<TimelineRow>& rows() const { return rows_; }
  int rowOf(int32_t rank, trace_model::Lane lane) const;
  int64_t startNs() const { return startNs_; }
  int64_t endNs() const { return endNs_; }
  const std::vector<trace_model::StepWindow>& steps() const { return steps_; }
  const TimelineOptions& options() const { return options_; }

  // What [t0Ns, t1Ns) shows at `columns` columns on rows [firstRow, lastRow].
  // Fetches from the reader only when the window is not cached. The
  // reference stays valid until the next call.
  const TimelineFrame& frame(double t0Ns, double t1Ns, int columns, int firstRow, int lastRow);
  // The event under tNs on `row` (or the nearest within toleranceNs); only
  // where spans are cached (a window frame()).
  std::optional<trace_model::Event> eventAt(int row, double tNs, double toleranceNs) const;
  // The other events of `e`'s rank that share its correlation id: the GPU
  // records of a launch call, or the launch call of a GPU record (empty when
  // e.correlationId is 0). Read from the reader, wherever they are in time.
  Result<std::vector<trace_model::Event>> linkedTo(const trace_model::Event& e) const;
  // The last error a frame() or ingest() met (ok when none).
  const Status& lastError() const { return lastError_; }

 signals:
  void rowsChanged();
  void contentChanged();

 private:
  void addRow(int32_t rank, int32_t lane);
  void rebuildRows();
  Status loadSteps();
  double estimatedEvents(double t0Ns, double t1Ns) const;
  void buildWindowFrame(TimelineFrame& f);
  void buildOverviewFrame(TimelineFrame& f);
  void addArrows(TimelineFrame& f, const std::vector<int32_t>& ranks) const;
  std::vector<int32_t> ranksOf(const TimelineFrame& f) const;

  TimelineOptions options_;
  storage::TraceReader* reader_ = nullptr;
  int64_t runId_ = 0;
  storage::RunRecord run_;
  std::map<int32_t, storage::RankInfo> ranks_;
  std::map<int32_t, std::vector<int32_t>> lanesOfRank_;  // sorted lanes per rank
  std::vector<TimelineRow> rows_;
  std::map<std::pair<int32_t, int32_t>, int> rowIndex_;
  std::map<int32_t, std::vector<trace_model::StepWindow>> rankSteps_;
  std::vector<trace_model::StepWindow> steps_;
  int64_t startNs_ = 0, endNs_ = 0;
  int64_t cursor_ = 0;
  int64_t ingested_ = 0;
  std::map<int32_t, int64_t> indexedUntilNs_;  // per rank: latest end ingested
  int32_t chunkCount_ = 0;
  bool caughtUp_ = false;
  CoverageOverview overview_;
  WindowCache cache_;
  int64_t version_ = 0;  // bumps whenever what frame() returns may change
  TimelineFrame frame_;
  int64_t frameVersion_ = -1;
  Status lastError_;
};

}  // namespace bubblescope::gui
