// TimelineModel's rows on an imported GPU run: a rank's compute
// placeholder goes once the index has caught up and found no compute event,
// and the legend's kinds leave out what GPU streams paint by category; a
// run that marks no step has no bubble hatch in its legend.
#include <gtest/gtest.h>

#include <QSignalSpy>
#include <algorithm>

#include "gui/legend_widget.h"
#include "gui/span_palette.h"
#include "gui/timeline_model.h"
#include "gui/timeline_panel.h"
#include "tests/gui/gui_trace.h"
#include "tests/storage/temp_dir.h"
#include "trace_model/kernel_category.h"

namespace bubblescope::gui {
namespace {

using testing::guiRank;
using testing::guiSpan;
using trace_model::EventKind;
using trace_model::Lane;

// An imported GPU run: rank 0 has a CPU thread, the cuda api and a GPU stream
// (an NCCL all-reduce kernel), no compute lane; rank 1 has no events at all.
struct ImportedLikeTrace {
  bubblescope::testing::TempDir dir;
  std::string path = dir.file("imported.db");
  std::unique_ptr<storage::TraceWriter> writer;
  std::unique_ptr<storage::TraceReader> reader;

  ImportedLikeTrace() {
    trace_model::Event op =
        guiSpan(0, trace_model::hostThreadLane(0), EventKind::kOther, 1000, 1400);
    op.name = "aten::linear";
    trace_model::Event launch = guiSpan(0, Lane::kCudaApi, EventKind::kOther, 1010, 1020);
    launch.name = "cudaLaunchKernel";
    trace_model::Event nccl =
        guiSpan(0, trace_model::gpuStreamLane(7), EventKind::kAllReduce, 1100, 1300);
    nccl.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
    writer = testing::writeGuiTrace(path, {guiRank(0, -1, -1, -1), guiRank(1, -1, -1, -1)},
                                    {op, launch, nccl}, {{0, 0, 1.0, 0, 1000, 1400}});
    auto r = storage::TraceReader::open(path);
    EXPECT_TRUE(r.isOk()) << r.status().message();
    reader = std::move(*r);
  }
};

// Rows are consistent: rowOf() finds every row where it is, and each rank's
// first row is marked.
void expectConsistentRows(const TimelineModel& model) {
  for (size_t i = 0; i < model.rows().size(); ++i) {
    const TimelineRow& row = model.rows()[i];
    EXPECT_EQ(model.rowOf(row.rank, row.lane), static_cast<int>(i));
    EXPECT_EQ(row.firstOfRank, i == 0 || model.rows()[i - 1].rank != row.rank) << i;
  }
}

TEST(TimelineModel, AnImportedRunHasNoEmptyComputeRowOnceIndexed) {
  ImportedLikeTrace t;
  ASSERT_TRUE(t.writer->finishRun(storage::RunStatus::kFinished).isOk());
  TimelineModel model;
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  // Before indexing, every rank shows: its placeholder compute row.
  EXPECT_NE(model.rowOf(0, Lane::kCompute), -1);
  EXPECT_NE(model.rowOf(1, Lane::kCompute), -1);
  QSignalSpy rowsChanged(&model, &TimelineModel::rowsChanged);
  ASSERT_TRUE(model.ingest(1000).isOk());
  ASSERT_TRUE(model.caughtUp());
  EXPECT_GE(rowsChanged.count(), 1);
  EXPECT_EQ(model.rowOf(0, Lane::kCompute), -1) << "no event reached rank 0's compute row";
  EXPECT_NE(model.rowOf(0, Lane::kCudaApi), -1);
  EXPECT_NE(model.rowOf(0, trace_model::gpuStreamLane(7)), -1);
  EXPECT_NE(model.rowOf(1, Lane::kCompute), -1) << "a rank with no events keeps one row";
  ASSERT_EQ(model.rows().size(), 4u);  // rank 0: thread, cuda api, stream; rank 1: compute
  expectConsistentRows(model);
  // Frames draw every row (the placeholder's index is gone everywhere).
  const TimelineFrame& f = model.frame(1000, 1400, 400, 0, int(model.rows().size()) - 1);
  const int stream = model.rowOf(0, trace_model::gpuStreamLane(7));
  int ncclSpans = 0;
  for (const FrameSpan& s : f.spans) {
    EXPECT_LT(s.row, int(model.rows().size()));
    ncclSpans += s.row == stream && s.kind == EventKind::kAllReduce;
  }
  EXPECT_EQ(ncclSpans, 1) << "the kernel is drawn on its stream's row";
  // A second ingest (nothing new) leaves the rows alone.
  rowsChanged.clear();
  ASSERT_TRUE(model.ingest(1000).isOk());
  EXPECT_EQ(rowsChanged.count(), 0);
  EXPECT_EQ(model.rows().size(), 4u);
}

TEST(TimelineModel, ARunningRunKeepsItsComputePlaceholderUntilItEnds) {
  ImportedLikeTrace t;
  TimelineModel model;
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(1000).isOk());
  ASSERT_TRUE(model.caughtUp());
  ASSERT_EQ(model.run().health, storage::RunHealth::kRunning);
  EXPECT_NE(model.rowOf(0, Lane::kCompute), -1) << "compute events may still come";
  ASSERT_TRUE(model.refresh().isOk());
  EXPECT_NE(model.rowOf(0, Lane::kCompute), -1);
  // The run ends: the live poll refreshes, then ingests what is left.
  ASSERT_TRUE(t.writer->finishRun(storage::RunStatus::kFinished).isOk());
  ASSERT_TRUE(model.refresh().isOk());
  ASSERT_TRUE(model.ingest(1000).isOk());
  EXPECT_EQ(model.rowOf(0, Lane::kCompute), -1);
  expectConsistentRows(model);
  // A refresh does not bring a dropped placeholder back.
  ASSERT_TRUE(model.refresh().isOk());
  EXPECT_EQ(model.rowOf(0, Lane::kCompute), -1);
}

// The legend lists kinds by colour only off the GPU streams: an NCCL
// kernel's kind (all-reduce) is painted by its kernel category.
TEST(TimelineModel, KindsOffTheGpuStreamsLeaveOutWhatGpuStreamsHold) {
  ImportedLikeTrace t;
  TimelineModel model;
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(1000).isOk());
  const uint32_t allReduce = 1u << int(EventKind::kAllReduce);
  const uint32_t other = 1u << int(EventKind::kOther);
  EXPECT_EQ(model.kinds(), allReduce | other);
  EXPECT_EQ(model.kindsOffGpu(), other);
  EXPECT_NE(model.kernelCategories() & (1u << int(trace_model::KernelCategory::kAllReduce)), 0u);
}

// The timeline hatches idle time inside steps only: a run that marks no step
// (an Nsight import without step ranges) has no bubble swatch in its legend
// (issue 31 walk: "idle in step (bubble)" was listed over a timeline that
// can hold none), and a run with steps keeps it.
TEST(TimelineModel, TheBubbleSwatchIsListedOnlyForARunWithSteps) {
  auto hasBubble = [](const LegendWidget& legend) {
    const auto entries = legend.entries();
    return std::any_of(entries.begin(), entries.end(), [](const LegendWidget::Entry& e) {
      return e.label == "idle in step (bubble)";  // not "wait (bubble)", a kind
    });
  };
  bubblescope::testing::TempDir dir;
  for (const bool withSteps : {false, true}) {
    const std::string path = dir.file(withSteps ? "steps.db" : "nosteps.db");
    const int32_t step = withSteps ? 0 : -1;  // an import's events carry no step
    trace_model::Event kernel =
        guiSpan(0, trace_model::gpuStreamLane(7), EventKind::kKernel, 1100, 1300, step);
    kernel.name = "volta_sgemm_32x128_nn";
    std::vector<trace_model::StepRecord> steps;
    if (withSteps) steps.push_back({0, 0, 1.0, 0, 1000, 1400});
    auto writer = testing::writeGuiTrace(path, {guiRank(0, -1, -1, -1)}, {kernel}, steps);
    auto reader = testing::finishAndOpen(*writer, path);
    ASSERT_NE(reader, nullptr);
    TimelinePanel panel;
    ASSERT_TRUE(panel.showRun(reader.get(), 1).isOk());
    EXPECT_EQ(hasBubble(*panel.legend()), withSteps) << "before indexing, steps " << withSteps;
    ASSERT_TRUE(panel.ingestAll().isOk());
    EXPECT_EQ(panel.model()->steps().empty(), !withSteps);
    EXPECT_EQ(hasBubble(*panel.legend()), withSteps) << "indexed, steps " << withSteps;
  }
  // No run yet: every entry, the bubble too.
  EXPECT_TRUE(hasBubble(LegendWidget()));
}

// An imported trace's CPU lanes are mostly host ops and API calls (kind
// "other", grey): the legend names that grey once the run has them off the
// GPU streams (issue 31 walk: the grey most of a Kineto or Nsight import's
// CPU rows are painted in had no legend entry); a run without them, or no
// run yet, lists no such entry.
TEST(TimelineModel, TheLegendNamesTheGreyOfAnImportsHostOps) {
  auto others = [](const LegendWidget& legend) {
    int n = 0;
    for (const LegendWidget::Entry& e : legend.entries()) {
      n += e.colour.isValid() && e.colour.rgb() == colourOf(EventKind::kOther).rgb() ? 1 : 0;
    }
    return n;
  };
  ImportedLikeTrace t;
  ASSERT_TRUE(t.writer->finishRun(storage::RunStatus::kFinished).isOk());
  TimelineModel model;
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  while (!model.caughtUp()) ASSERT_TRUE(model.ingest(1000).isOk());
  LegendWidget legend;
  legend.setKinds(model.kinds());
  legend.setKindsOffGpu(model.kindsOffGpu());
  legend.setKernelCategories(model.kernelCategories());
  EXPECT_EQ(others(legend), 1);
  bool named = false;
  for (const LegendWidget::Entry& e : legend.entries())
    named |= e.label == "other (host ops, API calls)";
  EXPECT_TRUE(named);
  // A run whose only "other" records are on GPU streams: their category
  // names them there.
  LegendWidget gpuOnly;
  gpuOnly.setKinds(uint32_t{1} << int(EventKind::kOther));
  gpuOnly.setKindsOffGpu(0);
  EXPECT_EQ(others(gpuOnly), 0);
  EXPECT_EQ(others(LegendWidget()), 0) << "no run yet";
}

}  // namespace
}  // namespace bubblescope::gui
