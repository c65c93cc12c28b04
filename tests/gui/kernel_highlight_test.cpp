// The kernel picked in the Kernels table is highlighted in the timeline
// (issue 29): every instance of it on its rank, at every zoom (spans, binned
// coverage, the whole-run overview), and nothing else; cleared with nullopt.
// Compares renders with and without the highlight pixel by pixel.
#include <gtest/gtest.h>

#include <QImage>
#include <algorithm>
#include <cmath>
#include <vector>

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
constexpr int64_t kPeriodNs = 5'000;  // a kernel every 5 µs
constexpr int64_t kKernelNs = 2'000;  // of 2 µs
constexpr int kKernels = 1000;        // [kT0, kT0 + 5 ms)
constexpr int kGemmEvery = 10;        // kernel i is the gemm when i % 10 == 3
constexpr int kPlotWidth = 1000;
const Lane kStream = trace_model::gpuStreamLane(7);
const char* const kGemm = "ampere_sgemm_128x64_nn";

int64_t startOf(int i) {
  return kT0 + i * kPeriodNs;
}
bool isGemm(int i) {
  return i % kGemmEvery == 3;
}

// Two ranks on one stream each: on rank 0 the gemm is every tenth kernel
// (elementwise kernels between); on rank 1 every kernel is a gemm, which
// must stay unmarked when rank 0's gemm is picked.
struct TwoRankTrace {
  bubblescope::testing::TempDir dir;
  std::string path = dir.file("gpu.db");
  std::unique_ptr<storage::TraceReader> reader;

  TwoRankTrace() {
    std::vector<trace_model::Event> events;
    for (int i = 0; i < kKernels; ++i) {
      for (int32_t rank = 0; rank < 2; ++rank) {
        trace_model::Event e =
            guiSpan(rank, kStream, EventKind::kKernel, startOf(i), startOf(i) + kKernelNs);
        e.name = rank == 1 || isGemm(i) ? kGemm : "vectorized_elementwise_kernel";
        events.push_back(e);
      }
    }
    const int64_t end = kT0 + 10'000'000;
    auto writer = testing::writeGuiTrace(path, {guiRank(0, 0), guiRank(1, 0)}, events,
                                         {{0, 0, 1.0, 0, kT0, end}, {1, 0, 1.0, 0, kT0, end}});
    reader = testing::finishAndOpen(*writer, path);
  }
};

using testing_render::Rendered;
using testing_render::renderView;

// The plot columns (from its left) gemm instance i touches: the columns
// [floor(x0), ceil(x1)) of its start and end, at least one.
std::pair<int, int> columnsOf(const TimelinePlacement& at, int i) {
  const double x0 = at.xOf(startOf(i)) - at.plot.left();
  const double x1 = at.xOf(startOf(i) + kKernelNs) - at.plot.left();
  const double first = std::floor(x0);
  return {static_cast<int>(first), static_cast<int>(std::max(first + 1, std::ceil(x1)))};
}

// At each zoom, picking rank 0's gemm changes exactly the pixels of the
// columns its instances touch, on rank 0's stream row, and in every such
// column some pixel; then clearing it restores the plain render.
void expectEveryInstanceAndNothingElse(TimelineModel& model) {
  TimelineView view;
  view.setModel(&model);
  view.resize(TimelinePlacement::kLabelWidth + kPlotWidth, 160);
  const int row = model.rowOf(0, kStream);
  ASSERT_GE(row, 0);
  ASSERT_GE(model.rowOf(1, kStream), 0);
  // 0.2 ms: spans 10 px wide; 2 ms: binned (400 kernels in 1000 px);
  // 5 ms: binned, a kernel a column, the gemm one column in ten.
  for (double widthNs : {0.2e6, 2e6, 5e6}) {
    const double t0 = kT0 + 0.37 * kPeriodNs, t1 = t0 + widthNs;
    view.setHighlightedKernel(std::nullopt);
    const Rendered plain = renderView(view, t0, t1);
    view.setHighlightedKernel(TimelineView::HighlightedKernel{0, kGemm});
    ASSERT_EQ(view.kernelInstances().size(), size_t{kKernels / kGemmEvery});
    const Rendered marked = renderView(view, t0, t1);
    ASSERT_EQ(plain.image.size(), marked.image.size());

    const int width = marked.at.plot.width();
    std::vector<uint8_t> expected(width, 0);
    int instancesShown = 0;
    for (int i = 0; i < kKernels; ++i) {
      if (!isGemm(i)) continue;
      const auto [a, b] = columnsOf(marked.at, i);
      if (b <= 0 || a >= width) continue;
      ++instancesShown;
      for (int col = std::max(a, 0); col < std::min(b, width); ++col) expected[col] = 1;
    }
    ASSERT_GT(instancesShown, 0);
    const int y0 = marked.at.yOf(marked.rows.top[row]);
    const int y1 = y0 + RowGeometry::kLaneHeight;
    int missing = 0, stray = 0, outsideRow = 0;
    for (int y = 0; y < marked.image.height(); ++y) {
      for (int x = 0; x < marked.image.width(); ++x) {
        if (marked.image.pixel(x, y) == plain.image.pixel(x, y)) continue;
        const int col = x - marked.at.plot.left();
        if (y < y0 || y >= y1 || col < 0 || col >= width) {
          ++outsideRow;
        } else if (!expected[col]) {
          ++stray;
        }
      }
    }
    for (int col = 0; col < width; ++col) {
      if (!expected[col]) continue;
      const int x = marked.at.plot.left() + col;
      int changed = 0;
      for (int y = y0; y < y1; ++y) changed += marked.image.pixel(x, y) != plain.image.pixel(x, y);
      missing += changed == 0;
    }
    EXPECT_EQ(missing, 0) << "view " << widthNs / 1e6 << " ms: instance columns left unmarked";
    EXPECT_EQ(stray, 0) << "view " << widthNs / 1e6 << " ms: marks outside the instances";
    EXPECT_EQ(outsideRow, 0) << "view " << widthNs / 1e6 << " ms: marks off rank 0's stream";

    view.setHighlightedKernel(std::nullopt);
    EXPECT_TRUE(view.kernelInstances().empty());
    EXPECT_EQ(renderView(view, t0, t1).image, plain.image) << "cleared";
  }
}

TEST(KernelHighlight, MarksEveryInstanceAndNothingElseAtEveryZoom) {
  TwoRankTrace t;
  TimelineModel model;
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(10000).isOk());
  expectEveryInstanceAndNothingElse(model);
}

TEST(KernelHighlight, MarksEveryInstanceFromTheOverview) {
  TwoRankTrace t;
  TimelineOptions options;
  options.windowBudgetEvents = 0;  // every frame from the whole-run overview
  TimelineModel model(options);
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(10000).isOk());
  expectEveryInstanceAndNothingElse(model);
}

}  // namespace
}  // namespace bubblescope::gui
