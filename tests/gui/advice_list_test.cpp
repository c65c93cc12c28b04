// The Charts view's advice list (gui/advice_list.h): it shows the advice the
// analysis put in the report, row for row, with the change and the gain the
// predictor gave; a run the worker analyses carries its advice to it.
#include "gui/advice_list.h"

#include <gtest/gtest.h>

#include <QApplication>
#include <QTableWidget>
#include <algorithm>
#include <cstdlib>

#include "planning/formulas.h"
#include "planning/planner.h"
#include "gui/analysis_worker.h"
#include "gui/charts_panel.h"
#include "tests/gui/pipeline_trace.h"

namespace bubblescope::gui {
namespace {

// A pp4 report with m = 2 whose advice comes from a FLOPs calibration: the
// few_micro_batches rule names a change with a predicted gain.
analysis::RunReport pipelineReport() {
  layout::Layout l;
  l.model = *layout::modelPreset("small");
  l.pp = 4;
  l.microBatches = 2;
  l.microBatchSize = 4;
  analysis::RunReport r;
  r.run.id = 7;
  r.layout = l;
  for (int32_t k = 0; k < 4; ++k) {
    analysis::StageReport s;
    s.stage = k;
    s.bubbleFormula = layout::formulaBubble(l);
    s.bubbleFraction = s.bubbleFormula;
    r.stages.push_back(s);
  }
  r.advice = analysis::adviseRun(r, layout::flopsCalibration(l.model, 1e11));
  return r;
}

TEST(AdviceList, ChartsShowTheReportsAdviceWithChangeAndGain) {
  const analysis::RunReport report = pipelineReport();
  ASSERT_EQ(report.advice.size(), 1u);
  const analysis::Advice& a = report.advice[0];
  ASSERT_EQ(a.rule, "few_micro_batches");
  ASSERT_FALSE(a.change.empty());
  ASSERT_TRUE(a.predicted.has_value());

  ChartsPanel panel;
  panel.resize(1400, 900);
  panel.show();
  panel.setReport(report);
  QApplication::processEvents();
  const AdviceList* list = panel.advice();
  ASSERT_NE(list, nullptr);
  EXPECT_TRUE(list->isVisible());
  ASSERT_EQ(list->count(), 1);
  EXPECT_EQ(list->text(0, AdviceList::kRule), "few_micro_batches (pp)");
  EXPECT_EQ(list->text(0, AdviceList::kFinding), QString::fromStdString(a.message));
  EXPECT_EQ(list->text(0, AdviceList::kChange), QString::fromStdString(a.change));
  EXPECT_EQ(list->text(0, AdviceList::kPredicted), QString::fromStdString(a.predictedText()));
  EXPECT_TRUE(list->text(0, AdviceList::kPredicted).contains("tokens/s"));
  // The row is tall enough for its wrapped finding and on screen.
  EXPECT_GT(list->table()->rowHeight(0), 0);
  EXPECT_GT(list->table()->viewport()->height(), list->table()->rowHeight(0) / 2);
  if (const char* dir = std::getenv("BUBBLESCOPE_TEST_SCREENSHOTS")) {
    panel.grab().save(QString::fromUtf8(dir) + "/charts-advice.png");
  }

  panel.clear();
  EXPECT_EQ(panel.advice()->count(), 0);
  EXPECT_EQ(panel.advice()->text(0, AdviceList::kRule), "none");
}

// The worker's analysis asks for advice: the hand-built pp2 run with m = 2
// carries few_micro_batches to the Charts.
TEST(AdviceList, TheWorkersReportCarriesAdviceToTheCharts) {
  bubblescope::testing::TempDir dir;
  const std::string path = dir.file("pipeline.db");
  bubblescope::testing::writePipelineRun(path);
  auto reports = AnalysisWorker::analyzeNow(QString::fromStdString(path), {1});
  ASSERT_TRUE(reports.isOk()) << reports.status().message();
  const analysis::RunReport& report = reports->front();
  const auto few = std::find_if(report.advice.begin(), report.advice.end(),
                                [](const auto& a) { return a.rule == "few_micro_batches"; });
  ASSERT_NE(few, report.advice.end());
  ChartsPanel panel;
  panel.setReport(report);
  ASSERT_EQ(panel.advice()->count(), static_cast<int>(report.advice.size()));
  const int row = static_cast<int>(few - report.advice.begin());
  EXPECT_EQ(panel.advice()->text(row, AdviceList::kRule), "few_micro_batches (pp)");
  EXPECT_TRUE(panel.advice()->text(row, AdviceList::kFinding).startsWith("m = 2 micro-batches"));
}

}  // namespace
}  // namespace bubblescope::gui
