// TimelineModel: what the timeline shows of one run, with no widget code.
//
// Contract:
// - Reads only through storage::TraceReader (not owned; it must outlive the
//   model or be detached with clear()). Not thread-safe: GUI thread only;
//   the one other thread is its BackgroundIndexer's (startIndexing()), which
//   reads the file with a reader of its own and shares only the
//   OverviewIndex (locked) with the model.
// - Rows are one per (rank, lane), each lane (compute, communication,
//   pipeline, data, cuda api, CPU threads, GPU streams) once an event shows
//   it. Until then every rank has a placeholder compute row, so that it shows
//   before its lanes are found; once the index has caught up on a run that is
//   not running, a placeholder no event reached is dropped from a rank that
//   has other rows (an imported GPU run has no compute lane). A rank with no
//   events at all keeps it.
// - frame() returns what [t0, t1) shows at `columns` pixels. When the window
//   holds few enough events (options.windowBudgetEvents) they are fetched with
//   eventsInWindow into a cache three windows wide, or as wide as the budget
//   allows (panning and zooming in inside it fetch nothing); a row with more than maxSpansPerColumn spans per
//   column is binned into per-column coverage per kind. Wider windows are
//   drawn from the whole-run overview (OverviewIndex), which startIndexing()
//   builds on a thread of its own from spansAfter() (what the panel does at
//   open), and ingest() a page at a time on the calling thread (a growing
//   run's new events, tests).
// - A window of more than options.inlineFetchEvents events is fetched on a
//   thread of its own (WindowFetcher, with its own reader): frame() asks for
//   it and returns at once, drawing the view from the overview (noted
//   "loading spans") until the fetch lands; then contentChanged() asks for a
//   repaint. A window being fetched is not asked for twice. While a fetch
//   runs, the view's last window stays cached: frames it covers (panning
//   inside it, zooming in) draw from it.
// - Bubbles: analysis::bubbleIntervals of each rank's steps (storage/analysis/
//   bubbles.h), the same definition the report uses. Only real gaps are
//   drawn: an interval a column wide or more (window frames), a column with
//   no work of the rank at all (overview frames). A column that holds any
//   work is never idle, at any zoom: gaps narrower than a column are not
//   drawn (the report and charts count them).
// - Not indexed yet: until ingest() has caught up, the overview knows each
//   rank only up to the latest end time of its ingested events; overview
//   frames mark the columns past it as unindexed (never as idle).
// - Arrows: only in window frames, and only when few enough to read
//   (options.minPxPerArrow pixels of width per arrow between two ranks).
#pragma once

#include <QObject>
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "common/result.h"
#include "gui/background_indexer.h"
#include "gui/coverage_bins.h"
#include "gui/overview_index.h"
#include "gui/timeline_frame.h"
#include "gui/window_cache.h"
#include "gui/window_fetcher.h"
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
  // Events a page of the background indexing (startIndexing): the overview
  // is locked while one page is binned (a few ms for 20,000).
  int64_t indexPageEvents = 20000;
  // A window fetch of at most this many events (estimated) is made in
  // frame() itself (a few ms); a bigger one on the fetch thread
  // (WindowFetcher), while frames draw from the overview (issue 31 item 7:
  // a frame never waits for SQLite). 0: every window in the background.
  int64_t inlineFetchEvents = 20000;
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
  ~TimelineModel() override;

  // Shows run `runId` of `reader` (not owned). Reads the run, its ranks, steps
  // and time range; events come with ingest() and frame().
  Status setRun(storage::TraceReader* reader, int64_t runId);
  void clear();
  bool hasRun() const { return reader_ != nullptr; }

  // Adds up to maxEvents appended events to the overview on this thread;
  // returns how many. Waits for a background page being binned.
  Result<int64_t> ingest(int64_t maxEvents);
  // Indexes the rest of the run's committed events on a thread of its own:
  // progress arrives (on this thread, from its event loop) with
  // indexProgressed(), the end with indexingFinished(). No-op without a run
  // or while indexing.
  void startIndexing();
  // Stops the background indexing after its current page and takes in
  // what it binned.
  void stopIndexing();
  // True from startIndexing() until indexingFinished() or stopIndexing().
  bool indexing() const { return indexingInBackground_; }
  // CPU time of the last background indexing's thread, seconds.
  double indexingCpuSeconds() const { return indexer_.cpuSeconds(); }
  // True when the last page (ingest() or background) found no more events
  // than it asked for.
  bool caughtUp() const { return caughtUp_; }
  // The largest number of model chunks an ingested event shows (1 + its
  // highest chunk index; 0 before any event with a chunk): 2 or more for an
  // interleaved schedule.
  int32_t chunkCount() const { return chunkCount_; }
  // Bit c set: the overview has indexed, or a window frame has shown, a GPU
  // record of trace_model::KernelCategory c (the legend lists those
  // categories).
  uint32_t kernelCategories() const { return kernelCategories_; }
  // Bit k set: the overview has indexed an event of EventKind k (0 before
  // any): the legend lists only those kinds.
  uint32_t kinds() const { return kinds_; }
  // Bit k set: the overview has indexed an event of EventKind k off the GPU
  // streams, painted in its kind's colour (GPU stream records are painted by
  // kernel category: an NCCL kernel's kind all-reduce is not listed as a
  // kind).
  uint32_t kindsOffGpu() const { return kindsOffGpu_; }
  // The overview's bins for a run of `ranks` ranks: options.overviewBins,
  // fewer when the run's series would pass options.overviewBinBudget.
  int32_t overviewBinsFor(int64_t ranks) const;
  int32_t overviewBinCount() const;
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
  // Every GPU stream record of `rank` named `name` (the instances of one
  // kernel, wherever they are in time), in start order, without their names.
  // Streams the rank's events from the reader (visitEvents): memory is the
  // instances only.
  Result<std::vector<trace_model::Event>> kernelInstances(int32_t rank,
                                                          const std::string& name) const;
  // Window fetches frame() has made or asked for since setRun() (tests, the
  // render bench).
  int64_t windowFetches() const { return windowFetches_; }
  // True while a window asked for in the background has not been taken in.
  bool windowPending() const { return fetcher_.inFlight().has_value(); }
  // Waits for the background window fetch asked for, if any, and takes it in
  // (screenshots, the render bench, tests: an explicit wait, never a frame).
  void waitForWindow();
  // Holds background window fetches unstarted (tests: a fetch that does not
  // land), and lets them go.
  void pauseWindowFetches() { fetcher_.pause(); }
  void resumeWindowFetches() { fetcher_.resume(); }
  // The last error a frame() or ingest() met (ok when none).
  const Status& lastError() const { return lastError_; }
  // The error that stopped indexing the run (ok when none).
  const Status& indexError() const { return indexError_; }

 signals:
  void rowsChanged();
  // kernelCategories() grew.
  void kernelCategoriesChanged();
  void contentChanged();
  // Indexed events were taken in (ingest() or a background page).
  void indexProgressed();
  // The background indexing ended: caught up, or failed (lastError()).
  void indexingFinished();

 private:
  // Takes in what the index binned since the last call (rows, range,
  // progress) and tells the view.
  void absorbProgress();
  // Asks the fetch thread for [t0Ns, t1Ns) (started on first use).
  void requestWindow(int64_t t0Ns, int64_t t1Ns);
  // Takes in a finished background window fetch (GUI thread).
  void absorbWindow();
  // Rows and kernel categories the window cache shows; true when rows
  // were added.
  bool adoptCacheRows();
  void onBackgroundPage();
  void addRow(int32_t rank, int32_t lane);
  // Drops the placeholder compute row of each rank that has other rows when
  // no event reached it (see the contract); true when a row went. Only once
  // the index has caught up on a run that is not running.
  bool dropEmptyPlaceholders();
  void rebuildRows();
  Status loadSteps();
  double estimatedEvents(double t0Ns, double t1Ns) const;
  // How far a window fetch for [t0Ns, t1Ns) reaches past each side: a whole
  // window when three fit options.windowBudgetEvents, else what the budget
  // leaves (0 when the view alone fills it).
  double fetchMarginNs(double t0Ns, double t1Ns) const;
  void buildWindowFrame(TimelineFrame& f);
  void buildOverviewFrame(TimelineFrame& f);
  // Under the index's lock (OverviewIndex::read).
  void buildOverviewFrame(TimelineFrame& f, const CoverageOverview& overview,
                          const std::map<int32_t, int64_t>& indexedUntilNs);
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
  std::set<std::pair<int32_t, int32_t>> shownRows_;  // (rank, lane) an event has reached
  std::map<int32_t, std::vector<trace_model::StepWindow>> rankSteps_;
  std::vector<trace_model::StepWindow> steps_;
  int64_t startNs_ = 0, endNs_ = 0;
  int64_t ingested_ = 0;
  int32_t chunkCount_ = 0;
  uint32_t kernelCategories_ = 0;
  int64_t windowFetches_ = 0;
  uint32_t kinds_ = 0;
  uint32_t kindsOffGpu_ = 0;
  bool caughtUp_ = false;
  OverviewIndex index_;
  BackgroundIndexer indexer_;  // after index_: stops before it goes
  bool indexingInBackground_ = false;
  std::atomic<bool> pagePosted_{false};  // an onBackgroundPage() call is queued
  WindowCache cache_;
  WindowFetcher fetcher_;  // after cache_ and index_: stops first
  std::atomic<bool> windowPosted_{false};  // an absorbWindow() call is queued
  std::optional<WindowFetcher::Window> failedWindow_;  // its fetch failed: not asked again
  int64_t version_ = 0;  // bumps whenever what frame() returns may change
  TimelineFrame frame_;
  int64_t frameVersion_ = -1;
  Status lastError_;
  Status indexError_;
};

}  // namespace bubblescope::gui
