#include "gui/timeline_model.h"

#include <algorithm>
#include <cmath>

#include "gui/all_to_all_lane.h"

namespace bubblescope::gui {

namespace {

QString laneLabel(int32_t lane) {
  if (lane == kAllToAllLane) return QStringLiteral("all-to-all");
  switch (static_cast<trace_model::Lane>(lane)) {
    case trace_model::Lane::kCompute:
      return QStringLiteral("compute");
    case trace_model::Lane::kCommunication:
      return QStringLiteral("comm");
    case trace_model::Lane::kPipeline:
      return QStringLiteral("pipeline");
    case trace_model::Lane::kData:
      return QStringLiteral("data");
    case trace_model::Lane::kCudaApi:
      return QStringLiteral("cuda api");
    default:
      break;
  }
  const int32_t base = static_cast<int32_t>(trace_model::Lane::kGpuStreamBase);
  if (lane >= base) return QStringLiteral("gpu stream %1").arg(lane - base);
  const int32_t threads = static_cast<int32_t>(trace_model::Lane::kHostThreadBase);
  if (trace_model::isHostThreadLane(static_cast<trace_model::Lane>(lane))) {
    return QStringLiteral("cpu thread %1").arg(lane - threads);
  }
  return QStringLiteral("lane %1").arg(lane);
}

}  // namespace

TimelineModel::TimelineModel(TimelineOptions options, QObject* parent)
    : QObject(parent), options_(options) {}

TimelineModel::~TimelineModel() {
  fetcher_.stop();
  indexer_.stop();
}

void TimelineModel::clear() {
  stopIndexing();
  fetcher_.stop();
  failedWindow_.reset();
  reader_ = nullptr;
  runId_ = 0;
  run_ = {};
  ranks_.clear();
  lanesOfRank_.clear();
  rows_.clear();
  rowIndex_.clear();
  shownRows_.clear();
  rankSteps_.clear();
  steps_.clear();
  startNs_ = endNs_ = 0;
  ingested_ = 0;
  chunkCount_ = 0;
  kernelCategories_ = 0;
  kinds_ = 0;
  kindsOffGpu_ = 0;
  windowFetches_ = 0;
  caughtUp_ = false;
  index_.reset(2, 0, 1);
  cache_.invalidate();
  lastError_ = indexError_ = Status::ok();
  ++version_;
  emit rowsChanged();
  emit contentChanged();
}

Status TimelineModel::setRun(storage::TraceReader* reader, int64_t runId) {
  clear();
  auto run = reader->run(runId);
  if (!run.isOk()) return run.status();
  auto ranks = reader->ranks(runId);
  if (!ranks.isOk()) return ranks.status();
  auto range = reader->timeRange(runId);
  if (!range.isOk()) return range.status();
  reader_ = reader;
  runId_ = runId;
  run_ = *run;
  for (const storage::RankInfo& r : *ranks) ranks_[r.rank] = r;
  for (const auto& [rank, info] : ranks_)
    addRow(rank, static_cast<int32_t>(trace_model::Lane::kCompute));
  startNs_ = range->first;
  endNs_ = range->second;
  const int64_t span = std::max<int64_t>(endNs_ - startNs_, 1);
  const int32_t bins = overviewBinsFor(static_cast<int64_t>(ranks_.size()));
  index_.reset(bins, startNs_, std::max<int64_t>(1, (span + bins - 1) / bins));
  BS_RETURN_IF_ERROR(loadSteps());
  rebuildRows();
  ++version_;
  emit rowsChanged();
  emit contentChanged();
  return Status::ok();
}

int32_t TimelineModel::overviewBinsFor(int64_t ranks) const {
  const int64_t series = std::max<int64_t>(1, ranks * kOverviewSeriesPerRank);
  int64_t bins = std::max<int64_t>(kMinOverviewBins, options_.overviewBinBudget / series);
  bins = std::min<int64_t>(bins, options_.overviewBins);
  return static_cast<int32_t>(std::max<int64_t>(2, bins & ~int64_t{1}));  // even, >= 2
}

Status TimelineModel::loadSteps() {
  auto records = reader_->steps(runId_);
  if (!records.isOk()) return records.status();
  rankSteps_.clear();
  std::map<int32_t, trace_model::StepWindow> byStep;
  auto addStep = [&](int32_t rank, int32_t step, int64_t s, int64_t e) {
    rankSteps_[rank].push_back({step, s, e});
    auto [it, inserted] = byStep.try_emplace(step, trace_model::StepWindow{step, s, e});
    if (!inserted) {
      it->second.startNs = std::min(it->second.startNs, s);
      it->second.endNs = std::max(it->second.endNs, e);
    }
  };
  if (!records->empty()) {
    for (const trace_model::StepRecord& r : *records) addStep(r.rank, r.step, r.startNs, r.endNs);
  } else {
    auto spans = reader_->stepSpans(runId_);
    if (!spans.isOk()) return spans.status();
    for (const storage::StepSpan& s : *spans) {
      addStep(s.rank, s.window.step, s.window.startNs, s.window.endNs);
    }
  }
  for (auto& [rank, windows] : rankSteps_) {
    std::sort(windows.begin(), windows.end(),
              [](const trace_model::StepWindow& a, const trace_model::StepWindow& b) {
                return a.startNs < b.startNs;
              });
  }
  steps_.clear();
  for (const auto& [step, w] : byStep) steps_.push_back(w);
  std::sort(steps_.begin(), steps_.end(),
            [](const trace_model::StepWindow& a, const trace_model::StepWindow& b) {
              return a.startNs < b.startNs;
            });
  return Status::ok();
}

Status TimelineModel::refresh() {
  if (reader_ == nullptr) return Status::failedPrecondition("no run is shown");
  auto run = reader_->run(runId_);
  if (!run.isOk()) return run.status();
  run_ = *run;
  auto ranks = reader_->ranks(runId_);
  if (!ranks.isOk()) return ranks.status();
  bool newRank = false;
  for (const storage::RankInfo& r : *ranks) {
    newRank = newRank || ranks_.count(r.rank) == 0 || !(ranks_[r.rank] == r);
    ranks_[r.rank] = r;
    // A placeholder only for a rank without rows (one dropped stays dropped).
    if (lanesOfRank_[r.rank].empty()) {
      addRow(r.rank, static_cast<int32_t>(trace_model::Lane::kCompute));
      newRank = true;
    }
  }
  BS_RETURN_IF_ERROR(loadSteps());
  if (newRank) {
    rebuildRows();
    emit rowsChanged();
  }
  ++version_;
  emit contentChanged();
  return Status::ok();
}

int32_t TimelineModel::overviewBinCount() const {
  int32_t bins = 0;
  index_.read([&](const CoverageOverview& overview, const auto&) { bins = overview.bins(); });
  return bins;
}

Result<int64_t> TimelineModel::ingest(int64_t maxEvents) {
  if (reader_ == nullptr) return Status::failedPrecondition("no run is shown");
  auto n = index_.indexPage(*reader_, runId_, maxEvents);
  absorbProgress();
  if (!n.isOk()) lastError_ = n.status();
  return n;
}

void TimelineModel::startIndexing() {
  if (reader_ == nullptr || indexingInBackground_) return;
  indexingInBackground_ = true;
  indexer_.start(reader_->path(), runId_, &index_, options_.indexPageEvents, [this] {
    // On the indexing thread: one queued call at a time (it takes in every
    // page binned before it runs).
    if (pagePosted_.exchange(true)) return;
    QMetaObject::invokeMethod(
        this,
        [this] {
          pagePosted_ = false;
          onBackgroundPage();
        },
        Qt::QueuedConnection);
  });
}

void TimelineModel::stopIndexing() {
  indexer_.stop();
  if (!indexingInBackground_) return;
  indexingInBackground_ = false;
  absorbProgress();
}

void TimelineModel::onBackgroundPage() {
  if (!indexingInBackground_) return;  // stopped since: already taken in
  absorbProgress();
  if (indexer_.running()) return;
  indexer_.stop();  // joins the thread, which has done its last page
  indexingInBackground_ = false;
  emit indexingFinished();
}

void TimelineModel::absorbProgress() {
  const IndexProgress p = index_.takeProgress();
  const size_t rowsBefore = rowIndex_.size();
  for (const auto& [rank, lane] : p.newRows) {
    shownRows_.insert({rank, lane});
    addRow(rank, lane);
  }
  if (p.startNs <= p.endNs) {
    if (startNs_ == endNs_ && ingested_ == 0) startNs_ = p.startNs;
    startNs_ = std::min(startNs_, p.startNs);
    endNs_ = std::max(endNs_, p.endNs);
    // Events of a run still being written may land in the cached window.
    const bool growing = run_.health == storage::RunHealth::kRunning;
    if (growing && cache_.overlaps(p.startNs, p.endNs)) cache_.invalidate();
  }
  const bool added = p.events != ingested_;
  ingested_ = p.events;
  chunkCount_ = std::max(chunkCount_, p.chunkCount);
  caughtUp_ = p.caughtUp;
  if (!p.error.isOk()) lastError_ = indexError_ = p.error;
  const bool dropped = dropEmptyPlaceholders();  // rebuilds the rows when it drops
  if (rowIndex_.size() != rowsBefore || dropped) {
    if (!dropped) rebuildRows();
    emit rowsChanged();
  }
  if (added) {
    ++version_;
    // The kinds and kernel categories the overview holds so far (the legend
    // lists those).
    uint32_t kinds = 0, kindsOffGpu = 0, categories = 0;
    index_.read([&](const CoverageOverview& overview, const std::map<int32_t, int64_t>&) {
      for (const auto& [key, row] : rowIndex_) {
        const bool gpu = trace_model::isGpuStreamLane(static_cast<trace_model::Lane>(key.second));
        for (const CoverageOverview::Series& s : overview.seriesOf({key.first, key.second})) {
          kinds |= uint32_t{1} << static_cast<int>(s.kind);
          if (!gpu) kindsOffGpu |= uint32_t{1} << static_cast<int>(s.kind);
          if (s.kernelCategory >= 0) categories |= uint32_t{1} << s.kernelCategory;
        }
      }
    });
    kinds_ |= kinds;
    kindsOffGpu_ |= kindsOffGpu;
    if ((categories & ~kernelCategories_) != 0) {
      kernelCategories_ |= categories;
      emit kernelCategoriesChanged();
    }
    emit contentChanged();
  }
  emit indexProgressed();
}

void TimelineModel::requestWindow(int64_t t0Ns, int64_t t1Ns) {
  if (!fetcher_.started()) {
    fetcher_.start(reader_->path(), runId_, [this] {
      // On the fetch thread: one queued call at a time (it takes the latest).
      if (windowPosted_.exchange(true)) return;
      QMetaObject::invokeMethod(
          this,
          [this] {
            windowPosted_ = false;
            absorbWindow();
          },
          Qt::QueuedConnection);
    });
  }
  ++windowFetches_;
  fetcher_.request({t0Ns, t1Ns});
}

void TimelineModel::absorbWindow() {
  std::optional<WindowFetcher::Fetched> fetched = fetcher_.take();
  if (!fetched) return;
  if (!fetched->status.isOk()) {
    // Not asked for again (each frame would): the view shows the overview.
    lastError_ = fetched->status;
    failedWindow_ = fetched->window;
  } else {
    cache_ = std::move(*fetched->cache);
    if (adoptCacheRows()) emit rowsChanged();
  }
  ++version_;
  emit contentChanged();
}

void TimelineModel::waitForWindow() {
  fetcher_.waitIdle();
  absorbWindow();
}

bool TimelineModel::adoptCacheRows() {
  if ((cache_.kernelCategories() & ~kernelCategories_) != 0) {
    kernelCategories_ |= cache_.kernelCategories();
    emit kernelCategoriesChanged();
  }
  // The fetch may reveal lanes the overview has not reached yet.
  const size_t before = rowIndex_.size();
  for (const auto& [rank, lane] : cache_.rowKeys()) {
    shownRows_.insert({rank, lane});
    addRow(rank, lane);
  }
  if (rowIndex_.size() == before) return false;
  rebuildRows();
  return true;
}

double TimelineModel::ingestProgress() const {
  if (run_.eventCount <= 0) return caughtUp_ ? 1.0 : 0.0;
  return std::min(1.0, static_cast<double>(ingested_) / static_cast<double>(run_.eventCount));
}

void TimelineModel::addRow(int32_t rank, int32_t lane) {
  if (rowIndex_.count({rank, lane}) > 0) return;
  rowIndex_[{rank, lane}] = -1;  // placed by rebuildRows()
  auto& lanes = lanesOfRank_[rank];
  lanes.insert(
      std::lower_bound(lanes.begin(), lanes.end(), lane,
                       [](int32_t a, int32_t b) { return laneOrderKey(a) < laneOrderKey(b); }),
      lane);
}

bool TimelineModel::dropEmptyPlaceholders() {
  if (!caughtUp_ || run_.health == storage::RunHealth::kRunning) return false;
  const auto compute = static_cast<int32_t>(trace_model::Lane::kCompute);
  bool dropped = false;
  for (auto& [rank, lanes] : lanesOfRank_) {
    if (lanes.size() < 2 || shownRows_.count({rank, compute}) > 0) continue;
    auto it = std::find(lanes.begin(), lanes.end(), compute);
    if (it == lanes.end()) continue;
    lanes.erase(it);
    rowIndex_.erase({rank, compute});
    dropped = true;
  }
  if (dropped) rebuildRows();
  return dropped;
}

void TimelineModel::rebuildRows() {
  std::vector<int32_t> order;
  for (const auto& [rank, lanes] : lanesOfRank_) order.push_back(rank);
  auto coords = [&](int32_t rank) {
    auto it = ranks_.find(rank);
    if (it == ranks_.end()) return std::tuple<int32_t, int32_t, int32_t, int32_t>{0, 0, 0, rank};
    return std::tuple<int32_t, int32_t, int32_t, int32_t>{it->second.pp, it->second.dp,
                                                          it->second.tp, rank};
  };
  std::sort(order.begin(), order.end(),
            [&](int32_t a, int32_t b) { return coords(a) < coords(b); });
  rows_.clear();
  int32_t lastStage = -1;
  for (int32_t rank : order) {
    auto [pp, dp, tp, r] = coords(rank);
    // Coordinates below 0 are unknown (an imported rank): not shown.
    auto coordinate = [](int32_t c) { return c < 0 ? QStringLiteral("-") : QString::number(c); };
    const QString label = pp < 0 && tp < 0 && dp < 0
                              ? QStringLiteral("rank %1").arg(rank)
                              : QStringLiteral("rank %1 · pp%2 tp%3 dp%4")
                                    .arg(rank)
                                    .arg(coordinate(pp), coordinate(tp), coordinate(dp));
    bool first = true;
    for (int32_t lane : lanesOfRank_[rank]) {
      TimelineRow row;
      row.rank = rank;
      row.lane = static_cast<trace_model::Lane>(lane);
      row.pp = pp;
      row.tp = tp;
      row.dp = dp;
      row.firstOfRank = first;
      row.firstOfStage = first && (rows_.empty() || pp != lastStage);
      row.rankLabel = label;
      row.laneLabel = laneLabel(lane);
      rowIndex_[{rank, lane}] = static_cast<int>(rows_.size());
      rows_.push_back(row);
      first = false;
    }
    lastStage = pp;
  }
  ++version_;
}

int TimelineModel::rowOf(int32_t rank, trace_model::Lane lane) const {
  auto it = rowIndex_.find({rank, static_cast<int32_t>(lane)});
  return it == rowIndex_.end() ? -1 : it->second;
}

double TimelineModel::estimatedEvents(double t0Ns, double t1Ns) const {
  const double events = static_cast<double>(std::max(run_.eventCount, ingested_));
  const double span = static_cast<double>(std::max<int64_t>(endNs_ - startNs_, 1));
  const double visible =
      std::min(t1Ns, static_cast<double>(endNs_)) - std::max(t0Ns, static_cast<double>(startNs_));
  return events * std::max(visible, 0.0) / span;
}

Result<std::vector<trace_model::Event>> TimelineModel::linkedTo(const trace_model::Event& e) const {
  std::vector<trace_model::Event> out;
  if (reader_ == nullptr || e.correlationId == 0) return out;
  BS_ASSIGN_OR_RETURN(auto linked, reader_->linkedEvents(runId_, e.rank, e.correlationId));
  for (trace_model::Event& other : linked) {
    if (!(other == e)) out.push_back(std::move(other));
  }
  return out;
}

Result<std::vector<trace_model::Event>> TimelineModel::kernelInstances(
    int32_t rank, const std::string& name) const {
  std::vector<trace_model::Event> out;
  if (reader_ == nullptr || name.empty()) return out;
  BS_RETURN_IF_ERROR(reader_->visitEvents(runId_, rank, [&](const trace_model::Event& e) {
    if (trace_model::isGpuStreamLane(e.lane) && e.name == name) {
      trace_model::Event instance = e;
      instance.name.clear();  // one name for them all: the caller's
      out.push_back(std::move(instance));
    }
    return Status::ok();
  }));
  return out;
}

std::optional<trace_model::Event> TimelineModel::eventAt(int row, double tNs,
                                                         double toleranceNs) const {
  if (row < 0 || row >= static_cast<int>(rows_.size())) return std::nullopt;
  const TimelineRow& r = rows_[row];
  return cache_.eventAt({r.rank, static_cast<int32_t>(r.lane)}, tNs, toleranceNs);
}

}  // namespace bubblescope::gui
