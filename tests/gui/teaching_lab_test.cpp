// The teaching lab: the ideal schedule beside a measured run, its sliders,
// the step-through, the activations-in-flight lane, chunk colours and the
// formula, against the papers' numbers and against rendered pixels.
#include "gui/teaching_lab.h"

#include <gtest/gtest.h>

#include <QApplication>
#include <QComboBox>
#include <QImage>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>

#include "planning/formulas.h"
#include "gui/layout_editor.h"
#include "gui/main_window.h"
#include "gui/run_launcher.h"
#include "gui/teaching_painter.h"
#include "gui/teaching_view.h"
#include "storage/simulated_run.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::gui {
namespace {

using layout::ScheduleKind;

TeachingParams unitParams(ScheduleKind kind, int32_t p, int32_t m, int32_t v = 2) {
  TeachingParams t;
  t.kind = kind;
  t.p = p;
  t.m = m;
  t.v = v;
  t.backward = 1.0;
  t.weight = kind == ScheduleKind::kZeroBubbleH1 ? 1.0 : 0.0;
  return t;
}

// A pipeline layout of the schedule, p stages, m micro-batches, v chunks.
layout::Layout pipeline(ScheduleKind kind, int32_t p, int32_t m, int32_t v = 1) {
  layout::Layout l;
  l.schedule = kind;
  l.pp = p;
  l.microBatches = m;
  l.virtualChunks = v;
  return l;
}

QString labelText(const TeachingLab& lab, const char* name) {
  return lab.findChild<QLabel*>(name)->text();
}

QImage render(const TeachingLabModel& model, int width = 1200) {
  const TeachingGeometry g = teachingGeometry(model, width, QApplication::font());
  QImage image(width, g.height, QImage::Format_RGB32);
  QPainter p(&image);
  paintTeachingLab(p, model, width, QPalette());
  return image;
}

// Where an op's colour is sampled: its middle, a quarter down the box (clear
// of the micro-batch number in its centre).
QPoint sampleOf(const TeachingGeometry& g, const layout::PlaybackOp& o) {
  return {static_cast<int>((g.xOf(o.start) + g.xOf(o.end)) / 2),
          g.opRowTop(o.stage) + TeachingGeometry::kOpRow / 4};
}

QRgb colourAtOp(const QImage& image, const TeachingGeometry& g, const layout::PlaybackOp& o) {
  return image.pixel(sampleOf(g, o));
}

// The painted colour of an op (chunk shades included).
QRgb colourOf(const layout::PlaybackOp& o) {
  return chunkColour(kindOfOp(o.op.type), o.op.chunk).rgb();
}

// True when the formula's box covers the op's sample point.
bool underFormula(const TeachingGeometry& g, const layout::PlaybackOp& o) {
  return g.formula.contains(sampleOf(g, o));
}

// A trace with one simulated run of the small model, gpipe, pp 4, m 8, 3
// steps, t_F = 2 ms, t_B = 3 ms.
Status writeGPipeRun(const std::string& path) {
  layout::Layout l = pipeline(ScheduleKind::kGPipe, 4, 8);
  l.model = *layout::modelPreset("small");
  l.steps = 3;
  BS_ASSIGN_OR_RETURN(auto writer, storage::TraceWriter::open(path));
  storage::SimulatedRunOptions o;
  o.costs.forward = 2.0;
  o.costs.backwardInput = 3.0;
  o.unitNs = 1'000'000;
  return storage::writeSimulatedRun(*writer, l, o).status();
}

// Records what it was asked to run (the layout file read back); runs nothing.
class RecordingLauncher : public RunLauncher {
 public:
  Status start(const RunRequest& request) override {
    BS_ASSIGN_OR_RETURN(layout::Layout l, layout::layoutFromFile(request.layoutPath.toStdString()));
    started.push_back(l);
    return Status::ok();
  }
  void stop() override {}
  bool isRunning() const override { return false; }
  std::vector<layout::Layout> started;
};

TEST(TeachingLab, OneFOneBHoldsPMinusStageActivationsGPipeHoldsM) {
  TeachingLabModel model;
  ASSERT_TRUE(model.setParams(unitParams(ScheduleKind::kOneFOneB, 4, 8)).isOk());
  EXPECT_EQ(model.peakInFlight(), (std::vector<int32_t>{4, 3, 2, 1}));
  ASSERT_TRUE(model.setParams(unitParams(ScheduleKind::kGPipe, 4, 8)).isOk());
  EXPECT_EQ(model.peakInFlight(), (std::vector<int32_t>{8, 8, 8, 8}));
}

TEST(TeachingLab, TheInFlightLaneIsPaintedToThePeak) {
  TeachingLabModel model;
  ASSERT_TRUE(model.setParams(unitParams(ScheduleKind::kOneFOneB, 4, 8)).isOk());
  const QImage image = render(model);
  const TeachingGeometry g = teachingGeometry(model, image.width(), QApplication::font());
  // The lane's bar is filled up to count/maxCount of its height: stage 0
  // reaches the top band (4 of 4), stage 3 only a quarter.
  auto tallest = [&](int stage) {
    int rows = 0;
    for (int y = g.inFlightTop(stage); y < g.inFlightTop(stage) + TeachingGeometry::kInFlightRow;
         ++y) {
      for (int x = g.plot.left(); x < g.plot.right(); ++x) {
        if (image.pixelColor(x, y) == inFlightColour()) {
          ++rows;
          break;
        }
      }
    }
    return rows;
  };
  EXPECT_GE(tallest(0), 12);
  EXPECT_LE(tallest(3), 5);
  EXPECT_GE(tallest(3), 2);
}

TEST(TeachingLab, TheBubbleShownIsTheFormula) {
  struct Case {
    ScheduleKind kind;
    int32_t m, v;
    const char* text;
  };
  for (const Case& c : {Case{ScheduleKind::kGPipe, 8, 1, "(p-1)/(m+p-1) = 3/11 = 0.273"},
                        Case{ScheduleKind::kOneFOneB, 8, 1, "(p-1)/(m+p-1) = 3/11 = 0.273"},
                        Case{ScheduleKind::kInterleaved, 8, 2, "(p-1)/(v*m+p-1) = 3/19 = 0.158"},
                        Case{ScheduleKind::kOneFOneB, 32, 1, "(p-1)/(m+p-1) = 3/35 = 0.086"},
                        // with no run, t_F = t_B = t_W: the paper's assumption
                        Case{ScheduleKind::kZeroBubbleH1, 8, 1, "(p-1)/(3m+p-1) = 3/27 = 0.111"}}) {
    TeachingLab lab;
    ASSERT_TRUE(lab.simulate(pipeline(c.kind, 4, c.m, c.v)).isOk());
    const TeachingLabModel& m = lab.model();
    EXPECT_EQ(m.formulaText(), c.text);
    EXPECT_NEAR(m.simulation().bubbleFraction, m.formulaBubble(), 1e-12) << c.text;
    EXPECT_NEAR(m.bubbleSoFar(), m.formulaBubble(), 1e-12) << "every op shown";
    const QString pct = QString::number(m.formulaBubble() * 100, 'f', 1) + "%";
    EXPECT_TRUE(labelText(lab, "lab_formula").contains(c.text))
        << labelText(lab, "lab_formula").toStdString();
    EXPECT_TRUE(labelText(lab, "lab_formula").contains(pct));
    EXPECT_EQ(m.timelineFormulaText(),
              QStringLiteral("bubble = %1 · simulated %2").arg(c.text, pct));
  }
}

TEST(TeachingLab, StepThroughAfterKStepsShowsKOps) {
  TeachingLab lab;
  ASSERT_TRUE(lab.simulate(pipeline(ScheduleKind::kOneFOneB, 4, 8)).isOk());
  const TeachingLabModel& m = lab.model();
  ASSERT_EQ(m.order().size(), 64u);
  lab.restart();
  EXPECT_EQ(m.shown(), 0u);
  const size_t k = 11;
  for (size_t i = 0; i < k; ++i) lab.stepForward();
  EXPECT_EQ(m.shown(), k);
  EXPECT_NEAR(m.bubbleSoFar(), layout::bubbleSoFar(m.order(), 4, k), 1e-15);
  EXPECT_TRUE(labelText(lab, "lab_bubble").contains("after 11 of 64 ops"))
      << labelText(lab, "lab_bubble").toStdString();
  // The first k ops are painted, the (k+1)-th is not.
  const QImage image = render(m);
  const TeachingGeometry g = teachingGeometry(m, image.width(), QApplication::font());
  for (size_t i = 0; i < k; ++i) {
    const layout::PlaybackOp& o = m.order()[i];
    ASSERT_FALSE(underFormula(g, o)) << "the formula goes right of the last shown op";
    EXPECT_EQ(colourAtOp(image, g, o), colourOf(o)) << i;
  }
  const layout::PlaybackOp& next = m.order()[k];
  EXPECT_NE(colourAtOp(image, g, next), colourOf(next));
  lab.stepBack();
  EXPECT_EQ(m.shown(), k - 1);
  lab.showAll();
  EXPECT_TRUE(m.atEnd());
  // Play starts over from the first op; the timer adds the rest.
  lab.findChild<QPushButton*>("lab_play")->click();
  EXPECT_TRUE(lab.playing());
  EXPECT_EQ(m.shown(), 0u);
  lab.findChild<QPushButton*>("lab_play")->click();
  EXPECT_FALSE(lab.playing());
}

TEST(TeachingLab, SlidersRebuildTheScheduleAndTheFormula) {
  TeachingLab lab;
  ASSERT_TRUE(lab.simulate(pipeline(ScheduleKind::kOneFOneB, 4, 8)).isOk());
  lab.findChild<QSlider*>("lab_m")->setValue(16);
  EXPECT_EQ(lab.model().params().m, 16);
  EXPECT_EQ(lab.model().formulaText(), "(p-1)/(m+p-1) = 3/19 = 0.158");
  EXPECT_EQ(lab.model().order().size(), 4u * 16u * 2u);
  lab.findChild<QSlider*>("lab_p")->setValue(8);
  EXPECT_EQ(lab.model().peakInFlight().front(), 8);
  // B = 2F: 1F1B's bubble stays (p-1)/(m+p-1) at any F : B.
  lab.findChild<QSlider*>("lab_b")->setValue(200);
  EXPECT_DOUBLE_EQ(lab.model().params().backward, 2.0);
  EXPECT_NEAR(lab.model().simulation().bubbleFraction, 7.0 / 23.0, 1e-12);
  // Communication between stages adds to the bubble.
  lab.findChild<QSlider*>("lab_comm")->setValue(50);
  EXPECT_GT(lab.model().simulation().bubbleFraction, 7.0 / 23.0);
  // Interleaved needs m a multiple of p: the error is shown, the picture kept.
  auto* schedule = lab.findChild<QComboBox*>("lab_schedule");
  schedule->setCurrentIndex(schedule->findData(static_cast<int>(ScheduleKind::kInterleaved)));
  EXPECT_EQ(lab.model().params().kind, ScheduleKind::kInterleaved);
  lab.findChild<QSlider*>("lab_m")->setValue(12);
  EXPECT_FALSE(labelText(lab, "lab_error").isEmpty());
  EXPECT_EQ(lab.model().params().m, 16);
  lab.findChild<QSlider*>("lab_m")->setValue(24);
  EXPECT_TRUE(labelText(lab, "lab_error").isEmpty());
  EXPECT_EQ(lab.model().params().m, 24);
}

// The chunks slider's value reads 1 beside a schedule without chunks (issue
// 31 walk: "chunks v 2" beside 1F1B and GPipe, whose stages hold one chunk),
// and the slider's own value once interleaved.
TEST(TeachingLab, TheChunksValueIsOneWithoutInterleaving) {
  TeachingLab lab;
  ASSERT_TRUE(lab.simulate(pipeline(ScheduleKind::kOneFOneB, 4, 8)).isOk());
  EXPECT_FALSE(lab.findChild<QSlider*>("lab_v")->isEnabled());
  EXPECT_EQ(labelText(lab, "lab_v_value"), "1");
  auto* schedule = lab.findChild<QComboBox*>("lab_schedule");
  schedule->setCurrentIndex(schedule->findData(static_cast<int>(ScheduleKind::kInterleaved)));
  ASSERT_TRUE(lab.findChild<QSlider*>("lab_v")->isEnabled());
  EXPECT_EQ(labelText(lab, "lab_v_value"),
            QString::number(lab.findChild<QSlider*>("lab_v")->value()));
  EXPECT_EQ(lab.model().params().v, lab.findChild<QSlider*>("lab_v")->value());
}

TEST(TeachingLab, InterleavedChunksArePaintedInTheirOwnShade) {
  TeachingLabModel model;
  ASSERT_TRUE(model.setParams(unitParams(ScheduleKind::kInterleaved, 2, 4, 2)).isOk());
  EXPECT_NE(chunkColour(trace_model::EventKind::kForward, 0),
            chunkColour(trace_model::EventKind::kForward, 1));
  const QImage image = render(model);
  const TeachingGeometry g = teachingGeometry(model, image.width(), QApplication::font());
  int forwards[2] = {0, 0};
  for (const layout::PlaybackOp& o : model.order()) {
    ASSERT_FALSE(underFormula(g, o)) << "the formula is written right of the step";
    EXPECT_EQ(colourAtOp(image, g, o), colourOf(o));
    if (o.op.type == layout::OpType::kForward) ++forwards[o.op.chunk];
  }
  EXPECT_EQ(forwards[0], 2 * 4);  // each stage runs each chunk for each micro-batch
  EXPECT_EQ(forwards[1], 2 * 4);
  // The formula box lies right of the step's end, inside the plot.
  EXPECT_GE(g.formula.left(), g.xOf(model.simulation().makespan));
  EXPECT_LE(g.formula.right(), g.plot.right() + 1);
}

TEST(TeachingLab, OversubscribedRunsAreSaidSo) {
  TeachingLabModel model;
  EXPECT_TRUE(model.oversubscribedNote().isEmpty());
  analysis::MeasuredStep step;
  step.oversubscribed = {"host h0 ran 8 ranks on 2 cores"};
  step.durationNs = 4 * static_cast<int64_t>(model.simulation().makespan);
  model.setMeasured(step, "run 2 (pp8)");
  EXPECT_TRUE(model.oversubscribedNote().startsWith(
      "run 2 (pp8) was oversubscribed (host h0 ran 8 ranks on 2 cores)"))
      << model.oversubscribedNote().toStdString();
  // Its lengths mean little: it is drawn stretched to the ideal step's length.
  EXPECT_FALSE(model.sameTimeScale());
  const TeachingGeometry g = teachingGeometry(model, 1200, QApplication::font());
  EXPECT_DOUBLE_EQ(g.xOfMeasured(static_cast<double>(step.durationNs)),
                   g.xOf(model.simulation().makespan));
  model.setMeasured(analysis::MeasuredStep{}, "run 3");
  EXPECT_TRUE(model.sameTimeScale());
}

// Simulate in the layout editor: the lab opens on the editor's layout with
// the shown run's median op costs, and draws the run's step on the same
// time scale.
TEST(TeachingLab, SimulateInTheEditorUsesTheShownRunsCosts) {
  testing::TempDir dir;
  const std::string path = dir.file("run.db");
  ASSERT_TRUE(writeGPipeRun(path).isOk());
  MainWindow window;
  ASSERT_TRUE(window.openFile(QString::fromStdString(path)).isOk());
  window.layoutEditor()->findChild<QPushButton*>("simulate")->click();
  EXPECT_EQ(window.tabs()->currentWidget(), window.teachingLab());
  const TeachingLabModel& m = window.teachingLab()->model();
  ASSERT_TRUE(m.measured().has_value());
  EXPECT_EQ(m.params().kind, ScheduleKind::kGPipe);
  EXPECT_EQ(m.params().p, 4);
  EXPECT_EQ(m.params().m, 8);
  EXPECT_DOUBLE_EQ(m.params().unitNs, 2e6);  // t_F: the median forward
  EXPECT_DOUBLE_EQ(m.params().backward, 1.5);
  EXPECT_EQ(window.teachingLab()->findChild<QSlider*>("lab_b")->value(), 150);
  // Same costs, same schedule: the ideal step is the measured one.
  EXPECT_NEAR(m.simulation().makespan, static_cast<double>(m.measured()->durationNs), 1.0);
  EXPECT_EQ(m.measured()->stages.size(), 4u);
  // Both are drawn on one axis: the measured and simulated stage 0 forwards
  // of micro-batch 0 start at the same x.
  const TeachingGeometry g = teachingGeometry(m, 1200, QApplication::font());
  EXPECT_DOUBLE_EQ(g.xOf(static_cast<double>(m.measured()->stages[0].spans[0].startNs)),
                   g.xOf(m.order()[0].start));
}

// The lab's schedule, p, m and v are the layout editor's: moving them moves
// the editor's fields (the keys the lab does not show are kept), the cost
// ratios and a schedule the lab refuses do not, and "Run this layout" in the
// lab runs the lab's layout through the app's run path.
TEST(TeachingLab, SlidersMoveTheEditorsLayoutAndRunThisRunsIt) {
  testing::TempDir dir;
  const std::string path = dir.file("run.db");
  ASSERT_TRUE(writeGPipeRun(path).isOk());
  auto owned = std::make_unique<RecordingLauncher>();
  RecordingLauncher* launcher = owned.get();
  MainWindow window(std::move(owned));
  ASSERT_TRUE(window.openFile(QString::fromStdString(path)).isOk());
  LayoutEditor* editor = window.layoutEditor();
  ASSERT_EQ(editor->layout().pp, 4);  // the editor follows the shown run
  editor->findChild<QSpinBox*>("steps")->setValue(5);
  editor->findChild<QPushButton*>("simulate")->click();
  TeachingLab* lab = window.teachingLab();

  lab->findChild<QSlider*>("lab_p")->setValue(2);
  lab->findChild<QSlider*>("lab_m")->setValue(6);
  EXPECT_EQ(editor->layout().pp, 2);
  EXPECT_EQ(editor->layout().microBatches, 6);
  EXPECT_EQ(editor->layout().schedule, ScheduleKind::kGPipe);
  auto* schedule = lab->findChild<QComboBox*>("lab_schedule");
  schedule->setCurrentIndex(schedule->findData(static_cast<int>(ScheduleKind::kInterleaved)));
  lab->findChild<QSlider*>("lab_v")->setValue(2);
  layout::Layout l = editor->layout();
  EXPECT_EQ(l.schedule, ScheduleKind::kInterleaved);
  EXPECT_EQ(l.virtualChunks, 2);
  EXPECT_EQ(l.pp, 2);
  EXPECT_EQ(l.microBatches, 6);
  EXPECT_EQ(l.steps, 5);  // not the lab's: kept
  EXPECT_EQ(l.model.preset, "small");
  EXPECT_TRUE(editor->isValid()) << editor->problems().join("; ").toStdString();
  // The editor's formula is the lab's.
  EXPECT_DOUBLE_EQ(layout::formulaBubble(l), lab->model().formulaBubble());

  // Cost ratios are the hardware's, not the layout's; m = 5 with p = 2 is
  // refused by the interleaved schedule: the lab keeps m = 6, so does the
  // editor.
  lab->findChild<QSlider*>("lab_b")->setValue(250);
  lab->findChild<QSlider*>("lab_m")->setValue(5);
  EXPECT_FALSE(labelText(*lab, "lab_error").isEmpty());
  EXPECT_EQ(editor->layout().microBatches, 6);

  // Back to a schedule without chunks: the editor's v goes back to 1.
  schedule->setCurrentIndex(schedule->findData(static_cast<int>(ScheduleKind::kOneFOneB)));
  lab->findChild<QSlider*>("lab_m")->setValue(8);
  l = editor->layout();
  EXPECT_EQ(l.schedule, ScheduleKind::kOneFOneB);
  EXPECT_EQ(l.virtualChunks, 1);
  EXPECT_EQ(l.microBatches, 8);
  EXPECT_TRUE(editor->isValid()) << editor->problems().join("; ").toStdString();

  lab->findChild<QPushButton*>("lab_run")->click();
  ASSERT_EQ(launcher->started.size(), 1u);
  const layout::Layout& ran = launcher->started.front();
  EXPECT_EQ(ran.schedule, ScheduleKind::kOneFOneB);
  EXPECT_EQ(ran.pp, 2);
  EXPECT_EQ(ran.microBatches, 8);
  EXPECT_EQ(ran.virtualChunks, 1);
  EXPECT_EQ(ran.steps, 5);

  // "Reset to the run" takes the run's cost ratios back; the editor still
  // holds what the lab shows.
  lab->findChild<QPushButton*>("lab_from_run")->click();
  EXPECT_EQ(lab->findChild<QSlider*>("lab_b")->value(), 150);
  const TeachingParams& shown = lab->model().params();
  EXPECT_EQ(editor->layout().schedule, shown.kind);
  EXPECT_EQ(editor->layout().pp, shown.p);
  EXPECT_EQ(editor->layout().microBatches, shown.m);
  EXPECT_EQ(editor->layout().virtualChunks, shown.chunks());
}

// A new schedule keeps the cost ratios the user set (issue 31: they went
// back to the run's at every schedule change). docs/teaching.md, Lesson 2:
// B / F = 2 and comm / F = 1 give interleaved (p 4, m 8, v 2) 47.8% and,
// the schedule switched to 1f1b, 51.0%. A fused backward splits in halves
// for zb-h1 and fuses again after it.
TEST(TeachingLab, ANewScheduleKeepsTheCostRatios) {
  TeachingLab lab;
  ASSERT_TRUE(lab.simulate(pipeline(ScheduleKind::kInterleaved, 4, 8, 2)).isOk());
  lab.findChild<QSlider*>("lab_b")->setValue(200);
  lab.findChild<QSlider*>("lab_comm")->setValue(100);
  EXPECT_NEAR(lab.model().simulation().bubbleFraction, 0.478, 0.0005);
  auto* schedule = lab.findChild<QComboBox*>("lab_schedule");
  auto choose = [&](ScheduleKind k) {
    schedule->setCurrentIndex(schedule->findData(static_cast<int>(k)));
  };
  choose(ScheduleKind::kOneFOneB);
  EXPECT_EQ(lab.findChild<QSlider*>("lab_b")->value(), 200);
  EXPECT_EQ(lab.findChild<QSlider*>("lab_comm")->value(), 100);
  EXPECT_NEAR(lab.model().simulation().bubbleFraction, 0.510, 0.0005);
  choose(ScheduleKind::kZeroBubbleH1);
  EXPECT_DOUBLE_EQ(lab.model().params().backward, 1.0);
  EXPECT_DOUBLE_EQ(lab.model().params().weight, 1.0);
  EXPECT_DOUBLE_EQ(lab.model().params().comm, 1.0);
  choose(ScheduleKind::kGPipe);
  EXPECT_DOUBLE_EQ(lab.model().params().backward, 2.0);
  EXPECT_DOUBLE_EQ(lab.model().params().weight, 0.0);
  EXPECT_EQ(lab.model().params().p, 4);
  EXPECT_EQ(lab.model().params().m, 8);
}

// Writes a simulated run of the tiny model (2 layers) to `path`.
void writeTinyRun(const std::string& path, ScheduleKind kind, int32_t m) {
  layout::Layout l = pipeline(kind, 2, m);
  l.model = *layout::modelPreset("tiny");
  l.steps = 2;
  auto writer = storage::TraceWriter::open(path);
  ASSERT_TRUE(writer.isOk()) << writer.status().message();
  storage::SimulatedRunOptions o;
  o.costs.forward = 1.0;
  o.costs.backwardInput = 2.0;
  auto run = storage::writeSimulatedRun(**writer, l, o);
  ASSERT_TRUE(run.isOk()) << run.status().message();
}

// The lab and the layout editor stay in step (issue 31: with a pp2 run
// selected the lab showed p = 4, its schedule change made the editor pp 4,
// the measured rows had 2 stages against a 4-stage ideal, and another run
// selected left the lab on the old one).
TEST(TeachingLab, TheLabFollowsTheShownRunAndTheEditor) {
  testing::TempDir dir;
  const std::string path = dir.file("runs.db");
  writeTinyRun(path, ScheduleKind::kGPipe, 2);
  writeTinyRun(path, ScheduleKind::kOneFOneB, 4);
  MainWindow window(std::make_unique<RecordingLauncher>());
  window.show();
  ASSERT_TRUE(window.openFile(QString::fromStdString(path)).isOk());  // shows run 2
  TeachingLab* lab = window.teachingLab();
  LayoutEditor* editor = window.layoutEditor();
  window.tabs()->setCurrentWidget(lab);
  const TeachingLabModel& m = lab->model();
  EXPECT_EQ(m.params().kind, ScheduleKind::kOneFOneB);
  EXPECT_EQ(m.params().p, 2);
  EXPECT_EQ(m.params().m, 4);
  EXPECT_DOUBLE_EQ(m.params().backward, 2.0) << "the run's costs";
  ASSERT_TRUE(m.measured().has_value());
  EXPECT_EQ(m.measured()->stages.size(), 2u);
  EXPECT_TRUE(m.measuredLabel().startsWith("run 2")) << m.measuredLabel().toStdString();

  // A schedule chosen in the lab: the editor keeps pp 2, and stays valid.
  auto* schedule = lab->findChild<QComboBox*>("lab_schedule");
  schedule->setCurrentIndex(schedule->findData(static_cast<int>(ScheduleKind::kGPipe)));
  EXPECT_EQ(editor->layout().schedule, ScheduleKind::kGPipe);
  EXPECT_EQ(editor->layout().pp, 2);
  EXPECT_TRUE(editor->isValid()) << editor->problems().join("; ").toStdString();

  // The editor's micro-batches are the lab's, the user's ratios kept.
  lab->findChild<QSlider*>("lab_comm")->setValue(50);
  editor->findChild<QSpinBox*>("micro_batches")->setValue(6);
  EXPECT_EQ(m.params().m, 6);
  EXPECT_DOUBLE_EQ(m.params().comm, 0.5);

  // Another run selected: the lab moves to it, its layout and its costs.
  window.runsView()->selectRow(0);
  EXPECT_TRUE(m.measuredLabel().startsWith("run 1")) << m.measuredLabel().toStdString();
  EXPECT_EQ(m.params().kind, ScheduleKind::kGPipe);
  EXPECT_EQ(m.params().m, 2);
  EXPECT_DOUBLE_EQ(m.params().comm, 0.0);

  // While the lab is hidden it waits; shown, it has caught up.
  window.tabs()->setCurrentIndex(MainWindow::kTimelineTab);
  window.runsView()->selectRow(1);
  window.tabs()->setCurrentWidget(lab);
  EXPECT_TRUE(m.measuredLabel().startsWith("run 2")) << m.measuredLabel().toStdString();
  EXPECT_EQ(m.params().kind, ScheduleKind::kOneFOneB);
  EXPECT_EQ(m.params().m, 4);
}

}  // namespace
}  // namespace bubblescope::gui
