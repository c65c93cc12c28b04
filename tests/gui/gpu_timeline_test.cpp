// The GPU timeline reads right (issue 29): kernels coloured by category with
// the legend's colours, the idle hatch only over real gaps at every zoom,
// and lane names never clipped.
#include <gtest/gtest.h>

#include <QImage>
#include <QPainter>
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "gui/legend_widget.h"
#include "gui/span_palette.h"
#include "gui/timeline_layers.h"
#include "gui/timeline_view.h"
#include "storage/analysis/run_analyzer.h"
#include "tests/gui/gui_trace.h"
#include "tests/gui/rendered_timeline.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::gui {
namespace {

using testing::guiRank;
using testing::guiSpan;
using trace_model::EventKind;
using trace_model::KernelCategory;
using trace_model::Lane;

constexpr int64_t kT0 = 5'000'000;
constexpr int64_t kPeriodNs = 5'000;  // a kernel every 5 µs
constexpr int64_t kKernelNs = 2'000;  // of 2 µs: 60% of the busy half is slivers of 3 µs
constexpr int kKernels = 1000;        // [kT0, kT0 + 5 ms) busy, then [5 ms, 10 ms) idle
constexpr int64_t kStepEnd = kT0 + 10'000'000;
constexpr int kPlotWidth = 1000;
const Lane kStream = trace_model::gpuStreamLane(7);

trace_model::Event kernel(int64_t start, int64_t end, const char* name) {
  trace_model::Event e = guiSpan(0, kStream, EventKind::kKernel, start, end);
  e.name = name;
  return e;
}

// One rank, one GPU stream: dense short kernels for 5 ms (GEMMs and
// elementwise kernels by turns), then a 5 ms gap, in one step.
struct DenseGpuTrace {
  bubblescope::testing::TempDir dir;
  std::string path = dir.file("gpu.db");
  std::unique_ptr<storage::TraceReader> reader;

  DenseGpuTrace() {
    std::vector<trace_model::Event> events;
    for (int i = 0; i < kKernels; ++i) {
      const int64_t s = kT0 + i * kPeriodNs;
      events.push_back(kernel(s, s + kKernelNs,
                              i % 2 == 0 ? "ampere_sgemm_128x64_nn"
                                         : "void at::native::vectorized_elementwise_kernel<4>"));
    }
    auto writer =
        testing::writeGuiTrace(path, {guiRank(0, 0)}, events, {{0, 0, 1.0, 0, kT0, kStepEnd}});
    reader = testing::finishAndOpen(*writer, path);
  }
};

using testing_render::Rendered;

Rendered render(TimelineModel& model, double t0, double t1) {
  return testing_render::renderModel(model, kPlotWidth, 120, t0, t1);
}

// True when a kernel of the trace overlaps [a, b).
bool kernelIn(double a, double b) {
  for (int i = 0; i < kKernels; ++i) {
    const double s = kT0 + double(i) * kPeriodNs, e = s + kKernelNs;
    if (s < b && e > a) return true;
  }
  return false;
}

// At every zoom, from one kernel per 2.5 px to 25 per px, drawn from spans,
// binned coverage or the overview: no pixel column that holds a kernel has a
// hatch pixel on the kernels' lane, and the 5 ms gap is hatched.
void expectHatchOnlyOverRealGaps(TimelineModel& model) {
  const int row = model.rowOf(0, kStream);
  ASSERT_GE(row, 0);
  const QRgb hatch = bubbleHatchColour().rgb();
  for (double widthNs : {2e6, 5e6, 10e6, 50e6}) {
    const double t0 = kT0, t1 = kT0 + widthNs;
    const Rendered r = render(model, t0, t1);
    const int y0 = r.at.yOf(r.rows.top[row]);
    int hatchedInGap = 0, hatchedOverKernels = 0;
    for (int x = r.at.plot.left(); x <= r.at.plot.right(); ++x) {
      const double a = r.at.tOf(x), b = r.at.tOf(x + 1);
      int hatched = 0;
      for (int y = y0; y < y0 + RowGeometry::kLaneHeight; ++y) hatched += r.image.pixel(x, y) == hatch;
      if (kernelIn(a, b)) {
        hatchedOverKernels += hatched;
      } else if (a >= kT0 + kKernels * kPeriodNs && b <= kStepEnd) {
        hatchedInGap += hatched;
      }
    }
    EXPECT_EQ(hatchedOverKernels, 0) << "view " << widthNs / 1e6 << " ms wide";
    if (t1 >= kStepEnd) {
      EXPECT_GT(hatchedInGap, 0) << "view " << widthNs / 1e6 << " ms wide: the real gap";
    }
  }
}

TEST(GpuTimeline, IdleHatchIsOnlyOverRealGapsAtEveryZoom) {
  DenseGpuTrace t;
  TimelineModel model;
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(10000).isOk());
  expectHatchOnlyOverRealGaps(model);
}

TEST(GpuTimeline, IdleHatchIsOnlyOverRealGapsFromTheOverview) {
  DenseGpuTrace t;
  TimelineOptions options;
  options.windowBudgetEvents = 0;  // every frame from the whole-run overview
  TimelineModel model(options);
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(10000).isOk());
  expectHatchOnlyOverRealGaps(model);
}

// The model's frames say the same at every zoom: no idle column and no
// bubble interval overlaps a kernel.
TEST(GpuTimeline, NoFrameCallsAColumnWithAKernelIdle) {
  DenseGpuTrace t;
  TimelineModel model;
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(10000).isOk());
  for (int columns : {100, 400, 1000, 4000, 20000}) {
    const int row = model.rowOf(0, kStream);
    const TimelineFrame& f = model.frame(kT0, kStepEnd, columns, row, row);
    for (const BubbleInterval& b : f.bubbles) {
      EXPECT_FALSE(kernelIn(double(b.startNs), double(b.endNs))) << columns << " columns";
    }
    for (const RankIdleColumns& idle : f.idleColumns) {
      for (int c = 0; c < columns; ++c) {
        if (!idle.idle[c]) continue;
        EXPECT_FALSE(kernelIn(f.t0Ns + c * f.columnNs(), f.t0Ns + (c + 1) * f.columnNs()))
            << columns << " columns, column " << c;
      }
    }
  }
}

// Each colour once (issue 31's walk: "all-reduce" beside "GPU all-reduce" in
// one colour): an NCCL kernel's kind gives way to its category; a CPU-side
// collective of the same colour shares the swatch, named for both.
TEST(GpuTimeline, TheLegendListsEachColourOnceWithANameForWhatItCovers) {
  const uint32_t allReduce = 1u << int(EventKind::kAllReduce);
  const uint32_t broadcast = 1u << int(EventKind::kBroadcast);
  const uint32_t forward = 1u << int(EventKind::kForward);
  const uint32_t gpu = (1u << int(KernelCategory::kAllReduce)) |
                       (1u << int(KernelCategory::kBroadcast)) | (1u << int(KernelCategory::kGemm));
  auto labels = [](const LegendWidget& legend) {
    std::vector<QString> out;
    for (const LegendWidget::Entry& e : legend.entries()) out.push_back(e.label);
    return out;
  };
  auto has = [&](const LegendWidget& legend, const char* label) {
    const auto l = labels(legend);
    return std::count(l.begin(), l.end(), QString::fromUtf8(label));
  };
  auto expectEachColourOnce = [](const LegendWidget& legend) {
    std::map<QRgb, QString> seen;
    for (const LegendWidget::Entry& e : legend.entries()) {
      if (!e.colour.isValid()) continue;
      auto [it, inserted] = seen.emplace(e.colour.rgb(), e.label);
      EXPECT_TRUE(inserted) << e.label.toStdString() << " and " << it->second.toStdString()
                            << " share a colour";
    }
  };
  // The collectives only on GPU streams (the Kineto and Nsight imports).
  LegendWidget legend;
  legend.setKinds(allReduce | broadcast | forward);
  legend.setKindsOffGpu(forward);
  legend.setKernelCategories(gpu);
  EXPECT_EQ(has(legend, "GPU all-reduce"), 1);
  EXPECT_EQ(has(legend, "GPU broadcast"), 1);
  EXPECT_EQ(has(legend, "all-reduce"), 0);
  EXPECT_EQ(has(legend, "broadcast"), 0);
  EXPECT_EQ(has(legend, "forward"), 1);
  expectEachColourOnce(legend);
  // Both sides: one swatch, named for both.
  legend.setKindsOffGpu(forward | allReduce);
  EXPECT_EQ(has(legend, "all-reduce (CPU and GPU)"), 1);
  EXPECT_EQ(has(legend, "GPU all-reduce"), 0);
  EXPECT_EQ(has(legend, "all-reduce"), 0);
  EXPECT_EQ(has(legend, "GPU broadcast"), 1);
  expectEachColourOnce(legend);
  // A CPU run (no categories) lists its kinds as before.
  LegendWidget cpu;
  cpu.setKinds(allReduce | forward);
  cpu.setKindsOffGpu(allReduce | forward);
  EXPECT_EQ(has(cpu, "all-reduce"), 1);
  EXPECT_EQ(has(cpu, "forward"), 1);

  // From a model: a GPU trace whose all-reduce is an NCCL kernel.
  bubblescope::testing::TempDir dir;
  const std::string path = dir.file("nccl.db");
  trace_model::Event nccl = guiSpan(0, kStream, EventKind::kAllReduce, kT0, kT0 + 1000);
  nccl.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
  trace_model::Event op = guiSpan(0, trace_model::hostThreadLane(0), EventKind::kOther, kT0, kT0 + 2000);
  op.name = "aten::linear";
  auto writer = testing::writeGuiTrace(path, {guiRank(0, 0)},
                                       {nccl, op, kernel(kT0 + 1000, kT0 + 2000, "ampere_sgemm")},
                                       {{0, 0, 1.0, 0, kT0, kT0 + 2000}});
  auto reader = testing::finishAndOpen(*writer, path);
  ASSERT_NE(reader, nullptr);
  TimelineModel model;
  ASSERT_TRUE(model.setRun(reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(1000).isOk());
  LegendWidget fromModel;
  fromModel.setKinds(model.kinds());
  fromModel.setKindsOffGpu(model.kindsOffGpu());
  fromModel.setKernelCategories(model.kernelCategories());
  EXPECT_EQ(has(fromModel, "GPU all-reduce"), 1);
  EXPECT_EQ(has(fromModel, "all-reduce"), 0);
  expectEachColourOnce(fromModel);
}

TEST(GpuTimeline, KernelsArePaintedInTheirCategoryColourAndTheLegendListsIt) {
  DenseGpuTrace t;
  TimelineModel model;
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(10000).isOk());
  // 20 ns per pixel: each 2 µs kernel is 100 px wide, drawn as a span.
  const Rendered r = render(model, kT0, kT0 + 20'000);
  const int y = r.at.yOf(r.rows.top[model.rowOf(0, kStream)]) + RowGeometry::kLaneHeight / 2;
  EXPECT_EQ(r.image.pixel(int(r.at.xOf(kT0 + 1000)), y),
            colourOf(KernelCategory::kGemm).rgb());
  EXPECT_EQ(r.image.pixel(int(r.at.xOf(kT0 + kPeriodNs + 1000)), y),
            colourOf(KernelCategory::kElementwise).rgb());
  // Binned (coverage) rows keep the categories.
  const int row = model.rowOf(0, kStream);
  const TimelineFrame& f = model.frame(kT0, kStepEnd, 100, row, row);
  ASSERT_EQ(f.coverage.size(), 1u);
  std::set<int> categories;
  for (const KindCoverage& k : f.coverage[0].kinds) categories.insert(k.kernelCategory);
  EXPECT_EQ(categories, (std::set<int>{int(KernelCategory::kGemm),
                                       int(KernelCategory::kElementwise)}));
  EXPECT_EQ(model.kernelCategories(), (1u << int(KernelCategory::kGemm)) |
                                          (1u << int(KernelCategory::kElementwise)));

  LegendWidget legend;
  auto pixelsOf = [&](QColor colour) {
    legend.resize(1200, legend.heightForWidth(1200));
    QImage image(legend.size(), QImage::Format_ARGB32);
    legend.render(&image);
    int n = 0;
    for (int yy = 0; yy < image.height(); ++yy)
      for (int x = 0; x < image.width(); ++x) n += image.pixelColor(x, yy).rgb() == colour.rgb();
    return n;
  };
  EXPECT_EQ(pixelsOf(colourOf(KernelCategory::kGemm)), 0) << "no GPU swatches on a CPU run";
  legend.setKernelCategories(model.kernelCategories());
  EXPECT_GT(pixelsOf(colourOf(KernelCategory::kGemm)), 50);
  EXPECT_GT(pixelsOf(colourOf(KernelCategory::kElementwise)), 50);
  EXPECT_EQ(pixelsOf(colourOf(KernelCategory::kAttention)), 0) << "only the categories shown";
  // Only the run's kinds: a GPU trace's legend has no forward or send swatch.
  EXPECT_EQ(model.kinds(), 1u << int(EventKind::kKernel));
  EXPECT_GT(pixelsOf(colourOf(EventKind::kForward)), 50) << "every kind while none is known";
  legend.setKinds(model.kinds());
  EXPECT_EQ(pixelsOf(colourOf(EventKind::kForward)), 0);
  EXPECT_EQ(pixelsOf(colourOf(EventKind::kSend)), 0);
  EXPECT_EQ(pixelsOf(colourOf(EventKind::kKernel)), 0)
      << "kernels are painted by category at every zoom: no kernel-kind swatch";
}

// Zoomed out to the overview (every frame from it), GPU records keep their
// category's colour: the overview bins them by kernel category, reading each
// distinct name once, so a GEMM is the GEMM colour and a copy the memcpy
// colour at every zoom, and the legend lists those categories before any
// window was fetched.
TEST(GpuTimeline, TheOverviewColoursKernelsByCategory) {
  bubblescope::testing::TempDir dir;
  trace_model::Event copy = guiSpan(0, kStream, EventKind::kMemcpy, kT0 + 500, kT0 + 900);
  copy.name = "Memcpy HtoD (Pageable -> Device)";
  // A name met again with another kind is classified for that kind too.
  trace_model::Event set = guiSpan(0, kStream, EventKind::kMemset, kT0 + 1950, kT0 + 2000);
  set.name = "ampere_sgemm_128x64_nn";
  auto writer = testing::writeGuiTrace(
      dir.file("o.db"), {guiRank(0, 0)},
      {kernel(kT0, kT0 + 400, "ampere_sgemm_128x64_nn"), copy,
       kernel(kT0 + 1000, kT0 + 1400, "ampere_sgemm_128x64_nn"),
       kernel(kT0 + 1500, kT0 + 1900, "flash_fwd_kernel"), set},
      {{0, 0, 1.0, 0, kT0, kT0 + 2000}});
  auto reader = testing::finishAndOpen(*writer, dir.file("o.db"));
  ASSERT_NE(reader, nullptr);
  TimelineOptions options;
  options.windowBudgetEvents = 0;
  TimelineModel model(options);
  ASSERT_TRUE(model.setRun(reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(100).isOk());
  const int row = model.rowOf(0, kStream);
  const TimelineFrame& f = model.frame(kT0, kT0 + 2000, 100, row, row);
  ASSERT_TRUE(f.fromOverview);
  ASSERT_EQ(f.coverage.size(), 1u);
  std::map<int, EventKind> kindOfCategory;
  for (const KindCoverage& k : f.coverage[0].kinds) kindOfCategory[k.kernelCategory] = k.kind;
  EXPECT_EQ(kindOfCategory, (std::map<int, EventKind>{
                                {int(KernelCategory::kGemm), EventKind::kKernel},
                                {int(KernelCategory::kAttention), EventKind::kKernel},
                                {int(KernelCategory::kMemcpy), EventKind::kMemcpy},
                                {int(KernelCategory::kMemset), EventKind::kMemset}}));
  EXPECT_EQ(model.kernelCategories(), (1u << int(KernelCategory::kGemm)) |
                                          (1u << int(KernelCategory::kAttention)) |
                                          (1u << int(KernelCategory::kMemcpy)) |
                                          (1u << int(KernelCategory::kMemset)))
      << "the legend's categories come from the overview too";

  // Painted: 2 ns a pixel, the first GEMM over x of [0, 200), the copy over
  // [250, 450), the attention kernel over [750, 950).
  const Rendered r = render(model, kT0, kT0 + 2000);
  const int y = r.at.yOf(r.rows.top[row]) + RowGeometry::kLaneHeight / 2;
  EXPECT_EQ(r.image.pixel(int(r.at.xOf(kT0 + 200)), y), colourOf(KernelCategory::kGemm).rgb());
  EXPECT_EQ(r.image.pixel(int(r.at.xOf(kT0 + 700)), y), colourOf(KernelCategory::kMemcpy).rgb());
  EXPECT_EQ(r.image.pixel(int(r.at.xOf(kT0 + 1700)), y),
            colourOf(KernelCategory::kAttention).rgb());
  int brown = 0;
  for (int x = r.at.plot.left(); x <= r.at.plot.right(); ++x) {
    brown += r.image.pixel(x, y) == colourOf(EventKind::kKernel).rgb();
  }
  EXPECT_EQ(brown, 0) << "no kernel left in the kernel kind's colour";
}

// Copies and sets alone on a GPU stream keep it busy, as the report's GPU time
// counts it (GpuTimeAnalyzer, HTA's definition): it is not hatched as idle,
// from window frames or from the overview; the real gap after it is, and
// the hatched time is the step less what the GPU time analysis counts busy.
TEST(GpuTimeline, CopiesAndSetsAloneOnAStreamAreBusyAsTheReportCountsThem) {
  constexpr int64_t kMs = 1'000'000;
  bubblescope::testing::TempDir dir;
  trace_model::Event copy = guiSpan(0, kStream, EventKind::kMemcpy, kT0 + 1 * kMs, kT0 + 3 * kMs);
  copy.name = "Memcpy HtoD (Pageable -> Device)";
  trace_model::Event set = guiSpan(0, kStream, EventKind::kMemset, kT0 + 3 * kMs, kT0 + 4 * kMs);
  set.name = "Memset (Device)";
  const std::vector<trace_model::Event> events = {
      kernel(kT0, kT0 + 1 * kMs, "ampere_sgemm_128x64_nn"), copy, set};
  // The step: [kT0, kT0 + 6 ms): idle only over [4 ms, 6 ms).
  auto writer = testing::writeGuiTrace(dir.file("m.db"), {guiRank(0, 0)}, events,
                                       {{0, 0, 1.0, 0, kT0, kT0 + 6 * kMs}});
  auto reader = testing::finishAndOpen(*writer, dir.file("m.db"));
  ASSERT_NE(reader, nullptr);
  // The report's GPU time of the rank (one step: no launch cut, every
  // record counts).
  auto report = analysis::analyzeRun(*reader, 1);
  ASSERT_TRUE(report.isOk()) << report.status().message();
  ASSERT_EQ(report->ranks.size(), 1u);
  ASSERT_TRUE(report->ranks[0].gpu.has_value());
  ASSERT_EQ(report->ranks[0].gpu->busyNs, 4 * kMs);
  const int64_t idleNs = 6 * kMs - report->ranks[0].gpu->busyNs;

  for (int64_t budget : {int64_t{200000}, int64_t{0}}) {
    SCOPED_TRACE(budget == 0 ? "overview" : "window");
    TimelineOptions options;
    options.windowBudgetEvents = budget;
    TimelineModel model(options);
    ASSERT_TRUE(model.setRun(reader.get(), 1).isOk());
    ASSERT_TRUE(model.ingest(100).isOk());
    const int row = model.rowOf(0, kStream);
    constexpr int kColumns = 600;  // 10 µs a column
    const TimelineFrame& f = model.frame(kT0, kT0 + 6 * kMs, kColumns, row, row);
    ASSERT_EQ(f.fromOverview, budget == 0);
    int64_t hatchedNs = 0;
    for (const BubbleInterval& b : f.bubbles) {
      EXPECT_GE(b.startNs, kT0 + 4 * kMs) << "a bubble over the copy or the set";
      hatchedNs += b.endNs - b.startNs;
    }
    for (const RankIdleColumns& idle : f.idleColumns) {
      for (int c = 0; c < kColumns; ++c) {
        const double a = f.t0Ns + c * f.columnNs();
        if (idle.idle[c]) {
          EXPECT_GE(a, kT0 + 4 * kMs) << "column " << c << " hatched over the copy or the set";
          hatchedNs += static_cast<int64_t>(std::llround(f.columnNs()));
        }
      }
    }
    // Window frames hatch the gap exactly. The overview spreads a bin's work
    // over the whole bin, and the bin holding the gap's start (a bin is
    // narrower than a column: 6 ms over 8,192 bins) puts some into the
    // gap's first column, which then holds work and is not hatched: at most
    // one column less.
    const int64_t columnNs = static_cast<int64_t>(std::llround(f.columnNs()));
    EXPECT_LE(hatchedNs, idleNs) << "hatched at most the step less the report's busy time";
    EXPECT_GE(hatchedNs, idleNs - (f.fromOverview ? columnNs : 0));
  }
}

// CIE76 ΔE between two sRGB colours.
double deltaE(QColor a, QColor b) {
  auto lab = [](QColor c) {
    auto lin = [](double v) { return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    const double r = lin(c.redF()), g = lin(c.greenF()), bl = lin(c.blueF());
    const double x = (0.4124 * r + 0.3576 * g + 0.1805 * bl) / 0.95047;
    const double y = 0.2126 * r + 0.7152 * g + 0.0722 * bl;
    const double z = (0.0193 * r + 0.1192 * g + 0.9505 * bl) / 1.08883;
    auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116.0; };
    return std::array<double, 3>{116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))};
  };
  const auto p = lab(a), q = lab(b);
  return std::hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
}

// Told apart from each other and from the light and dark palettes' bases
// (gui/palette.cpp: white under Fusion's light palette, #1e1e20 dark).
TEST(GpuTimeline, CategoryColoursAreDistinctInBothPalettes) {
  const QColor lightBase(Qt::white), darkBase(30, 30, 32);
  for (int a = 0; a < trace_model::kKernelCategoryCount; ++a) {
    const QColor ca = colourOf(static_cast<KernelCategory>(a));
    const std::string name(trace_model::toString(static_cast<KernelCategory>(a)));
    EXPECT_GE(deltaE(ca, lightBase), 20.0) << name;
    EXPECT_GE(deltaE(ca, darkBase), 20.0) << name;
    for (int b = a + 1; b < trace_model::kKernelCategoryCount; ++b) {
      const QColor cb = colourOf(static_cast<KernelCategory>(b));
      EXPECT_GE(deltaE(ca, cb), 20.0)
          << name << " and " << trace_model::toString(static_cast<KernelCategory>(b));
    }
  }
}

// The frame's note ("loading spans" while a big window is fetched) is read
// over the spans: drawn on a box of the window's colour, never grey on a
// span colour.
TEST(GpuTimeline, TheFrameNoteSitsOnItsOwnBoxOverTheSpans) {
  QImage image(800, 200, QImage::Format_ARGB32);
  const QColor span = colourOf(EventKind::kBackward);
  image.fill(span);
  TimelineFrame frame;
  frame.note = QStringLiteral("loading spans");
  const std::vector<TimelineRow> rows;
  const RowGeometry geometry = RowGeometry::of(rows);
  TimelinePlacement at;
  at.plot = QRect(TimelinePlacement::kLabelWidth, 20, 800 - TimelinePlacement::kLabelWidth, 180);
  const TimelineOverlay overlay;
  QPalette palette;
  {
    QPainter p(&image);
    const LayerContext c(p, frame, rows, geometry, at, overlay);
    palette = c.palette;
    paintNote(p, c);
  }
  // The note's strip: the top of the plot, its right-hand third.
  int box = 0, text = 0;
  const QColor window = palette.color(QPalette::Window);
  for (int y = at.plot.top(); y < at.plot.top() + 20; ++y) {
    for (int x = at.plot.right() - at.plot.width() / 3; x <= at.plot.right(); ++x) {
      const QColor c = image.pixelColor(x, y);
      box += c.rgb() == window.rgb();
      text += std::abs(c.lightness() - window.lightness()) > 100 && c.rgb() != span.rgb();
    }
  }
  EXPECT_GT(box, 200) << "the note has a box of the window's colour";
  EXPECT_GT(text, 20) << "and readable text on it";
}

// Lane names get the width they need: "gpu stream 7" and "cpu thread 10"
// are drawn whole (they used to be cut to ":pu thread 0"), a rank label
// shares the row; a name too long for any column is elided, not clipped.
TEST(GpuTimeline, LaneNamesFitTheLabelColumn) {
  std::vector<TimelineRow> rows(3);
  rows[0].rankLabel = QStringLiteral("rank 1 · pp- tp- dp-");
  rows[0].laneLabel = QStringLiteral("cpu thread 10");
  rows[1].laneLabel = QStringLiteral("gpu stream 7");
  rows[2].laneLabel = QStringLiteral("cuda api");
  QFont font;
  font.setPointSizeF(font.pointSizeF() * 0.8);  // LayerContext::spanFont
  const QFontMetrics fm(font);
  const LabelColumns c = labelColumns(font, rows, TimelinePlacement::kLabelWidth);
  for (const TimelineRow& row : rows) {
    EXPECT_LE(fm.horizontalAdvance(row.laneLabel), c.lane.width()) << row.laneLabel.toStdString();
  }
  EXPECT_LE(c.lane.right(), TimelinePlacement::kLabelWidth);
  EXPECT_LT(c.rank.right(), c.lane.left());
  EXPECT_GE(c.rank.width(), 60);
}

}  // namespace
}  // namespace bubblescope::gui
