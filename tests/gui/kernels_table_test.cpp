// The Kernels tab's model (gui/kernels_table_model.h) on a hand-made report:
// one row per (rank, kernel) but memory records, the report's figures as
// text and raw values, sorting by value through a proxy, and the longest
// record each row selects in the timeline.
#include <gtest/gtest.h>

#include <QApplication>
#include <QImage>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <algorithm>
#include <utility>

#include "gui/kernels_table_model.h"
#include "gui/kernels_table_view.h"
#include "gui/main_window.h"
#include "gui/timeline_panel.h"
#include "gui/timeline_view.h"
#include "storage/analysis/kernel_breakdown.h"
#include "tests/gui/gui_trace.h"
#include "tests/gui/pipeline_trace.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::gui {
namespace {

using trace_model::KernelType;

analysis::RunReport twoRanks() {
  analysis::RunReport report;
  const trace_model::Lane stream = trace_model::gpuStreamLane(7);
  for (int32_t rank = 0; rank < 2; ++rank) {
    analysis::KernelBreakdownBuilder b;
    // gemm: 100 and 300 ns on rank 0, 300 and 900 on rank 1 (the longest at 5000).
    b.add("gemm", KernelType::kComputation, 1000, 1000 + 100 * (1 + 2 * rank), stream);
    b.add("gemm", KernelType::kComputation, 5000, 5000 + 300 * (1 + 2 * rank), stream);
    b.add("ncclKernel_AllReduce", KernelType::kCommunication, 2000, 2600, stream);
    b.add("Memcpy HtoD", KernelType::kMemory, 0, 100, stream);  // not a row
    analysis::RankReport r;
    r.info.rank = rank;
    r.kernels = analysis::GpuKernels{b.finish(), std::nullopt, {}, 4, 0};
    report.ranks.push_back(std::move(r));
  }
  std::vector<std::pair<int32_t, const analysis::KernelBreakdown*>> b;
  for (const auto& r : report.ranks) b.emplace_back(r.info.rank, &r.kernels->breakdown);
  report.kernelSpreads = analysis::kernelSpreads(b);
  return report;
}

TEST(kernels_table_analysis, RowsHoldTheReportsFigures) {
  KernelsTableModel model;
  model.setReport(twoRanks());
  ASSERT_EQ(model.rowCount(), 4);  // two ranks × (gemm, all-reduce)
  EXPECT_EQ(model.columnCount(), KernelsTableModel::kColumnCount);
  // Each rank's kernels by total: rank 0's all-reduce (600 ns), then its gemm (400).
  auto text = [&](int row, int column) { return model.data(model.index(row, column)).toString(); };
  auto value = [&](int row, int column) {
    return model.data(model.index(row, column), KernelsTableModel::kValueRole);
  };
  EXPECT_EQ(text(0, KernelsTableModel::kName), "ncclKernel_AllReduce");
  EXPECT_EQ(text(1, KernelsTableModel::kName), "gemm");
  EXPECT_EQ(text(1, KernelsTableModel::kType), "computation");
  EXPECT_EQ(text(1, KernelsTableModel::kCount), "2");
  EXPECT_DOUBLE_EQ(value(1, KernelsTableModel::kTotalMs).toDouble(), 400e-6);
  EXPECT_DOUBLE_EQ(value(1, KernelsTableModel::kMeanUs).toDouble(), 0.2);
  EXPECT_DOUBLE_EQ(value(1, KernelsTableModel::kP95Us).toDouble(), 0.3);  // 2nd of 2
  // Rank 0's kernel time 400 + 600 + 100 = 1100 ns: gemm 36.4%.
  EXPECT_EQ(text(1, KernelsTableModel::kShare), "36.4%");
  // gemm's totals: 400 and 1200 ns, mean 800: max/mean 1.50 on both ranks' rows.
  EXPECT_EQ(text(1, KernelsTableModel::kMaxOverMean), "1.50");
  EXPECT_EQ(text(1, KernelsTableModel::kRanks), "2");
  EXPECT_EQ(model.data(model.index(3, 0), KernelsTableModel::kRankRole).toInt(), 1);

  // Rank 1's rows: gemm (1200 ns) first, then the all-reduce; gemm's longest: 900 ns at 5000.
  const auto longest = model.longestRecordAt(2);
  ASSERT_TRUE(longest.has_value());
  EXPECT_EQ(longest->rank, 1);
  EXPECT_EQ(longest->lane, trace_model::gpuStreamLane(7));
  EXPECT_EQ(longest->startNs, 5000);
  EXPECT_EQ(longest->endNs, 5900);
  EXPECT_FALSE(model.longestRecordAt(4).has_value());

  model.clear();
  EXPECT_EQ(model.rowCount(), 0);
}

TEST(kernels_table_analysis, SortsByValueNotText) {
  KernelsTableModel model;
  model.setReport(twoRanks());
  QSortFilterProxyModel sorted;
  sorted.setSourceModel(&model);
  sorted.setSortRole(KernelsTableModel::kValueRole);
  sorted.sort(KernelsTableModel::kTotalMs, Qt::DescendingOrder);
  // Totals: rank 1 gemm 1200, the all-reduces 600 and 600, rank 0 gemm 400.
  auto total = [&](int row) {
    return sorted
        .data(sorted.index(row, KernelsTableModel::kTotalMs), KernelsTableModel::kValueRole)
        .toDouble();
  };
  EXPECT_DOUBLE_EQ(total(0), 1200e-6);
  EXPECT_DOUBLE_EQ(total(3), 400e-6);
  EXPECT_EQ(sorted.data(sorted.index(0, KernelsTableModel::kRank)).toInt(), 1);
}

// In the window: the Kernels tab lists the shown run's kernels; selecting a
// row marks its rank, highlights the kernel's instances on that rank and
// selects its longest record in the timeline; clearing the selection clears
// the highlight; a double-click shows the record there.
TEST(kernels_table_analysis, RowsSelectTheKernelInTheTimeline) {
  bubblescope::testing::TempDir dir;
  const std::string path = dir.file("gpu.db");
  using trace_model::EventKind;
  const trace_model::Lane stream = trace_model::gpuStreamLane(3);
  std::vector<trace_model::Event> events;
  for (int32_t rank = 0; rank < 2; ++rank) {
    // gemm 2 µs at 10 µs and 5 µs at 40 µs on rank 0 (twice as long on rank 1).
    for (auto [start, ns] : {std::pair<int64_t, int64_t>{10'000, 2'000}, {40'000, 5'000}}) {
      auto e = bubblescope::testing::guiSpan(rank, stream, EventKind::kKernel, start,
                                             start + ns * (1 + rank));
      e.name = "gemm";
      events.push_back(e);
    }
  }
  std::sort(events.begin(), events.end(),
            [](const auto& a, const auto& b) { return a.startNs < b.startNs; });
  auto writer = bubblescope::testing::writeGuiTrace(
      path, {bubblescope::testing::guiRank(0, 0), bubblescope::testing::guiRank(1, 0)}, events,
      {{0, 0, 0, 0, 0, 100'000}, {1, 0, 0, 0, 0, 100'000}});
  ASSERT_TRUE(writer->finishRun(storage::RunStatus::kFinished).isOk());
  writer.reset();

  MainWindow window;
  window.resize(1280, 720);
  ASSERT_TRUE(window.openFile(QString::fromStdString(path)).isOk());
  ASSERT_TRUE(window.analyzeShownRun(true).isOk());
  QTableView* view = window.kernelsView();
  ASSERT_EQ(view->model()->rowCount(), 2);
  // Sorted by total, descending: rank 1's gemm (14 µs) first.
  window.tabs()->setCurrentIndex(MainWindow::kKernelsTab);
  view->selectRow(0);
  TimelineView* timeline = window.timeline()->view();
  EXPECT_EQ(timeline->markedRanks(), (std::vector<int32_t>{1}));
  ASSERT_TRUE(timeline->selectedSpan().has_value());
  EXPECT_EQ(timeline->selectedSpan()->rank, 1);
  EXPECT_EQ(timeline->selectedSpan()->lane, stream);
  EXPECT_EQ(timeline->selectedSpan()->startNs, 40'000);
  EXPECT_EQ(timeline->selectedSpan()->endNs, 50'000);
  EXPECT_EQ(window.tabs()->currentIndex(), MainWindow::kKernelsTab);  // selecting stays here
  ASSERT_TRUE(timeline->highlightedKernel().has_value());
  EXPECT_EQ(timeline->highlightedKernel()->rank, 1);
  EXPECT_EQ(timeline->highlightedKernel()->name, "gemm");
  ASSERT_EQ(timeline->kernelInstances().size(), size_t{2});  // rank 1's two, not rank 0's
  EXPECT_EQ(timeline->kernelInstances()[0].rank, 1);
  EXPECT_EQ(timeline->kernelInstances()[0].startNs, 10'000);
  EXPECT_EQ(timeline->kernelInstances()[1].endNs, 50'000);
  view->clearSelection();
  EXPECT_FALSE(timeline->highlightedKernel().has_value());
  EXPECT_TRUE(timeline->kernelInstances().empty());

  emit view->doubleClicked(view->model()->index(1, 0));  // rank 0's gemm
  EXPECT_EQ(window.tabs()->currentIndex(), MainWindow::kTimelineTab);
  EXPECT_EQ(timeline->selectedSpan()->rank, 0);
  EXPECT_EQ(timeline->selectedSpan()->endNs, 45'000);
  // The record with ten times its length (5 µs) on each side.
  EXPECT_DOUBLE_EQ(timeline->viewStartNs(), 40'000 - 50'000);
  EXPECT_DOUBLE_EQ(timeline->viewEndNs(), 45'000 + 50'000);
}

// At 1280 x 720 (less the desktop's panel and the title bar) with the layout
// dock open, the kernel names are readable (issue 31 walk: the name column,
// last and stretched, got what nine number columns left, about 150 px, and
// "volta_sgemm_32x128_nn" read "volta_sgemm_32x128..."): the name column sits
// third, in sight, at least 40% of the table's width; the whole name is its
// tooltip.
TEST(kernels_table_analysis, KernelNamesAreReadableAt1280x720) {
  analysis::RunReport report;
  analysis::KernelBreakdownBuilder b;
  const trace_model::Lane stream = trace_model::gpuStreamLane(7);
  const std::string longName =
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3>)";
  b.add(longName, KernelType::kComputation, 0, 100, stream);
  b.add("volta_sgemm_32x128_nn", KernelType::kComputation, 200, 500, stream);
  b.add("ncclKernel_AllReduce_RING_LL_Sum_float", KernelType::kCommunication, 600, 700, stream);
  analysis::RankReport r;
  r.kernels = analysis::GpuKernels{b.finish(), std::nullopt, {}, 3, 0};
  report.ranks.push_back(std::move(r));

  MainWindow window;
  window.resize(1280, 720 - 70);
  window.show();
  window.tabs()->setCurrentIndex(MainWindow::kKernelsTab);
  window.kernels()->setReport(report);
  QApplication::processEvents();
  QTableView* view = window.kernelsView();
  ASSERT_EQ(view->model()->rowCount(), 3);
  const int room = view->viewport()->width();
  ASSERT_GT(room, 400) << "the table is not laid out";
  const int name = view->columnWidth(KernelsTableModel::kName);
  EXPECT_GE(name, 0.4 * room) << "the names get " << name << " of " << room << " px";
  EXPECT_GE(name, view->fontMetrics().horizontalAdvance("volta_sgemm_32x128_nn  "));
  const int x = view->columnViewportPosition(KernelsTableModel::kName);
  EXPECT_GE(x, 0);
  EXPECT_LE(x + name, room) << "the name column is out of sight";
  for (int row = 0; row < 3; ++row) {
    const QModelIndex cell = view->model()->index(row, KernelsTableModel::kName);
    const std::string text = view->model()->data(cell).toString().toStdString();
    EXPECT_EQ(view->model()->data(cell, Qt::ToolTipRole).toString().toStdString(), text);
  }
  // A wide window gives the names the rest: every number stays in sight.
  window.resize(1920, 1080 - 70);
  QApplication::processEvents();
  const int wide = view->viewport()->width();
  int right = 0;
  for (int c = 0; c < KernelsTableModel::kColumnCount; ++c)
    right = std::max(right, view->columnViewportPosition(c) + view->columnWidth(c));
  EXPECT_LE(right, wide) << "a column is out of sight at 1920";
  EXPECT_GE(view->columnWidth(KernelsTableModel::kName), 0.4 * wide);
}

// A run without GPU records (a CPU run, measured or simulated) leaves the
// table empty: the tab says why, in the table's middle, instead of a blank
// pane (issue 31 walk); before any report it says the kernels come with the
// analysis.
TEST(kernels_table_analysis, AnEmptyTableSaysWhy) {
  bubblescope::testing::TempDir dir;
  const std::string path = dir.file("cpu.db");
  bubblescope::testing::writePipelineRun(path);
  MainWindow window;
  window.resize(1280, 720 - 70);
  window.show();
  window.tabs()->setCurrentIndex(MainWindow::kKernelsTab);
  KernelsTableView* view = window.kernelsView();
  ASSERT_TRUE(window.openFile(QString::fromStdString(path)).isOk());
  EXPECT_TRUE(view->emptyText().contains("once it is analysed")) << view->emptyText().toStdString();
  ASSERT_TRUE(window.analyzeShownRun(true).isOk());
  ASSERT_EQ(view->model()->rowCount(), 0);
  EXPECT_TRUE(view->emptyText().startsWith("No GPU kernel records in run 1"))
      << view->emptyText().toStdString();
  // The text is painted: the viewport's top is not the bare background.
  QApplication::processEvents();
  const QImage image = view->viewport()->grab().toImage();
  const QColor base = view->palette().color(QPalette::Base);
  int inked = 0;
  for (int y = 0; y < std::min(image.height(), 80); ++y) {
    for (int x = 0; x < image.width(); ++x) {
      const QColor c = image.pixelColor(x, y);
      const int gap = std::abs(c.red() - base.red()) + std::abs(c.green() - base.green()) +
                      std::abs(c.blue() - base.blue());
      inked += gap > 90 ? 1 : 0;
    }
  }
  EXPECT_GT(inked, 50) << "no text painted";
}

}  // namespace
}  // namespace bubblescope::gui
