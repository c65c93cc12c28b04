// Charts drawn from a hand-built pipeline run: what each chart holds is the
// RunReport's numbers (and those are the known answers), the bubble bars
// are drawn to their height, a click on a bar names its stage, and the
// models under the charts pass QAbstractItemModelTester.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QFile>
#include <QFont>
#include <QImage>
#include <QSignalSpy>
#include <QTest>
#include <cmath>
#include <nlohmann/json.hpp>

#include "gui/analysis_worker.h"
#include "gui/chart_data.h"
#include "gui/charts_panel.h"
#include "gui/run_details_html.h"
#include "gui/compare_table_model.h"
#include "gui/grad_compression_text.h"
#include "gui/metrics_table_model.h"
#include "gui/run_rows.h"
#include "gui/span_palette.h"
#include "tests/gui/hang_deadline.h"
#include "tests/gui/pipeline_trace.h"

namespace bubblescope::gui {
namespace {

struct PipelineFixture : ::testing::Test {
  bubblescope::testing::TempDir dir;
  std::string path = dir.file("pipeline.db");
  analysis::RunReport report;

  void SetUp() override {
    bubblescope::testing::writePipelineRun(path);
    auto reports = AnalysisWorker::analyzeNow(QString::fromStdString(path), {1});
    ASSERT_TRUE(reports.isOk()) << reports.status().message();
    report = reports->front();
    ASSERT_EQ(report.ranks.size(), 2u);
    ASSERT_EQ(report.stages.size(), 2u);
  }
};

void expectValues(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-9) << "at " << i;
}

TEST_F(PipelineFixture, ChartDataIsTheReportsNumbers) {
  const ChartData bubble = bubbleChart(report);
  expectValues(bubble.find("measured")->values, {0.4, 0.3});
  expectValues(bubble.find("formula")->values, {1.0 / 3, 1.0 / 3});
  EXPECT_EQ(bubble.ids, (std::vector<int32_t>{0, 1}));
  // The axis names the stage: the ticks are its number ("stage 0stage 1" ran
  // together at four stages on a 1280 px screen).
  EXPECT_EQ(bubble.labels, (QStringList{"0", "1"}));

  const ChartData util = utilisationChart(report);
  expectValues(util.find("utilisation")->values, {0.6, 0.6});
  expectValues(util.find("comm dp")->values, {0.0, 0.1});
  expectValues(util.find("comm ratio")->values, {0.0, 0.1});
  EXPECT_EQ(util.find("comm tp"), nullptr) << "only dimensions with traffic";

  const ChartData breakdown = breakdownChart(report);  // ms per step
  expectValues(breakdown.find("compute")->values, {600e-6, 600e-6});
  expectValues(breakdown.find("exposed comm")->values, {0.0, 100e-6});
  expectValues(breakdown.find("wait")->values, {0.0, 100e-6});
  expectValues(breakdown.find("idle")->values, {400e-6, 200e-6});
  for (size_t r = 0; r < 2; ++r) {
    double sum = 0;
    for (const ChartSeries& s : breakdown.series) sum += s.values[r];
    EXPECT_NEAR(sum, 1000e-6, 1e-12) << "the parts add up to the step time";
  }

  expectValues(lossChart(report).find("loss")->values, {5.0, 4.5});
}

// A run with one stage (pp = 1) has no pipeline: no bubble bars, no
// formula line, and the chart says why it is empty.
TEST_F(PipelineFixture, OneStageHasNoPipelineBubble) {
  analysis::RunReport single = report;
  single.stages.resize(1);
  EXPECT_TRUE(bubbleChart(single).series.empty());
  ChartsPanel panel;
  panel.resize(1200, 700);
  panel.setReport(single);
  EXPECT_TRUE(panel.plottedValues(ChartsPanel::kBubble, "measured").empty());
  EXPECT_TRUE(panel.plottedValues(ChartsPanel::kBubble, "formula").empty());
  EXPECT_FALSE(runDetailsHtml(single).contains("Bubble formula"));
  EXPECT_TRUE(runDetailsHtml(report).contains("Bubble formula"));
}

// One statistic of step time, labelled; comm volume in binary units.
TEST_F(PipelineFixture, SummaryNamesTheMeanAndVolumesAreBinary) {
  ChartsPanel panel;
  panel.setReport(report);
  EXPECT_TRUE(
      panel.summaryText().contains(QString::fromUtf8("measured mean step 1.00 µs ± 0.00 ns")))
      << panel.summaryText().toStdString();
  const QString details = runDetailsHtml(report);
  EXPECT_TRUE(details.contains("<b>Measured step time</b> mean")) << details.toStdString();
  EXPECT_FALSE(details.contains("Replayed")) << "not an oversubscribed run";
  // A run that marks no step (an Nsight import without NVTX steps): said so.
  analysis::RunReport noSteps = report;
  noSteps.stepTimeMeanNs.reset();
  noSteps.stepTimeMinNs.reset();
  noSteps.stepTimeMaxNs.reset();
  noSteps.stepTimeStdNs.reset();
  const QString none = runDetailsHtml(noSteps);
  EXPECT_TRUE(none.contains("<b>Measured step time</b> none")) << none.toStdString();
  EXPECT_FALSE(none.contains("mean - ms")) << none.toStdString();
  // Rank 1's dp all-reduce moves 1000 bytes a step; the mean over the ranks
  // that have it is 1000 B ("1.0 KB" in decimal units would be wrong).
  EXPECT_TRUE(details.contains("1000 B/step")) << details.toStdString();
  EXPECT_FALSE(details.contains("MB"));
}

// "comm tp" and "comm zero" are told apart at a glance: not two purples.
TEST(ChartColours, CommDimensionsHaveDistinctColours) {
  const QStringList dims = {"comm dp", "comm tp", "comm pp", "comm zero", "comm ep"};
  for (int i = 0; i < dims.size(); ++i) {
    for (int j = i + 1; j < dims.size(); ++j) {
      const QColor a = ChartsPanel::seriesColour(dims[i]);
      const QColor b = ChartsPanel::seriesColour(dims[j]);
      int hueGap = std::abs(a.hslHue() - b.hslHue());
      hueGap = std::min(hueGap, 360 - hueGap);
      EXPECT_GE(hueGap, 30) << dims[i].toStdString() << " vs " << dims[j].toStdString();
    }
  }
}

// Every series of the utilisation chart in a colour of its own: an imported
// run's "comm other" and "comm unknown" were both the comm ratio's grey
// (issue 31 walk). At least 60 apart in RGB.
TEST(ChartColours, EveryUtilisationSeriesHasItsOwnColour) {
  const QStringList names = {"utilisation", "comm dp",    "comm tp",      "comm pp",   "comm zero",
                             "comm ep",     "comm other", "comm unknown", "comm ratio"};
  for (int i = 0; i < names.size(); ++i) {
    for (int j = i + 1; j < names.size(); ++j) {
      const QColor a = ChartsPanel::seriesColour(names[i]);
      const QColor b = ChartsPanel::seriesColour(names[j]);
      const double distance =
          std::hypot(a.red() - b.red(), a.green() - b.green(), a.blue() - b.blue());
      EXPECT_GE(distance, 60.0) << names[i].toStdString() << " vs " << names[j].toStdString();
    }
  }
}

// A chart with nothing to draw says why in its middle (issue 31 walk: a
// simulated or imported run's loss chart was a blank grid, its one series
// all NaN): no loss recorded; an imported run's pipeline stages unknown, not
// "pp = 1"; a chart that draws says nothing.
TEST_F(PipelineFixture, AnEmptyChartSaysWhy) {
  ChartsPanel panel;
  panel.resize(1200, 700);
  panel.setReport(report);
  EXPECT_TRUE(panel.emptyNote(ChartsPanel::kLoss).isEmpty());
  EXPECT_TRUE(panel.emptyNote(ChartsPanel::kBubble).isEmpty());

  analysis::RunReport simulated = report;  // steps without a loss
  for (auto& step : simulated.steps) step.loss.reset();
  panel.setReport(simulated);
  EXPECT_EQ(panel.emptyNote(ChartsPanel::kLoss), "no loss recorded in this run");

  analysis::RunReport imported = simulated;  // one stage, no rank knows its own
  imported.stages.resize(1);
  for (auto& r : imported.ranks) r.info.pp = -1;
  panel.setReport(imported);
  EXPECT_TRUE(panel.emptyNote(ChartsPanel::kBubble).startsWith("pipeline stages unknown"))
      << panel.emptyNote(ChartsPanel::kBubble).toStdString();
  imported.ranks.front().info.pp = 0;  // a measured pp = 1 run
  panel.setReport(imported);
  EXPECT_EQ(panel.emptyNote(ChartsPanel::kBubble), "no pipeline in this run (pp = 1)");
  panel.clear();
  EXPECT_TRUE(panel.emptyNote(ChartsPanel::kLoss).isEmpty()) << "no run: nothing to explain";
}

// A run that marks no step (issue 31 walk: an imported Nsight run's Metrics
// read "bubble 81.6%", its whole run's idle): the bubble reads "no steps"
// with the reason in its tooltip, the idle keeps its value, and the bubble
// chart says there is no pipeline bubble.
TEST_F(PipelineFixture, ARunWithoutStepsShowsNoBubble) {
  analysis::RunReport stepless = report;
  stepless.stages.clear();
  for (auto& r : stepless.ranks) {
    r.info.pp = r.info.tp = r.info.dp = -1;
    r.wholeRun = true;
  }
  MetricsTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setReport(stepless);
  const int row = model.rowOfRank(1);
  const QModelIndex bubble = model.index(row, MetricsTableModel::kBubble);
  EXPECT_EQ(model.data(bubble).toString(), "no steps");
  EXPECT_FALSE(model.data(bubble, MetricsTableModel::kValueRole).isValid());
  EXPECT_TRUE(model.data(bubble, Qt::ToolTipRole).toString().contains("no pipeline bubble"));
  const QModelIndex idle = model.index(row, MetricsTableModel::kIdle);
  EXPECT_TRUE(model.data(idle, MetricsTableModel::kValueRole).isValid());
  EXPECT_NE(model.data(idle).toString(), "no steps");

  ChartsPanel panel;
  panel.resize(1200, 700);
  panel.setReport(stepless);
  EXPECT_TRUE(panel.emptyNote(ChartsPanel::kBubble).startsWith("no steps in this run"))
      << panel.emptyNote(ChartsPanel::kBubble).toStdString();
  panel.setReport(report);  // a run with steps: its bubble as before
  EXPECT_TRUE(panel.emptyNote(ChartsPanel::kBubble).isEmpty());
}

// An oversubscribed run's ideal-hardware replay (issue 31: the note
// "bubble replayed: ..." came without values, and the chart showed only
// measured and formula): a "replayed" series between them, and the values,
// step and bubble per stage, in the details under their name.
TEST_F(PipelineFixture, TheReplayedBubbleHasItsBarsAndItsValues) {
  analysis::RunReport replayed = report;
  replayed.stages[0].bubbleReplayed = 0.25;
  replayed.stages[1].bubbleReplayed = 0.125;
  replayed.replayedStepNs = 412e6;
  const ChartData bubble = bubbleChart(replayed);
  ASSERT_EQ(bubble.series.size(), 3u);
  EXPECT_EQ(bubble.series[1].name, "replayed");
  expectValues(bubble.find("replayed")->values, {0.25, 0.125});
  EXPECT_EQ(bubbleChart(report).find("replayed"), nullptr) << "none without a replay";
  const QString details = runDetailsHtml(replayed);
  EXPECT_TRUE(
      details.contains("<b>Replayed on ideal hardware</b> (one core per rank) step "
                       "412.00 ms · bubble per stage 25.0% · 12.5%"))
      << details.toStdString();
  // The summary line names both step times (issue 31: four step times sat
  // side by side unnamed).
  ChartsPanel panel;
  panel.setReport(replayed);
  EXPECT_TRUE(panel.summaryText().contains("measured mean step 1.00 µs"))
      << panel.summaryText().toStdString();
  EXPECT_TRUE(panel.summaryText().contains("replayed on ideal hardware 412 ms"))
      << panel.summaryText().toStdString();
  EXPECT_NE(ChartsPanel::seriesColour("replayed"), ChartsPanel::seriesColour("measured"));
  EXPECT_NE(ChartsPanel::seriesColour("replayed"), ChartsPanel::seriesColour("formula"));
}

TEST_F(PipelineFixture, PlotsHoldTheChartData) {
  ChartsPanel panel;
  panel.resize(1200, 700);
  panel.setReport(report);
  expectValues(panel.plottedValues(ChartsPanel::kBubble, "measured"),
               {*report.stages[0].bubbleFraction, *report.stages[1].bubbleFraction});
  expectValues(panel.plottedValues(ChartsPanel::kBubble, "formula"), {1.0 / 3, 1.0 / 3});
  expectValues(panel.plottedValues(ChartsPanel::kUtilisation, "utilisation"), {0.6, 0.6});
  expectValues(panel.plottedValues(ChartsPanel::kBreakdown, "idle"), {400e-6, 200e-6});
  expectValues(panel.plottedValues(ChartsPanel::kLoss, "loss"), {5.0, 4.5});
}

// The measured bubble bar of stage 0 is painted in its colour from the
// x axis up to 0.4 on the value axis, and not above.
TEST_F(PipelineFixture, BubbleBarsArePaintedToTheirHeight) {
  ChartsPanel panel;
  panel.resize(1200, 700);
  panel.show();
  panel.setReport(report);
  QApplication::processEvents();
  const QImage image = panel.plotWidget(ChartsPanel::kBubble)->grab().toImage();
  const double top = panel.barTopPixel(ChartsPanel::kBubble, "measured", 0);
  ASSERT_GT(top, 0);
  EXPECT_NEAR(top, panel.valuePixel(ChartsPanel::kBubble, 0.4), 0.5);
  const double top1 = panel.barTopPixel(ChartsPanel::kBubble, "measured", 1);
  EXPECT_NEAR(top1, panel.valuePixel(ChartsPanel::kBubble, 0.3), 0.5);
  const int x = static_cast<int>(panel.keyPixel(ChartsPanel::kBubble, -0.2));
  const int base = static_cast<int>(panel.valuePixel(ChartsPanel::kBubble, 0.0));
  const double dpr = image.devicePixelRatio();
  auto at = [&](int px, int py) { return image.pixelColor(int(px * dpr), int(py * dpr)); };
  const QColor bar = bubbleHatchColour();
  EXPECT_EQ(at(x, static_cast<int>(top) + 3).rgb(), bar.rgb());
  EXPECT_EQ(at(x, (static_cast<int>(top) + base) / 2).rgb(), bar.rgb());
  EXPECT_NE(at(x, static_cast<int>(top) - 3).rgb(), bar.rgb());
}

TEST_F(PipelineFixture, ClickingABarNamesItsStageOrRank) {
  ChartsPanel panel;
  panel.resize(1200, 700);
  panel.show();
  panel.setReport(report);
  QApplication::processEvents();
  QSignalSpy stages(&panel, &ChartsPanel::stageClicked);
  QSignalSpy ranks(&panel, &ChartsPanel::rankClicked);
  const int x = static_cast<int>(panel.keyPixel(ChartsPanel::kBubble, 1 - 0.2));
  const int y = static_cast<int>(panel.valuePixel(ChartsPanel::kBubble, 0.15));
  QTest::mouseClick(panel.plotWidget(ChartsPanel::kBubble), Qt::LeftButton, {}, QPoint(x, y));
  ASSERT_EQ(stages.count(), 1);
  EXPECT_EQ(stages.at(0).at(0).toInt(), 1);
  const int rx = static_cast<int>(panel.keyPixel(ChartsPanel::kBreakdown, 1));
  const int ry = static_cast<int>(panel.valuePixel(ChartsPanel::kBreakdown, 300e-6));
  QTest::mouseClick(panel.plotWidget(ChartsPanel::kBreakdown), Qt::LeftButton, {}, QPoint(rx, ry));
  ASSERT_EQ(ranks.count(), 1);
  EXPECT_EQ(ranks.at(0).at(0).toInt(), 1);
}

TEST_F(PipelineFixture, ChartsExportToPngAndSvg) {
#if !BUBBLESCOPE_WITH_SVG
  GTEST_SKIP() << "built without Qt SVG";
#endif
  ChartsPanel panel;
  panel.setReport(report);
  const QString png = QString::fromStdString(dir.file("bubble.png"));
  const QString svg = QString::fromStdString(dir.file("bubble.svg"));
  ASSERT_TRUE(panel.exportChart(ChartsPanel::kBubble, png, 400, 300).isOk());
  ASSERT_TRUE(panel.exportChart(ChartsPanel::kBubble, svg, 400, 300).isOk());
  EXPECT_EQ(QImage(png).size(), QSize(400, 300));
  QFile f(svg);
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  const QByteArray text = f.readAll();
  EXPECT_TRUE(text.contains("<svg"));
  EXPECT_TRUE(text.contains("pipeline stage"));
}

TEST_F(PipelineFixture, MetricsTableIsAValidModelWithTheReportsValues) {
  MetricsTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setReport(report);
  ASSERT_EQ(model.rowCount(), 2);
  const int r1 = model.rowOfRank(1);
  auto value = [&](int row, int column) {
    return model.data(model.index(row, column), MetricsTableModel::kValueRole);
  };
  EXPECT_NEAR(value(r1, MetricsTableModel::kBubble).toDouble(), 0.3, 1e-12);
  EXPECT_NEAR(value(r1, MetricsTableModel::kUtilisation).toDouble(), 0.6, 1e-12);
  EXPECT_NEAR(value(r1, MetricsTableModel::kStepMs).toDouble(), 1e-3, 1e-12);
  EXPECT_FALSE(value(model.rowOfRank(0), MetricsTableModel::kOverlap).isValid())
      << "no communication: overlap unknown";
  EXPECT_EQ(model.data(model.index(model.rowOfRank(0), MetricsTableModel::kOverlap)).toString(),
            "-");
  EXPECT_EQ(model.data(model.index(r1, MetricsTableModel::kBubble)).toString(), "30.0%");
  model.clear();
  EXPECT_EQ(model.rowCount(), 0);
}

// An imported rank knows neither its coordinates (< 0) nor, often, its host:
// the coordinates read "unknown", or "-" for each unknown one, never "pp-1".
TEST_F(PipelineFixture, MetricsTableSaysWhichCoordinatesAreUnknown) {
  analysis::RunReport imported = report;
  for (analysis::RankReport& r : imported.ranks) {
    r.info.pp = r.info.tp = r.info.dp = -1;
    r.info.host.clear();
    if (r.info.rank == 1) r.info.dp = 1;
  }
  MetricsTableModel model;
  model.setReport(imported);
  auto coords = [&](int32_t rank) {
    return model.data(model.index(model.rowOfRank(rank), MetricsTableModel::kCoords)).toString();
  };
  EXPECT_EQ(coords(0), "unknown");
  EXPECT_EQ(coords(1), "pp- tp- dp1");
  for (analysis::RankReport& r : imported.ranks) {
    if (r.info.rank == 0) r.info.host = "node7";
  }
  model.setReport(imported);
  EXPECT_EQ(coords(0), "unknown · node7");
  model.clear();
  EXPECT_EQ(model.rowCount(), 0);
}

TEST_F(PipelineFixture, CompareTableHoldsCompareRunsRows) {
  analysis::RunReport other = report;
  other.run.id = 2;
  ASSERT_TRUE(other.layout) << "the fixture's run has a layout";
  other.layout->microBatches = 8;
  CompareTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setReports(report, other);
  const auto rows = analysis::compareRuns(report, other);
  ASSERT_EQ(model.rowCount(), static_cast<int>(rows.size()));
  ASSERT_GT(rows.size(), 3u);
  bool sawChange = false;
  for (int i = 0; i < model.rowCount(); ++i) {
    EXPECT_EQ(model.data(model.index(i, CompareTableModel::kMetric)).toString().toStdString(),
              rows[i].metric);
    EXPECT_EQ(model.data(model.index(i, CompareTableModel::kChange)).toString().toStdString(),
              rows[i].change);
    const bool bold = model.data(model.index(i, 0), Qt::FontRole).value<QFont>().bold();
    EXPECT_EQ(bold, rows[i].a != rows[i].b) << rows[i].metric;
    sawChange = sawChange || bold;
  }
  EXPECT_TRUE(sawChange) << "micro-batches differ";
  EXPECT_EQ(model.headerData(CompareTableModel::kB, Qt::Horizontal).toString(), "run 2 (B)");
}

TEST_F(PipelineFixture, WorkerAnalysesOffTheGuiThread) {
  AnalysisWorker worker;
  QSignalSpy finished(&worker, &AnalysisWorker::finished);
  QSignalSpy progress(&worker, &AnalysisWorker::progress);
  worker.analyze(QString::fromStdString(path), {1});
  EXPECT_TRUE(worker.busy());
  ASSERT_TRUE(finished.wait(testing::kHangMs));
  EXPECT_FALSE(worker.busy());
  const auto reports = finished.at(0).at(0).value<std::vector<analysis::RunReport>>();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].ranks.size(), 2u);
  ASSERT_GE(progress.count(), 1);
  EXPECT_EQ(progress.last().at(0).toInt(), 2);
  QSignalSpy failed(&worker, &AnalysisWorker::failed);
  worker.analyze(QString::fromStdString(path), {42});
  ASSERT_TRUE(failed.wait(testing::kHangMs));
}

// A second run of the fixture's layout with other losses, three steps
// (1..3: it shares steps 1 with the fixture's 0..1) and topk compression
// that sent 10 B of an uncompressed 1000 B per step.
analysis::RunReport comparedRun(const analysis::RunReport& report) {
  analysis::RunReport other = report;
  other.run.id = 2;
  other.layout->gradCompression = *layout::parseGradCompression("topk:0.01");
  other.run.info.layoutJson = layout::toJson(*other.layout).dump();
  other.steps.clear();
  for (int32_t step : {1, 2, 3}) {
    analysis::StepSummary s;
    s.step = step;
    s.loss = 6.0 - step;  // 5, 4, 3
    other.steps.push_back(s);
  }
  other.commVolume = {{"dp+zero", 10.0, 1000.0}};
  return other;
}

// The compared runs' losses share the step axis: every step of either run
// is a key, and a run's curve is NaN (not drawn) where it has no step.
TEST_F(PipelineFixture, ComparedLossChartPutsEveryRunOnTheSameSteps) {
  const analysis::RunReport other = comparedRun(report);
  const LossCurve a = lossCurve(report);
  const LossCurve b = lossCurve(other);
  EXPECT_EQ(a.label, "run 1 · " + layoutSummary(report.run.info));
  EXPECT_TRUE(b.label.startsWith("run 2 · ")) << b.label.toStdString();
  EXPECT_TRUE(b.label.contains("topk:0.01")) << "the label says how the run compressed";
  EXPECT_FALSE(a.label.contains("topk"));
  const ChartData c = lossChart(std::vector<LossCurve>{a, b});
  EXPECT_EQ(c.ids, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(c.labels, (QStringList{"0", "1", "2", "3"}));
  ASSERT_EQ(c.series.size(), 2u);
  EXPECT_EQ(c.series[0].name, a.label);
  EXPECT_EQ(c.series[1].name, b.label);
  const std::vector<double>& va = c.series[0].values;
  const std::vector<double>& vb = c.series[1].values;
  ASSERT_EQ(va.size(), 4u);
  ASSERT_EQ(vb.size(), 4u);
  EXPECT_EQ(va[0], 5.0);
  EXPECT_EQ(va[1], 4.5);
  EXPECT_TRUE(std::isnan(va[2]) && std::isnan(va[3]));
  EXPECT_TRUE(std::isnan(vb[0]));
  EXPECT_EQ(vb[1], 5.0);
  EXPECT_EQ(vb[2], 4.0);
  EXPECT_EQ(vb[3], 3.0);
}

// With a comparison open the loss plot draws each compared run's curve (its
// values, in its own colour), the text beside the charts gives each run's
// gradient bytes and compression ratio, and clearing the comparison brings
// back the shown run's curve alone.
TEST_F(PipelineFixture, LossChartDrawsTheComparedRunsCurvesOnOnePlot) {
  const analysis::RunReport other = comparedRun(report);
  ChartsPanel panel;
  panel.resize(1200, 700);
  panel.show();
  panel.setReport(report);
  panel.setComparedRuns({report, other});
  QApplication::processEvents();
  const QString la = lossCurve(report).label;
  const QString lb = lossCurve(other).label;
  expectValues(panel.plottedValues(ChartsPanel::kLoss, la), {5.0, 4.5});
  expectValues(panel.plottedValues(ChartsPanel::kLoss, lb), {5.0, 4.0, 3.0});
  EXPECT_TRUE(panel.plottedValues(ChartsPanel::kLoss, "loss").empty());
  EXPECT_EQ(panel.data(ChartsPanel::kLoss).series.size(), 2u);

  // Run 2's last point (step 3, loss 3.0) is painted in the second run colour.
  const QImage image = panel.plotWidget(ChartsPanel::kLoss)->grab().toImage();
  const double dpr = image.devicePixelRatio();
  const int x = static_cast<int>(std::lround(panel.keyPixel(ChartsPanel::kLoss, 3) * dpr));
  const int y = static_cast<int>(std::lround(panel.valuePixel(ChartsPanel::kLoss, 3.0) * dpr));
  const QColor painted = image.pixelColor(x, y);
  const QColor want = ChartsPanel::runColour(1);
  EXPECT_NEAR(painted.red(), want.red(), 40) << painted.name().toStdString();
  EXPECT_NEAR(painted.green(), want.green(), 40) << painted.name().toStdString();
  EXPECT_NEAR(painted.blue(), want.blue(), 40) << painted.name().toStdString();
  EXPECT_NE(ChartsPanel::runColour(0).rgb(), ChartsPanel::runColour(1).rgb());

  const QString details = panel.detailsText();
  EXPECT_TRUE(details.contains("<b>Run 2</b> topk:0.01: 10 B/step sent, ratio 100.00×<br>"))
      << details.toStdString();
  EXPECT_TRUE(details.contains("<b>Run 1</b> none: 1000 B/step sent")) << details.toStdString();

  // The shown run not among the compared ones is added to the plot.
  analysis::RunReport third = other;
  third.run.id = 3;
  panel.setComparedRuns({other, third});
  EXPECT_EQ(panel.data(ChartsPanel::kLoss).series.size(), 3u);
  expectValues(panel.plottedValues(ChartsPanel::kLoss, la), {5.0, 4.5});

  panel.clearComparedRuns();
  expectValues(panel.plottedValues(ChartsPanel::kLoss, "loss"), {5.0, 4.5});
  EXPECT_EQ(panel.data(ChartsPanel::kLoss).series.size(), 1u);
  EXPECT_FALSE(panel.detailsText().contains("Run 2"));
}

// The shown run's own details say what its compression did to the bytes:
// sent, the uncompressed formula and their ratio; a run without compression
// has no such line.
TEST_F(PipelineFixture, DetailsGiveTheCompressionBytesAndRatio) {
  const analysis::RunReport other = comparedRun(report);
  const auto f = gradCompressionFigures(other);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->spec, "topk:0.01");
  ASSERT_TRUE(f->ratio());
  EXPECT_DOUBLE_EQ(*f->ratio(), 100.0);
  EXPECT_TRUE(runDetailsHtml(other).contains(
      "<b>Grad compression</b> topk:0.01: 10 B/step per rank sent against the uncompressed "
      "1000 B (ratio 100.00×)"))
      << runDetailsHtml(other).toStdString();
  EXPECT_FALSE(runDetailsHtml(report).contains("Grad compression"));
  analysis::RunReport noLayout = other;
  noLayout.layout.reset();
  EXPECT_FALSE(gradCompressionFigures(noLayout));
  analysis::RunReport nothingSent = other;
  nothingSent.commVolume.clear();
  EXPECT_FALSE(gradCompressionFigures(nothingSent)->ratio());
  EXPECT_TRUE(gradCompressionHtml(nothingSent).contains("no data-parallel gradient traffic"));
}

// A hierarchical run over emulated nodes with a paced link says so: in the
// runs list's layout (and so the compared curves' labels) and beside the
// charts, in the words `report` and `info` use.
TEST_F(PipelineFixture, AnEmulatedInterNodeLinkIsNamedInTheLayoutAndTheDetails) {
  analysis::RunReport hier = report;
  hier.layout->dp = 4;
  hier.layout->pp = 1;
  hier.layout->allReduce = layout::AllReduceAlgorithm::kHierarchical;
  hier.layout->ranksPerNode = 2;
  hier.layout->interNodeGbps = 1.0;
  hier.layout->interNodeLatencyUs = 50.0;
  hier.run.info.layoutJson = layout::toJson(*hier.layout).dump();
  EXPECT_TRUE(lossCurve(hier).label.contains(
      QString::fromUtf8("dp4 tp1 pp1 · hierarchical · nodes of 2 · link 1 Gb/s 50 µs · tiny")))
      << lossCurve(hier).label.toStdString();
  EXPECT_TRUE(runDetailsHtml(hier).contains(
      "<i>inter-node link emulated: 1 Gb/s, 50 us (nodes of 2 ranks)</i>"))
      << runDetailsHtml(hier).toStdString();
  EXPECT_FALSE(runDetailsHtml(report).contains("inter-node"));
  EXPECT_FALSE(lossCurve(report).label.contains("hierarchical"));
}

// The app shows each rank's clock offset onto the run's timeline and its
// bound (a rank on another host: docs/cluster.md).
TEST(MetricsTableModelTest, CoordinatesTooltipShowsTheClockOffsetAndItsBound) {
  trace_model::RankInfo info;
  info.host = "hostB";
  info.pid = 42;
  info.clockOffsetNs = -6999876000;
  info.clockUncertaintyNs = 12343000;
  EXPECT_EQ(MetricsTableModel::clockToolTip(info).toStdString(),
            "host hostB · pid 42\nclock offset -6.999876 s ± 12.343 ms (added to this rank's "
            "times to put them on the run's timeline)");
}

// Each rank's row of the metrics table carries its own clock in the
// coordinates' tooltip (what the app shows on hover), not another rank's.
TEST_F(PipelineFixture, EachRanksCoordinatesTooltipIsItsClock) {
  for (auto& r : report.ranks) {
    r.info.clockOffsetNs = r.info.rank == 1 ? -7000000000 : 0;
    r.info.clockUncertaintyNs = r.info.rank == 1 ? 2500000 : 15000;
  }
  MetricsTableModel model;
  model.setReport(report);
  auto tip = [&](int rank) {
    return model
        .data(model.index(model.rowOfRank(rank), MetricsTableModel::kCoords), Qt::ToolTipRole)
        .toString()
        .toStdString();
  };
  EXPECT_NE(tip(1).find("clock offset -7.000000 s ± 2.500 ms"), std::string::npos) << tip(1);
  EXPECT_NE(tip(0).find("clock offset 0.000000 s ± 0.015 ms"), std::string::npos) << tip(0);
  EXPECT_FALSE(model.data(model.index(0, MetricsTableModel::kBubble), Qt::ToolTipRole).isValid())
      << "only the coordinates carry the clock";
}

}  // namespace
}  // namespace bubblescope::gui
