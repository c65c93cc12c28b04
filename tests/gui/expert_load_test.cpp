// The expert-load heat map (model, cells, colours) and the all-to-all lane,
// on hand-built traces whose answers are known.
#include <gtest/gtest.h>

#include <QImage>

#include "engine/layout/moe_samples.h"
#include "gui/all_to_all_lane.h"
#include "gui/expert_load_model.h"
#include "gui/expert_load_view.h"
#include "gui/timeline_model.h"
#include "gui/timeline_panel.h"
#include "tests/gui/gui_trace.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::gui {
namespace {

using layout::MoeSeries;
using testing::guiRank;
using testing::guiSpan;
using trace_model::EventKind;
using trace_model::Lane;

// Block 1, two experts, two steps: (6, 2) with expert 0 dropping 1, at
// 1400 (the end of step 0); then (4, 4) at 2400.
std::vector<trace_model::Sample> moeSamples() {
  std::vector<trace_model::Sample> out;
  auto add = [&out](int64_t t, MoeSeries series, int32_t expert, double v) {
    out.push_back({0, layout::moeSampleName({1, series, expert}), t, v});
  };
  add(1400, MoeSeries::kRouted, 0, 6), add(1400, MoeSeries::kRouted, 1, 2);
  add(1400, MoeSeries::kDropped, 0, 1), add(1400, MoeSeries::kDropped, 1, 0);
  add(2400, MoeSeries::kRouted, 0, 4), add(2400, MoeSeries::kRouted, 1, 4);
  add(2400, MoeSeries::kDropped, 0, 0), add(2400, MoeSeries::kDropped, 1, 0);
  return out;
}

ExpertLoadModel modelOfSamples() {
  ExpertLoadModel model;
  model.setLoads(analysis::moeLoadFromSamples(moeSamples()));
  return model;
}

TEST(ExpertLoad, CellsAreLoadRelativeToTheStepsMean) {
  const ExpertLoadModel model = modelOfSamples();
  ASSERT_EQ(model.blocks().size(), 1u);
  EXPECT_EQ(model.experts(0), 2);
  EXPECT_EQ(model.steps(0), 2);
  EXPECT_DOUBLE_EQ(model.cell(0, 0, 0)->relativeLoad, 1.5);  // 6 of mean 4
  EXPECT_DOUBLE_EQ(model.cell(0, 1, 0)->relativeLoad, 0.5);
  EXPECT_EQ(model.cell(0, 0, 0)->dropped, 1);
  EXPECT_DOUBLE_EQ(model.cell(0, 1, 1)->relativeLoad, 1.0);
  EXPECT_FALSE(model.cell(0, 2, 0).has_value());
  EXPECT_FALSE(model.cell(0, 0, 2).has_value());
  EXPECT_DOUBLE_EQ(model.scaleMax(), 2.0);  // at least 2 (the worst step is 1.5)
  EXPECT_EQ(model.stepTimeNs(0, 1), 2400);
  EXPECT_EQ(model.cellText(0, 0, 0),
            QStringLiteral("h.1 · expert 0 · step 0: 6 routed (1.50× the mean), 1 dropped"));
}

TEST(ExpertLoad, ViewPaintsHotColdAndDroppedCells) {
  const ExpertLoadModel model = modelOfSamples();
  ExpertLoadView view;
  view.setModel(&model);
  view.resize(300, view.sizeHint().height());
  // Every cell is found where it is drawn.
  for (int32_t e = 0; e < 2; ++e) {
    for (int32_t s = 0; s < 2; ++s) {
      const auto hit = view.cellAt(view.cellRect(0, e, s).center());
      ASSERT_TRUE(hit.has_value());
      EXPECT_EQ(hit->expert, e);
      EXPECT_EQ(hit->step, s);
    }
  }
  EXPECT_FALSE(view.cellAt(QPoint(1, 1)).has_value());
  const QImage image = view.grab().toImage();
  auto pixel = [&image](QPoint p) { return image.pixelColor(p); };
  const QColor hot = pixel(view.cellRect(0, 0, 0).center() + QPoint(-3, 3));
  const QColor cold = pixel(view.cellRect(0, 1, 0).center());
  const QColor fair = pixel(view.cellRect(0, 0, 1).center());
  EXPECT_GT(hot.red(), hot.blue() + 40);
  EXPECT_GT(cold.blue(), cold.red() + 40);
  EXPECT_GT(fair.red(), 230);
  EXPECT_GT(fair.blue(), 230);
  // Expert 0 dropped in step 0: a dark corner at the cell's top right.
  const QRect dropped = view.cellRect(0, 0, 0);
  EXPECT_LT(pixel(dropped.topRight() + QPoint(-1, 1)).lightness(), 60);
  EXPECT_GT(pixel(view.cellRect(0, 1, 0).topRight() + QPoint(-1, 1)).lightness(), 60);
  // The scale: half of scaleMax 2 is the fair colour.
  EXPECT_EQ(ExpertLoadView::loadColour(1.0, 2.0), QColor(0xf7, 0xf7, 0xf7));
  EXPECT_EQ(ExpertLoadView::loadColour(2.0, 2.0), QColor(0xb2, 0x18, 0x2b));
  EXPECT_EQ(ExpertLoadView::loadColour(0.0, 2.0), QColor(0x21, 0x66, 0xac));
}

// Rank 0: compute, a dp all-reduce and an ep all-to-all on its communication
// lane; two steps, MoE samples at their ends.
struct MoeTrace {
  bubblescope::testing::TempDir dir;
  std::string path = dir.file("moe.db");
  std::unique_ptr<storage::TraceWriter> writer;
  std::unique_ptr<storage::TraceReader> reader;

  explicit MoeTrace(bool withSamples) {
    auto allToAll = guiSpan(0, Lane::kCommunication, EventKind::kAllToAll, 1100, 1200, 0, 0);
    allToAll.dim = trace_model::ParallelDim::kEp;
    auto allReduce = guiSpan(0, Lane::kCommunication, EventKind::kAllReduce, 1300, 1390, 0);
    allReduce.dim = trace_model::ParallelDim::kDp;
    writer = testing::writeGuiTrace(
        path, {guiRank(0, 0)},
        {guiSpan(0, Lane::kCompute, EventKind::kForward, 1000, 1100, 0, 0), allToAll,
         guiSpan(0, Lane::kCompute, EventKind::kBackward, 1200, 1300, 0, 0), allReduce,
         guiSpan(0, Lane::kCompute, EventKind::kForward, 2000, 2400, 1, 0)},
        {{0, 0, 2.5, 0, 1000, 1400}, {0, 1, 2.4, 0, 2000, 2400}});
    if (withSamples) {
      const auto samples = moeSamples();
      EXPECT_TRUE(writer->appendSamples(samples).isOk());
      EXPECT_TRUE(writer->flush().isOk());
    }
    auto r = storage::TraceReader::open(path);
    EXPECT_TRUE(r.isOk()) << r.status().message();
    reader = std::move(*r);
  }
};

TEST(AllToAllLane, EpSpansGetTheirOwnRowBelowCommunication) {
  MoeTrace t(false);
  TimelineModel model;
  ASSERT_TRUE(model.setRun(t.reader.get(), 1).isOk());
  ASSERT_TRUE(model.ingest(1000).isOk());
  ASSERT_EQ(model.rows().size(), 3u);
  EXPECT_EQ(model.rows()[1].laneLabel, QStringLiteral("comm"));
  EXPECT_EQ(model.rows()[2].laneLabel, QStringLiteral("all-to-all"));
  const int a2a = model.rowOf(0, static_cast<Lane>(kAllToAllLane));
  EXPECT_EQ(a2a, 2);
  const TimelineFrame& f = model.frame(1000, 1400, 400, 0, 2);
  int onA2a = 0, onComm = 0;
  for (const FrameSpan& s : f.spans) {
    if (s.row == a2a) {
      ++onA2a;
      EXPECT_EQ(s.kind, EventKind::kAllToAll);
    }
    if (s.row == 1) {
      ++onComm;
      EXPECT_EQ(s.kind, EventKind::kAllReduce);
    }
  }
  EXPECT_EQ(onA2a, 1);
  EXPECT_EQ(onComm, 1);
  // The span under the cursor on that row is the all-to-all.
  const auto e = model.eventAt(a2a, 1150, 0);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, EventKind::kAllToAll);
  EXPECT_EQ(e->lane, Lane::kCommunication);  // stored as it was
}

TEST(ExpertLoad, PanelShowsTheHeatMapOnlyForMoeRunsAndZoomsToAClickedStep) {
  MoeTrace dense(false);
  TimelinePanel panel;
  panel.resize(1200, 600);
  ASSERT_TRUE(panel.showRun(dense.reader.get(), 1).isOk());
  ASSERT_TRUE(panel.ingestAll().isOk());
  EXPECT_FALSE(panel.expertLoadShown());

  MoeTrace moe(true);
  ASSERT_TRUE(panel.showRun(moe.reader.get(), 1).isOk());
  ASSERT_TRUE(panel.ingestAll().isOk());
  EXPECT_TRUE(panel.expertLoadShown());
  EXPECT_EQ(panel.expertLoadModel().steps(0), 2);
  emit panel.expertLoad()->stepClicked(2400);  // step 1's samples
  EXPECT_DOUBLE_EQ(panel.view()->viewStartNs(), 2000);
  EXPECT_DOUBLE_EQ(panel.view()->viewEndNs(), 2400);
  panel.clear();
  EXPECT_FALSE(panel.expertLoadShown());
}

}  // namespace
}  // namespace bubblescope::gui
