#include "gui/timeline_model.h"

#include <gtest/gtest.h>

#include <QSignalSpy>
#include <map>

#include "tests/gui/gui_trace.h"
#include "tests/gui/hang_deadline.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::gui {
namespace {

using testing::guiRank;
using testing::guiSpan;
using trace_model::EventKind;
using trace_model::Lane;

// Two ranks (pp0, pp1), one step [1000, 1400) each.
// rank 0 compute: forward [1000,1150), backward [1250,1400); pipeline: send to 1 at 1150.
// rank 1 compute: forward [1200,1300); pipeline: recv from 0 [1100,1200).
struct TwoRankTrace {
  bubblescope::testing::TempDir dir;
  std::string path = dir.file("t.db");
  std::unique_ptr<storage::TraceWriter> writer;
  std::unique_ptr<storage::TraceReader> reader;

  TwoRankTrace() {
    writer =
        testing::writeGuiTrace(path, {guiRank(0, 0), guiRank(1, 1)},
                               {guiSpan(0, Lane::kCompute, EventKind::kForward, 1000, 1150, 0, 0),
                                guiSpan(0, Lane::kCompute, EventKind::kBackward, 1250, 1400, 0, 0),
                                guiSpan(0, Lane::kPipeline, EventKind::kSend, 1150, 1160, 0, 0, 1),
                                guiSpan(1, Lane::kPipeline, EventKind::kRecv, 1100, 1200, 0, 0, 0),
                                guiSpan(1, Lane::kCompute, EventKind::kForward, 1200, 1300, 0, 0)},
                               {{0, 0, 2.5, 0, 1000, 1400}, {1, 0, 2.5, 0, 1000, 1400}});
    auto r = storage::TraceReader::open(path);
    EXPECT_TRUE(r.isOk()) << r.status().message();
    reader = std::move(*r);
  }
};

const KindCoverage* coverageOf(const TimelineFrame& f, int row, EventKind kind) {
  for (const RowCoverage& rc : f.coverage) {
    if (rc.row != row) continue;
    for (const KindCoverage& k : rc.kinds) {
      if (k.kind == kind) return &k;
    }
  }
  return nullptr;
}

TEST(TimelineModel, RowsAreLanesOfRanksLabelledByCoordinates) {
  TwoRankTrace t;
  TimelineModel model;
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(1000).isOk());
  ASSERT_EQ(model.rows().size(), 4u);
  EXPECT_EQ(model.rows()[0].rankLabel, QStringLiteral("rank 0 · pp0 tp0 dp0"));
  EXPECT_EQ(model.rows()[0].laneLabel, QStringLiteral("compute"));
  EXPECT_EQ(model.rows()[1].laneLabel, QStringLiteral("pipeline"));
  EXPECT_TRUE(model.rows()[2].firstOfStage);
  EXPECT_EQ(model.rowOf(1, Lane::kPipeline), 3);
  EXPECT_EQ(model.startNs(), 1000);
  EXPECT_EQ(model.endNs(), 1400);
  ASSERT_EQ(model.steps().size(), 1u);
  EXPECT_TRUE(model.caughtUp());
}

TEST(TimelineModel, AFinishedCpuRunKeepsItsComputeRows) {
  TwoRankTrace t;
  ASSERT_TRUE(t.writer->finishRun(storage::RunStatus::kFinished).isOk());
  TimelineModel model;
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(1000).isOk());
  ASSERT_TRUE(model.caughtUp());
  EXPECT_EQ(model.rowOf(0, Lane::kCompute), 0);
  EXPECT_EQ(model.rowOf(1, Lane::kCompute), 2);
  EXPECT_EQ(model.rows().size(), 4u);
}

TEST(TimelineModel, WideColumnsGiveSpansBubblesAndArrows) {
  TwoRankTrace t;
  TimelineModel model;
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(1000).isOk());
  const TimelineFrame& f = model.frame(1000, 1400, 400, 0, 3);
  EXPECT_FALSE(f.fromOverview);
  EXPECT_EQ(f.spans.size(), 5u);
  EXPECT_TRUE(f.coverage.empty());
  // rank 0 is busy [1000,1150) and [1250,1400) (the send counts as busy).
  // rank 1: nothing before 1200 but a receive, busy [1200,1300), idle after.
  std::vector<std::tuple<int32_t, int64_t, int64_t>> bubbles;
  for (const BubbleInterval& b : f.bubbles) bubbles.emplace_back(b.rank, b.startNs, b.endNs);
  EXPECT_EQ(bubbles, (std::vector<std::tuple<int32_t, int64_t, int64_t>>{
                         {0, 1160, 1250}, {1, 1000, 1100}, {1, 1300, 1400}}));
  ASSERT_EQ(f.arrows.size(), 1u);
  EXPECT_EQ(f.arrows[0].fromRank, 0);
  EXPECT_EQ(f.arrows[0].toRank, 1);
  EXPECT_EQ(f.arrows[0].fromNs, 1150);
  EXPECT_EQ(f.arrows[0].toNs, 1200);
  const auto e = model.eventAt(0, 1300, 1);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, EventKind::kBackward);
}

// Arrows are drawn only when few enough to read: zoomed out over a whole
// pipeline run they would be a dark mesh, so they are left out (the spans
// stay). One arrow in view; 100 px of width per arrow required.
TEST(TimelineModel, ArrowsOnlyWhenFewEnoughToRead) {
  TwoRankTrace t;
  TimelineOptions options;
  options.minPxPerArrow = 100;
  TimelineModel model(options);
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(1000).isOk());
  EXPECT_EQ(model.frame(1000, 1400, 100, 0, 3).arrows.size(), 1u);  // 100 px for it
  const TimelineFrame& narrow = model.frame(1000, 1400, 99, 0, 3);
  EXPECT_FALSE(narrow.fromOverview);
  EXPECT_EQ(narrow.spans.size(), 5u) << "the spans are still drawn";
  EXPECT_TRUE(narrow.arrows.empty());
}

// The room is counted per pair of ranks (one band of the view): two dp
// replicas' pipelines, one arrow each, both fit in 100 px at 100 px each.
TEST(TimelineModel, ArrowRoomIsCountedPerPairOfRanks) {
  bubblescope::testing::TempDir dir;
  std::vector<trace_model::Event> events;
  for (int32_t first : {0, 2}) {
    events.push_back(guiSpan(first, Lane::kCompute, EventKind::kForward, 1000, 1150, 0, 0));
    events.push_back(
        guiSpan(first, Lane::kPipeline, EventKind::kSend, 1150, 1160, 0, 0, first + 1));
    events.push_back(
        guiSpan(first + 1, Lane::kPipeline, EventKind::kRecv, 1100, 1200, 0, 0, first));
    events.push_back(guiSpan(first + 1, Lane::kCompute, EventKind::kForward, 1200, 1300, 0, 0));
  }
  auto writer = testing::writeGuiTrace(
      dir.file("dp2.db"), {guiRank(0, 0, 0), guiRank(1, 1, 0), guiRank(2, 0, 1), guiRank(3, 1, 1)},
      events,
      {{0, 0, 1.0, 0, 1000, 1400},
       {1, 0, 1.0, 0, 1000, 1400},
       {2, 0, 1.0, 0, 1000, 1400},
       {3, 0, 1.0, 0, 1000, 1400}});
  auto reader = storage::TraceReader::open(dir.file("dp2.db"));
  ASSERT_TRUE(reader.isOk());
  TimelineOptions options;
  options.minPxPerArrow = 100;
  TimelineModel model(options);
  ASSERT_TRUE(model.setRun(reader->get(), 1).isOk());
  ASSERT_TRUE(model.ingest(1000).isOk());
  const int last = int(model.rows().size()) - 1;
  EXPECT_EQ(model.frame(1000, 1400, 100, 0, last).arrows.size(), 2u);
  EXPECT_TRUE(model.frame(1000, 1400, 99, 0, last).arrows.empty());
}

// The overview's memory is bounded by its bins over all series: a run of
// many ranks gets fewer bins (issue 21: 1,024 ranks at 8,192 bins each held
// 331 MB), a small one keeps them all, and never fewer than the floor.
TEST(TimelineModel, TheOverviewHasFewerBinsForManyRanks) {
  TimelineModel model;
  EXPECT_EQ(model.overviewBinsFor(64), 8192);
  EXPECT_EQ(model.overviewBinsFor(256), 8192);
  EXPECT_EQ(model.overviewBinsFor(1024), 2048);
  EXPECT_EQ(model.overviewBinsFor(100000), kMinOverviewBins);
  TimelineOptions options;
  options.overviewBins = 4;
  EXPECT_EQ(TimelineModel(options).overviewBinsFor(1024), 4);
  options.overviewBins = 8192;
  options.overviewBinBudget = 2 * kOverviewSeriesPerRank * 3000;  // 2 ranks: 3,000 bins
  TimelineModel small(options);
  EXPECT_EQ(small.overviewBinsFor(2), 3000);
  TwoRankTrace t;
  ASSERT_TRUE(small.setRun(t.reader.get(), 1).isOk());
  EXPECT_EQ(small.overviewBinCount(), 3000);
}

// A rank the overview has not reached yet is "not indexed", never idle: with
// only rank 0's first two events ingested, rank 1's steps would otherwise be
// all bubble. Once caught up the mark goes and rank 1's idle columns show.
TEST(TimelineModel, TimeNotIndexedYetIsItsOwnStateNotIdle) {
  TwoRankTrace t;
  TimelineOptions options;
  options.windowBudgetEvents = 0;  // the overview draws every frame
  options.overviewBins = 4;        // 100 ns bins over [1000, 1400)
  TimelineModel model(options);
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(1).isOk());  // rank 0's forward [1000, 1150)
  ASSERT_FALSE(model.caughtUp());
  {
    const TimelineFrame& f = model.frame(1000, 1400, 4, 0, int(model.rows().size()) - 1);
    ASSERT_TRUE(f.fromOverview);
    std::map<int32_t, int> firstUnindexed;
    for (const RankUnindexed& u : f.unindexed) firstUnindexed[u.rank] = u.firstColumn;
    // Rank 0 is known up to 1150: column 1 (centre 1150) is known, 2 is not.
    EXPECT_EQ(firstUnindexed, (std::map<int32_t, int>{{0, 2}, {1, 0}}));
    for (const RankIdleColumns& idle : f.idleColumns) {
      const int from = firstUnindexed.at(idle.rank);
      for (int c = from; c < 4; ++c)
        EXPECT_EQ(idle.idle[c], 0) << "rank " << idle.rank << " col " << c;
    }
  }
  ASSERT_TRUE(model.ingest(1000).isOk());
  ASSERT_TRUE(model.caughtUp());
  const TimelineFrame& f = model.frame(1000, 1400, 4, 0, int(model.rows().size()) - 1);
  EXPECT_TRUE(f.unindexed.empty());
  ASSERT_EQ(f.idleColumns.size(), 2u);
  EXPECT_EQ(f.idleColumns[1].idle, (std::vector<uint8_t>{1, 0, 0, 1}));
}

// Interleaved schedules: each span keeps its model chunk, and the model
// counts the chunks it has seen (the legend shows one swatch per chunk).
TEST(TimelineModel, SpansKeepTheirModelChunk) {
  bubblescope::testing::TempDir dir;
  auto span = [](int64_t s, int64_t e, int32_t chunk) {
    trace_model::Event ev = guiSpan(0, Lane::kCompute, EventKind::kForward, s, e, 0, 0);
    ev.chunk = chunk;
    return ev;
  };
  auto writer =
      testing::writeGuiTrace(dir.file("c.db"), {guiRank(0, 0)},
                             {span(0, 100, 0), span(100, 200, 1)}, {{0, 0, 1.0, 0, 0, 200}});
  auto reader = storage::TraceReader::open(dir.file("c.db"));
  ASSERT_TRUE(reader.isOk());
  TimelineModel model;
  ASSERT_TRUE(model.setRun(reader->get(), 1).isOk());
  EXPECT_EQ(model.chunkCount(), 0);
  ASSERT_TRUE(model.ingest(100).isOk());
  EXPECT_EQ(model.chunkCount(), 2);
  const TimelineFrame& f = model.frame(0, 200, 200, 0, 0);
  ASSERT_EQ(f.spans.size(), 2u);
  EXPECT_EQ(f.spans[0].chunk, 0);
  EXPECT_EQ(f.spans[1].chunk, 1);
}

// Issue 31 item 7: a view that fits the window budget but whose three
// windows do not used to fetch itself alone, so every pan refetched it. The
// fetch now reaches as far past the view as the budget allows: 5 events over
// [1000, 1400) (1 per 80 ns), budget 3, view [1100, 1200) (1.25 events):
// 70 ns each side, so a 10 ns pan and a small zoom in fetch nothing.
TEST(TimelineModel, AWindowFetchKeepsWhatTheBudgetLeavesAsMargin) {
  TwoRankTrace t;
  TimelineOptions options;
  options.windowBudgetEvents = 3;
  TimelineModel model(options);
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(1000).isOk());
  EXPECT_FALSE(model.frame(1100, 1200, 100, 0, 3).fromOverview);
  EXPECT_EQ(model.windowFetches(), 1);
  EXPECT_FALSE(model.frame(1110, 1210, 100, 0, 3).fromOverview);
  EXPECT_FALSE(model.frame(1060, 1160, 100, 0, 3).fromOverview);
  EXPECT_FALSE(model.frame(1120, 1180, 100, 0, 3).fromOverview);
  EXPECT_EQ(model.windowFetches(), 1) << "panning inside the margin fetches nothing";
  EXPECT_FALSE(model.frame(1300, 1400, 100, 0, 3).fromOverview);
  EXPECT_EQ(model.windowFetches(), 2) << "past it, it fetches";
  // A view whose three windows fit still gets a whole window each side.
  TimelineOptions roomy;
  roomy.windowBudgetEvents = 100;
  TimelineModel wide(roomy);
  ASSERT_TRUE(wide.setRun(t.reader.get(), 1).isOk());
  (void)wide.frame(1150, 1200, 100, 0, 3);
  (void)wide.frame(1105, 1155, 100, 0, 3);
  (void)wide.frame(1195, 1245, 100, 0, 3);
  EXPECT_EQ(wide.windowFetches(), 1);
}

TEST(TimelineModel, CrowdedRowsAreBinnedIntoExactCoverage) {
  TwoRankTrace t;
  TimelineOptions options;
  options.maxSpansPerColumn = 0.0;  // every row with a span is binned
  TimelineModel model(options);
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  const TimelineFrame& f = model.frame(1000, 1400, 4, 0, 3);  // 100 ns columns
  EXPECT_FALSE(f.fromOverview);
  EXPECT_TRUE(f.spans.empty());
  const KindCoverage* fwd = coverageOf(f, 0, EventKind::kForward);
  const KindCoverage* bwd = coverageOf(f, 0, EventKind::kBackward);
  ASSERT_NE(fwd, nullptr);
  ASSERT_NE(bwd, nullptr);
  EXPECT_EQ(fwd->fraction, (std::vector<float>{1.0f, 0.5f, 0.0f, 0.0f}));
  EXPECT_EQ(bwd->fraction, (std::vector<float>{0.0f, 0.0f, 0.5f, 1.0f}));
  const KindCoverage* recv = coverageOf(f, 3, EventKind::kRecv);
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(recv->fraction, (std::vector<float>{0.0f, 1.0f, 0.0f, 0.0f}));
}

TEST(TimelineModel, WideWindowsComeFromTheOverviewWithTheSameNumbers) {
  TwoRankTrace t;
  TimelineOptions options;
  options.windowBudgetEvents = 0;  // never fetch a window
  options.overviewBins = 4;        // bins of 100 ns over [1000, 1400)
  TimelineModel model(options);
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(1000).isOk());
  const TimelineFrame& f = model.frame(1000, 1400, 4, 0, 3);
  EXPECT_TRUE(f.fromOverview);
  const KindCoverage* fwd = coverageOf(f, 0, EventKind::kForward);
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(fwd->fraction, (std::vector<float>{1.0f, 0.5f, 0.0f, 0.0f}));
  const KindCoverage* fwd1 = coverageOf(f, 2, EventKind::kForward);
  ASSERT_NE(fwd1, nullptr);
  EXPECT_EQ(fwd1->fraction, (std::vector<float>{0.0f, 0.0f, 1.0f, 0.0f}));
  // Idle columns: rank 1 is idle in [1000,1100) and [1300,1400).
  ASSERT_EQ(f.idleColumns.size(), 2u);
  EXPECT_EQ(f.idleColumns[1].rank, 1);
  EXPECT_EQ(f.idleColumns[1].idle, (std::vector<uint8_t>{1, 0, 0, 1}));
}

TEST(TimelineModel, FollowsARunThatGrows) {
  TwoRankTrace t;
  TimelineModel model;
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(1000).isOk());
  EXPECT_EQ(model.run().health, storage::RunHealth::kRunning);
  (void)model.frame(1000, 1400, 400, 0, 3);  // caches the window
  ASSERT_TRUE(t.writer
                  ->appendEvents(std::vector<trace_model::Event>{
                      guiSpan(0, Lane::kCompute, EventKind::kOptimizer, 1390, 1500, 0),
                      guiSpan(0, Lane::kCommunication, EventKind::kAllReduce, 1400, 1450, 0)})
                  .isOk());
  ASSERT_TRUE(t.writer->flush().isOk());
  ASSERT_TRUE(model.refresh().isOk());
  auto n = model.ingest(1000);
  ASSERT_TRUE(n.isOk());
  EXPECT_EQ(*n, 2);
  EXPECT_EQ(model.endNs(), 1500);
  EXPECT_NE(model.rowOf(0, Lane::kCommunication), -1);  // a new lane appeared
  const TimelineFrame& f = model.frame(1000, 1500, 500, 0, int(model.rows().size()) - 1);
  bool sawOptimizer = false;
  for (const FrameSpan& s : f.spans) sawOptimizer |= s.kind == EventKind::kOptimizer;
  EXPECT_TRUE(sawOptimizer) << "the cached window must be refetched after new events";
  ASSERT_TRUE(t.writer->finishRun(storage::RunStatus::kFinished).isOk());
  ASSERT_TRUE(model.refresh().isOk());
  EXPECT_EQ(model.run().health, storage::RunHealth::kFinished);
}

// The overview built on the indexing thread, page by page (3 events a page:
// 67 pages, each taken in from the event loop), is the one ingest() builds
// on this thread: the same rows, coverage, idle columns and progress.
TEST(TimelineModel, BackgroundIndexingBuildsTheSameOverviewAsIngest) {
  bubblescope::testing::TempDir dir;
  std::vector<trace_model::Event> events;
  for (int i = 0; i < 100; ++i) {
    const int64_t t = 1000 + i * 40;
    events.push_back(guiSpan(i % 2, Lane::kCompute, EventKind::kForward, t, t + 25, 0, i % 4));
    events.push_back(
        guiSpan(i % 2, Lane::kPipeline, EventKind::kSend, t + 25, t + 31, 0, 0, 1 - i % 2));
  }
  auto writer = testing::writeGuiTrace(dir.file("many.db"), {guiRank(0, 0), guiRank(1, 1)}, events,
                                       {{0, 0, 2.5, 0, 1000, 5000}, {1, 0, 2.5, 0, 1000, 5000}});
  ASSERT_TRUE(writer->finishRun(storage::RunStatus::kFinished).isOk());
  auto reader = storage::TraceReader::open(dir.file("many.db"));
  ASSERT_TRUE(reader.isOk());
  TimelineOptions options;
  options.windowBudgetEvents = 0;  // every frame from the overview
  options.overviewBins = 64;
  options.indexPageEvents = 3;
  TimelineModel synchronous(options), background(options);
  ASSERT_TRUE(synchronous.setRun(reader->get(), 1).isOk());
  ASSERT_TRUE(synchronous.ingest(1000).isOk());
  ASSERT_TRUE(background.setRun(reader->get(), 1).isOk());
  QSignalSpy finished(&background, &TimelineModel::indexingFinished);
  QSignalSpy progressed(&background, &TimelineModel::indexProgressed);
  background.startIndexing();
  EXPECT_TRUE(background.indexing());
  ASSERT_TRUE(finished.wait(testing::kHangMs)) << "the indexing thread never finished";
  EXPECT_FALSE(background.indexing());
  EXPECT_GE(progressed.count(), 1);
  EXPECT_TRUE(background.indexError().isOk()) << background.indexError().message();
  EXPECT_TRUE(background.caughtUp());
  EXPECT_DOUBLE_EQ(background.ingestProgress(), 1.0);
  EXPECT_GT(background.indexingCpuSeconds(), 0.0);
  ASSERT_EQ(background.rows().size(), synchronous.rows().size());
  for (size_t r = 0; r < synchronous.rows().size(); ++r) {
    EXPECT_EQ(background.rows()[r].rank, synchronous.rows()[r].rank);
    EXPECT_EQ(background.rows()[r].lane, synchronous.rows()[r].lane);
  }
  const int last = static_cast<int>(synchronous.rows().size()) - 1;
  const TimelineFrame a = synchronous.frame(1000, 5000, 40, 0, last);
  const TimelineFrame& b = background.frame(1000, 5000, 40, 0, last);
  ASSERT_TRUE(a.fromOverview && b.fromOverview);
  ASSERT_EQ(a.coverage.size(), 4u);  // two rows of each rank
  ASSERT_EQ(b.coverage.size(), a.coverage.size());
  for (size_t i = 0; i < a.coverage.size(); ++i) {
    ASSERT_EQ(b.coverage[i].kinds.size(), a.coverage[i].kinds.size());
    for (size_t k = 0; k < a.coverage[i].kinds.size(); ++k) {
      EXPECT_EQ(b.coverage[i].kinds[k].kind, a.coverage[i].kinds[k].kind);
      EXPECT_EQ(b.coverage[i].kinds[k].fraction, a.coverage[i].kinds[k].fraction);
    }
  }
  // Rank 0 computes 50 forwards of 25 ns: 1,250 ns over the 100 ns columns.
  const KindCoverage* forward = coverageOf(b, 0, EventKind::kForward);
  ASSERT_NE(forward, nullptr);
  double coveredNs = 0;
  for (float share : forward->fraction) coveredNs += share * 100.0;
  EXPECT_NEAR(coveredNs, 1250.0, 0.1);
  ASSERT_EQ(b.idleColumns.size(), a.idleColumns.size());
  for (size_t i = 0; i < a.idleColumns.size(); ++i) {
    EXPECT_EQ(b.idleColumns[i].idle, a.idleColumns[i].idle);
  }
  EXPECT_TRUE(b.unindexed.empty());
  EXPECT_TRUE(b.note.isEmpty());
}

// Zoomed out, the slivers between back-to-back spans are no bubble: one rank
// computes [0,999) in 100 spans of 9 ns with 1 ns between them, then idles
// [999,1500). At 100 ns columns only the idle tail is a bubble; at 1 ns
// columns every sliver is.
TEST(TimelineModel, SliversNarrowerThanAColumnAreNotBubbles) {
  bubblescope::testing::TempDir dir;
  std::vector<trace_model::Event> events;
  for (int i = 0; i < 100; ++i) {
    events.push_back(guiSpan(0, Lane::kCompute, EventKind::kForward, i * 10, i * 10 + 9, 0, 0));
  }
  auto writer =
      testing::writeGuiTrace(dir.file("s.db"), {guiRank(0, 0)}, events, {{0, 0, 1.0, 0, 0, 1500}});
  auto reader = storage::TraceReader::open(dir.file("s.db"));
  ASSERT_TRUE(reader.isOk());
  TimelineModel model;
  ASSERT_TRUE(model.setRun(reader->get(), 1).isOk());
  const TimelineFrame& wide = model.frame(0, 1500, 15, 0, 0);
  ASSERT_EQ(wide.bubbles.size(), 1u);
  EXPECT_EQ(wide.bubbles[0].startNs, 999);
  EXPECT_EQ(wide.bubbles[0].endNs, 1500);
  for (const RankIdleColumns& idle : wide.idleColumns) {
    for (uint8_t v : idle.idle) EXPECT_EQ(v, 0) << "10% slivers do not make a column idle";
  }
  const TimelineFrame& deep = model.frame(0, 100, 100, 0, 0);
  EXPECT_EQ(deep.bubbles.size(), 10u) << "1 ns gaps at 1 ns columns are drawn exactly";
}

// A window too big to fetch in a frame (here every window:
// inlineFetchEvents 0) is fetched on the fetch thread; the frame that asks
// for it does not wait: it draws the overview, says so, and a second frame
// does not ask again. The fetch is held (paused), so a frame that waited for
// it would never return. Once let go, the window lands through the event
// loop (contentChanged) and frames draw its spans, without fetching again.
TEST(TimelineModel, AFrameNeverWaitsForABackgroundFetch) {
  TwoRankTrace t;
  TimelineOptions options;
  options.inlineFetchEvents = 0;
  TimelineModel model(options);
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(1000).isOk());
  model.pauseWindowFetches();
  {
    const TimelineFrame& f = model.frame(1000, 1400, 400, 0, 3);
    EXPECT_TRUE(f.fromOverview);
    EXPECT_TRUE(f.spans.empty());
    ASSERT_NE(coverageOf(f, 0, EventKind::kForward), nullptr) << "the overview is drawn";
    EXPECT_TRUE(f.note.contains(QStringLiteral("loading spans"))) << f.note.toStdString();
  }
  EXPECT_TRUE(model.windowPending());
  EXPECT_EQ(model.windowFetches(), 1);
  EXPECT_TRUE(model.frame(1010, 1390, 400, 0, 3).fromOverview);
  EXPECT_EQ(model.windowFetches(), 1) << "a window being fetched is not asked for twice";

  QSignalSpy changed(&model, &TimelineModel::contentChanged);
  model.resumeWindowFetches();
  ASSERT_TRUE(changed.wait(testing::kHangMs));
  EXPECT_FALSE(model.windowPending());
  const TimelineFrame& g = model.frame(1000, 1400, 400, 0, 3);
  EXPECT_FALSE(g.fromOverview);
  EXPECT_EQ(g.spans.size(), 5u);
  EXPECT_EQ(g.bubbles.size(), 3u);
  EXPECT_EQ(g.arrows.size(), 1u);
  EXPECT_TRUE(g.note.isEmpty());
  EXPECT_EQ(model.windowFetches(), 1);
  EXPECT_TRUE(model.eventAt(0, 1300, 1).has_value());
}

// A small window is still fetched in the frame (no overview first), and
// waitForWindow() takes a background one in without the event loop.
TEST(TimelineModel, SmallWindowsAreFetchedInTheFrameBigOnesWaitedFor) {
  TwoRankTrace t;
  TimelineModel inline_;  // default: up to 20,000 events in the frame
  ASSERT_TRUE(inline_.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(inline_.ingest(1000).isOk());
  EXPECT_EQ(inline_.frame(1000, 1400, 400, 0, 3).spans.size(), 5u);
  EXPECT_FALSE(inline_.windowPending());

  TimelineOptions options;
  options.inlineFetchEvents = 0;
  TimelineModel background(options);
  ASSERT_TRUE(background.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(background.ingest(1000).isOk());
  EXPECT_TRUE(background.frame(1000, 1400, 400, 0, 3).spans.empty());
  background.waitForWindow();
  EXPECT_FALSE(background.windowPending());
  const TimelineFrame& f = background.frame(1000, 1400, 400, 0, 3);
  const TimelineFrame& g = inline_.frame(1000, 1400, 400, 0, 3);
  ASSERT_EQ(f.spans.size(), g.spans.size());
  for (size_t i = 0; i < f.spans.size(); ++i) {
    EXPECT_EQ(f.spans[i].startNs, g.spans[i].startNs);
    EXPECT_EQ(f.spans[i].row, g.spans[i].row);
  }
}

}  // namespace
}  // namespace bubblescope::gui
