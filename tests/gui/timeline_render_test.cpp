// Pixels of a rendered synthetic trace: a known idle gap on stage 2 is drawn
// hatched exactly over its x range, and span colours are the legend's.
#include <gtest/gtest.h>

#include <QCoreApplication>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>

#include "gui/legend_widget.h"
#include "gui/span_palette.h"
#include "gui/timeline_panel.h"
#include "gui/timeline_view.h"
#include "tests/gui/gui_trace.h"
#include "tests/gui/rendered_timeline.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::gui {
namespace {

using testing::guiRank;
using testing::guiSpan;
using trace_model::EventKind;
using trace_model::Lane;

constexpr int64_t kT0 = 5'000'000;
constexpr int kPlotWidth = 1000;  // 1 ns per pixel over [kT0, kT0 + 1000)

// Stages 0 and 1 compute all of step 0; stage 2 computes [0,300) and
// [600,1000), so [300,600) is its bubble.
struct ThreeStageTrace {
  bubblescope::testing::TempDir dir;
  std::string path = dir.file("three.db");
  std::unique_ptr<storage::TraceReader> reader;

  ThreeStageTrace() {
    auto writer = testing::writeGuiTrace(
        path, {guiRank(0, 0), guiRank(1, 1), guiRank(2, 2)},
        {guiSpan(0, Lane::kCompute, EventKind::kForward, kT0, kT0 + 1000),
         guiSpan(1, Lane::kCompute, EventKind::kBackward, kT0, kT0 + 1000),
         guiSpan(2, Lane::kCompute, EventKind::kForward, kT0, kT0 + 300),
         guiSpan(2, Lane::kCompute, EventKind::kBackward, kT0 + 600, kT0 + 1000)},
        {{0, 0, 1.0, 0, kT0, kT0 + 1000},
         {1, 0, 1.0, 0, kT0, kT0 + 1000},
         {2, 0, 1.0, 0, kT0, kT0 + 1000}});
    reader = testing::finishAndOpen(*writer, path);
  }
};

using testing_render::Rendered;

Rendered render(TimelineModel& model) {
  return testing_render::renderModel(model, kPlotWidth, 220, kT0, kT0 + kPlotWidth);
}

// x range [min, max] of pixels of `colour` in the band of rows [first, last].
std::pair<int, int> columnsWithColour(const Rendered& r, int firstRow, int lastRow, QColor colour,
                                      int* count = nullptr) {
  int lo = INT32_MAX, hi = -1, n = 0;
  const int y0 = r.at.yOf(r.rows.top[firstRow]);
  const int y1 = r.at.yOf(r.rows.top[lastRow]) + RowGeometry::kLaneHeight;
  for (int y = y0; y < y1; ++y) {
    for (int x = r.at.plot.left(); x <= r.at.plot.right(); ++x) {
      if (r.image.pixelColor(x, y).rgb() == colour.rgb()) {
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        ++n;
      }
    }
  }
  if (count != nullptr) *count = n;
  return {lo, hi};
}

void expectBubbleOnStage2Only(TimelineModel& model) {
  const Rendered r = render(model);
  const int rank2 = model.rowOf(2, Lane::kCompute);
  ASSERT_GE(rank2, 0);
  int hatched = 0;
  const auto [lo, hi] = columnsWithColour(r, rank2, rank2, bubbleHatchColour(), &hatched);
  const int gapLeft = static_cast<int>(r.at.xOf(kT0 + 300));
  const int gapRight = static_cast<int>(r.at.xOf(kT0 + 600));
  EXPECT_NEAR(lo, gapLeft, 2) << "hatching starts where the gap starts";
  EXPECT_NEAR(hi, gapRight - 1, 2) << "and ends where it ends";
  // A hatch, not a fill: some but not all pixels of the gap carry it.
  const int gapPixels = (gapRight - gapLeft) * RowGeometry::kLaneHeight;
  EXPECT_GT(hatched, gapPixels / 10);
  EXPECT_LT(hatched, gapPixels * 6 / 10);
  for (int32_t rank : {0, 1}) {
    const int row = model.rowOf(rank, Lane::kCompute);
    int n = 0;
    columnsWithColour(r, row, row, bubbleHatchColour(), &n);
    EXPECT_EQ(n, 0) << "rank " << rank << " has no idle time";
  }
}

TEST(TimelineRender, IdleGapOnStage2IsHatchedOverItsRange) {
  ThreeStageTrace t;
  TimelineModel model;
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(100).isOk());
  expectBubbleOnStage2Only(model);
}

TEST(TimelineRender, IdleGapIsHatchedWhenDrawnFromTheOverview) {
  ThreeStageTrace t;
  TimelineOptions options;
  options.windowBudgetEvents = 0;
  options.overviewBins = 1000;
  TimelineModel model(options);
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(100).isOk());
  expectBubbleOnStage2Only(model);
}

QColor legendColour(EventKind kind) {
  for (const LegendEntry& e : legendEntries()) {
    if (e.kind == kind) return e.colour;
  }
  return {};
}

TEST(TimelineRender, SpanColoursFollowTheLegend) {
  ThreeStageTrace t;
  TimelineModel model;
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  const Rendered r = render(model);
  auto centreOf = [&](int32_t rank, int64_t tNs) {
    const int row = model.rowOf(rank, Lane::kCompute);
    return r.image.pixelColor(static_cast<int>(r.at.xOf(tNs)),
                              r.at.yOf(r.rows.top[row]) + RowGeometry::kLaneHeight / 2);
  };
  EXPECT_EQ(centreOf(0, kT0 + 500).rgb(), legendColour(EventKind::kForward).rgb());
  EXPECT_EQ(centreOf(1, kT0 + 500).rgb(), legendColour(EventKind::kBackward).rgb());
  EXPECT_EQ(centreOf(2, kT0 + 150).rgb(), legendColour(EventKind::kForward).rgb());
  EXPECT_EQ(centreOf(2, kT0 + 800).rgb(), legendColour(EventKind::kBackward).rgb());
  EXPECT_NE(legendColour(EventKind::kForward).rgb(), legendColour(EventKind::kBackward).rgb());

  // The legend widget paints the same swatches.
  LegendWidget legend;
  legend.resize(900, legend.heightForWidth(900));
  QImage image(legend.size(), QImage::Format_ARGB32);
  legend.render(&image);
  int forwardPixels = 0;
  for (int y = 0; y < image.height(); ++y) {
    for (int x = 0; x < image.width(); ++x) {
      forwardPixels += image.pixelColor(x, y).rgb() == legendColour(EventKind::kForward).rgb();
    }
  }
  EXPECT_GT(forwardPixels, 50);
}

// A launch call and its kernel (same correlation id): selecting either one
// draws an arrow from the launch's start on the cuda api row to the kernel's
// start on its GPU stream row; the model finds the partner wherever it is.
TEST(TimelineRender, ASelectedKernelIsJoinedToItsLaunchByAnArrow) {
  bubblescope::testing::TempDir dir;
  const std::string path = dir.file("launch.db");
  trace_model::Event launch = guiSpan(0, Lane::kCudaApi, EventKind::kOther, kT0 + 100, kT0 + 150);
  launch.name = "cudaLaunchKernel";
  launch.correlationId = 77;
  trace_model::Event kernel =
      guiSpan(0, trace_model::gpuStreamLane(0), EventKind::kKernel, kT0 + 600, kT0 + 900);
  kernel.correlationId = 77;
  trace_model::Event other =
      guiSpan(0, trace_model::gpuStreamLane(0), EventKind::kKernel, kT0 + 920,
              kT0 + 980);  // not linked
  auto writer = testing::writeGuiTrace(
      path, {guiRank(0, 0)},
      {guiSpan(0, Lane::kCompute, EventKind::kForward, kT0, kT0 + 1000), launch, kernel, other},
      {{0, 0, 1.0, 0, kT0, kT0 + 1000}});
  ASSERT_TRUE(writer->finishRun(storage::RunStatus::kFinished).isOk());
  auto reader = storage::TraceReader::open(path);
  ASSERT_TRUE(reader.isOk());
  TimelineModel model;
  ASSERT_TRUE(model.setRun(reader->get(), 1).isOk());
  ASSERT_TRUE(model.ingest(100).isOk());

  auto linked = model.linkedTo(kernel);
  ASSERT_TRUE(linked.isOk()) << linked.status().message();
  ASSERT_EQ(linked->size(), 1u);
  EXPECT_EQ((*linked)[0], launch);
  linked = model.linkedTo(other);
  ASSERT_TRUE(linked.isOk());
  EXPECT_TRUE(linked->empty());

  const int apiRow = model.rowOf(0, Lane::kCudaApi);
  const int gpuRow = model.rowOf(0, trace_model::gpuStreamLane(0));
  ASSERT_GE(apiRow, 0);
  ASSERT_EQ(gpuRow, apiRow + 1) << "cuda api sits just above the GPU streams";
  EXPECT_EQ(model.rows()[apiRow].laneLabel, QStringLiteral("cuda api"));

  auto renderWith = [&](std::optional<trace_model::Event> selected) {
    TimelineView view;
    view.setModel(&model);
    view.resize(TimelinePlacement::kLabelWidth + kPlotWidth, 220);
    view.setViewRange(kT0, kT0 + kPlotWidth);
    view.setSelectedSpan(selected);
    Rendered out;
    out.image = QImage(view.size(), QImage::Format_ARGB32);
    view.render(&out.image);
    out.at = view.placement();
    out.rows = view.rowGeometry();
    return out;
  };
  const Rendered plain = renderWith(std::nullopt);
  // Pixels that differ from the plain render strictly between the launch and
  // the kernel in x (the outlines of the two spans stay outside), between the
  // two rows' centres in y: only the arrow can put them there.
  auto arrowPixels = [&](const Rendered& r) {
    const int x0 = static_cast<int>(r.at.xOf(kT0 + 200));
    const int x1 = static_cast<int>(r.at.xOf(kT0 + 550));
    const int y0 = r.at.yOf(r.rows.top[apiRow]) + RowGeometry::kLaneHeight / 2;
    const int y1 = r.at.yOf(r.rows.top[gpuRow]) + RowGeometry::kLaneHeight / 2;
    int n = 0;
    for (int y = y0; y <= y1; ++y) {
      for (int x = x0; x <= x1; ++x) n += r.image.pixel(x, y) != plain.image.pixel(x, y);
    }
    return n;
  };
  EXPECT_GT(arrowPixels(renderWith(kernel)), 100) << "selecting the kernel draws the arrow";
  EXPECT_GT(arrowPixels(renderWith(launch)), 100) << "so does selecting the launch";
  EXPECT_EQ(arrowPixels(renderWith(other)), 0) << "an unlinked kernel has none";
}

// While the overview is still being built, a rank it has not reached is drawn
// in the neutral "not indexed yet" grey over the whole view, never hatched
// as bubble (a 10M-event file used to look 80% bubble while indexing).
TEST(TimelineRender, TimeNotIndexedYetIsNeutralNotBubble) {
  ThreeStageTrace t;
  TimelineOptions options;
  options.windowBudgetEvents = 0;
  options.overviewBins = 1000;
  TimelineModel model(options);
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(2).isOk());  // ranks 0 and 1; rank 2 not yet
  ASSERT_FALSE(model.caughtUp());
  const Rendered r = render(model);
  const int rank2 = model.rowOf(2, Lane::kCompute);
  int hatched = 0, neutral = 0;
  columnsWithColour(r, rank2, rank2, bubbleHatchColour(), &hatched);
  const auto [lo, hi] =
      columnsWithColour(r, rank2, rank2, unindexedColour(QGuiApplication::palette()), &neutral);
  EXPECT_EQ(hatched, 0) << "unknown time is no bubble";
  EXPECT_GT(neutral, kPlotWidth * RowGeometry::kLaneHeight / 2);
  EXPECT_EQ(lo, r.at.plot.left());
  EXPECT_EQ(hi, r.at.plot.right());
  int rank0Neutral = 0;
  const int rank0 = model.rowOf(0, Lane::kCompute);
  columnsWithColour(r, rank0, rank0, unindexedColour(QGuiApplication::palette()), &rank0Neutral);
  EXPECT_EQ(rank0Neutral, 0) << "an indexed rank is drawn as it is";

  ASSERT_TRUE(model.ingest(100).isOk());
  expectBubbleOnStage2Only(model);  // caught up: the real bubble, exactly
}

// The panel can stop indexing part-way (the docs' picture of a file still
// being indexed): it ingests exactly that many events and no more, even
// while the event loop runs.
TEST(TimelineRender, ThePanelCanStopIndexingPartWay) {
  ThreeStageTrace t;
  TimelinePanel panel;
  ASSERT_TRUE(panel.showRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(panel.ingestOnly(2).isOk());
  QCoreApplication::processEvents();
  EXPECT_FALSE(panel.model()->caughtUp());
  EXPECT_DOUBLE_EQ(panel.model()->ingestProgress(), 0.5);  // 2 of 4 events
  ASSERT_TRUE(panel.ingestAll().isOk());
  EXPECT_TRUE(panel.model()->caughtUp());
  EXPECT_DOUBLE_EQ(panel.model()->ingestProgress(), 1.0);
}

// Interleaved schedules: chunk 0 has the kind's colour, chunk 1 a shade of
// it that differs from every legend colour; the legend shows both.
TEST(TimelineRender, ModelChunksAreToldApartByShade) {
  bubblescope::testing::TempDir dir;
  auto span = [](int64_t s, int64_t e, int32_t chunk) {
    trace_model::Event ev = guiSpan(0, Lane::kCompute, EventKind::kForward, s, e, 0, 0);
    ev.chunk = chunk;
    return ev;
  };
  auto writer = testing::writeGuiTrace(dir.file("c.db"), {guiRank(0, 0)},
                                       {span(kT0, kT0 + 400, 0), span(kT0 + 500, kT0 + 900, 1)},
                                       {{0, 0, 1.0, 0, kT0, kT0 + 1000}});
  auto reader = storage::TraceReader::open(dir.file("c.db"));
  ASSERT_TRUE(reader.isOk());
  TimelineModel model;
  ASSERT_TRUE(model.setRun(reader->get(), 1).isOk());
  ASSERT_TRUE(model.ingest(100).isOk());
  const Rendered r = render(model);
  const int y = r.at.yOf(r.rows.top[model.rowOf(0, Lane::kCompute)]) + RowGeometry::kLaneHeight / 2;
  const QColor forward = colourOf(EventKind::kForward);
  const QColor shade = chunkShade(forward, 1);
  EXPECT_EQ(r.image.pixelColor(int(r.at.xOf(kT0 + 200)), y).rgb(), forward.rgb());
  EXPECT_EQ(r.image.pixelColor(int(r.at.xOf(kT0 + 700)), y).rgb(), shade.rgb());
  for (const LegendEntry& e : legendEntries())
    EXPECT_NE(e.colour.rgb(), shade.rgb()) << e.label.toStdString();

  LegendWidget legend;
  auto shadePixels = [&] {
    legend.resize(1200, legend.heightForWidth(1200));
    QImage image(legend.size(), QImage::Format_ARGB32);
    legend.render(&image);
    int n = 0;
    for (int yy = 0; yy < image.height(); ++yy)
      for (int x = 0; x < image.width(); ++x) n += image.pixelColor(x, yy).rgb() == shade.rgb();
    return n;
  };
  EXPECT_EQ(shadePixels(), 0) << "no chunk swatches for a run without chunks";
  legend.setChunkCount(model.chunkCount());
  EXPECT_GT(shadePixels(), 20) << "the chunk 1 swatch";
}

// The paint cache a view keeps between frames (labels painted once, the
// coverage image reused) changes no pixel: each frame below is painted
// without it, with a cache it fills, and again with the cache it reuses
// (the labels are not painted again: the same image), spans and coverage
// alike; marking a rank repaints the labels.
TEST(TimelineRender, ThePaintCacheChangesNoPixel) {
  ThreeStageTrace t;
  for (int64_t budget : {int64_t{200000}, int64_t{0}}) {  // spans; coverage from the overview
    TimelineOptions options;
    options.windowBudgetEvents = budget;
    options.overviewBins = 1000;
    TimelineModel model(options);
    ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
    ASSERT_TRUE(model.ingest(100).isOk());
    const RowGeometry geometry = RowGeometry::of(model.rows());
    TimelinePlacement at;
    at.plot = QRect(TimelinePlacement::kLabelWidth, TimelinePlacement::kRulerHeight, 500, 200);
    at.t0Ns = static_cast<double>(model.startNs());
    at.t1Ns = static_cast<double>(model.endNs());
    at.originNs = model.startNs();
    const TimelineFrame& f = model.frame(at.t0Ns, at.t1Ns, at.plot.width(), 0,
                                         static_cast<int>(model.rows().size()) - 1);
    ASSERT_EQ(f.fromOverview, budget == 0);
    auto paint = [&](TimelinePaintCache* cache, std::vector<int32_t> marked) {
      QImage image(at.plot.right() + 1, at.plot.bottom() + 1, QImage::Format_ARGB32);
      image.fill(Qt::white);
      QPainter p(&image);
      TimelineOverlay overlay;
      overlay.markedRanks = std::move(marked);
      overlay.cache = cache;
      paintTimeline(p, f, model.rows(), geometry, at, overlay);
      return image;
    };
    TimelinePaintCache cache;
    const QImage direct = paint(nullptr, {});
    EXPECT_EQ(paint(&cache, {}), direct) << "budget " << budget;
    ASSERT_FALSE(cache.labels.isNull());
    const qint64 labels = cache.labels.cacheKey();
    EXPECT_EQ(paint(&cache, {}), direct) << "budget " << budget;
    EXPECT_EQ(cache.labels.cacheKey(), labels) << "the labels were reused";
    EXPECT_EQ(paint(&cache, {1}), paint(nullptr, {1})) << "budget " << budget;
    EXPECT_NE(cache.labels.cacheKey(), labels) << "a marked rank repaints them";
    EXPECT_NE(paint(nullptr, {1}), direct) << "the mark shows";
  }
}

}  // namespace
}  // namespace bubblescope::gui
