// The desktop loop end to end, offscreen, as a user drives it (issue 16):
// open a trace of a real run, "Run again with changes", load a sample from
// the layout editor's Samples menu, change pp and the schedule, run it (the
// app's own run path: `bubblescope-cli run` with the real engine, a tiny
// model and few steps, into the open file), watch the live run fill in (its
// step count grows while it runs), wait for the end, find Compare opened on
// both runs with its table filled, export the timeline as PNG and SVG, and
// render the SVG with another renderer (rsvg-convert, else ImageMagick) to
// check it has no solid-black area (a mask-based hatch used to render black).
// All of it in a window the size of a 1280 x 720 screen, with the planner
// measuring the new run once it ends; then another file is opened and only
// its run shows, in the list, the status bar, the timeline and the analysed
// tabs, after a reload too, and the window still fits the screen on every
// tab (issue 31).
// No modal dialog ever stays open: one would fail the test.
#include <gtest/gtest.h>

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QMenu>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTest>
#include <QTimer>
#include <QToolButton>
#include <cstdio>
#include <set>

#include "gui/charts_panel.h"
#include "gui/compare_view.h"
#include "gui/layout_editor.h"
#include "gui/metrics_table_model.h"
#include "gui/main_window.h"
#include "gui/planner_panel.h"
#include "gui/process_run_launcher.h"
#include "gui/runs_table_model.h"
#include "gui/span_palette.h"
#include "gui/timeline_panel.h"
#include "tests/gui/hang_deadline.h"
#include "tests/gui/modal_box_closer.h"
#include "tests/storage/temp_dir.h"

// Waits are ASSERT_TRUE(QTest::qWaitFor(...)), not QTRY_*: those report to
// QTest, which gtest never hears of (a failed QTRY returned from the test,
// which then passed).
namespace bubblescope::gui {
namespace {

using bubblescope::testing::ModalBoxCloser;

// Long enough that the app's 500 ms polls see the run part-way (about 0.1 s
// a step here), short enough for the whole test to stay well under a minute.
constexpr int kSteps = 60;

QAction* actionNamed(const QWidget& window, const QString& text) {
  for (QAction* a : window.findChildren<QAction*>()) {
    if (a->text() == text) return a;
  }
  return nullptr;
}

// The first `side` x `side` block of near-black opaque pixels, or (-1, -1).
// Text strokes are a pixel or two wide; a mis-rendered hatch or mask is a
// filled rectangle.
QPoint solidBlackBlock(const QImage& image, int side) {
  const int w = image.width(), h = image.height();
  // sums[y][x]: black pixels in [0, x) x [0, y).
  std::vector<std::vector<int>> sums(h + 1, std::vector<int>(w + 1, 0));
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const QColor c = image.pixelColor(x, y);
      const bool black = c.alpha() > 200 && c.red() < 32 && c.green() < 32 && c.blue() < 32;
      sums[y + 1][x + 1] = sums[y][x + 1] + sums[y + 1][x] - sums[y][x] + (black ? 1 : 0);
    }
  }
  for (int y = 0; y + side <= h; ++y) {
    for (int x = 0; x + side <= w; ++x) {
      const int n = sums[y + side][x + side] - sums[y][x + side] - sums[y + side][x] + sums[y][x];
      if (n == side * side) return {x, y};
    }
  }
  return {-1, -1};
}

int pixelsOf(const QImage& image, const QColor& colour) {
  int n = 0;
  for (int y = 0; y < image.height(); ++y) {
    for (int x = 0; x < image.width(); ++x) n += image.pixelColor(x, y).rgb() == colour.rgb();
  }
  return n;
}

// Renders `svg` to a PNG with rsvg-convert or ImageMagick; "" when neither
// is installed (scripts/deps.sh installs librsvg2-bin).
QString renderSvgElsewhere(const QString& svg, const QString& png, QString* tool) {
  const QString rsvg = QStandardPaths::findExecutable("rsvg-convert");
  const QString magick = QStandardPaths::findExecutable("convert");
  QProcess p;
  if (!rsvg.isEmpty()) {
    *tool = rsvg;
    p.start(rsvg, {"-o", png, svg});
  } else if (!magick.isEmpty()) {
    *tool = magick;
    p.start(magick, {svg, png});
  } else {
    return {};
  }
  if (!p.waitForFinished(30000) || p.exitCode() != 0) {
    return QStringLiteral("failed: %1").arg(QString::fromUtf8(p.readAllStandardError()));
  }
  return png;
}

TEST(Loop, OpenSampleEditRunWatchCompareExport) {
  const QString cli = QStringLiteral(BUBBLESCOPE_CLI_PATH);
  ASSERT_TRUE(QFileInfo(cli).isExecutable()) << cli.toStdString() << " is not built";
  bubblescope::testing::TempDir dir;
  const QString trace = QString::fromStdString(dir.file("loop.db"));

  // A trace of a real run to open (single process, tiny model).
  {
    QProcess train;
    train.start(cli, {"train", "--model", "tiny", "--steps", "3", "--trace", trace});
    ASSERT_TRUE(train.waitForFinished(60000));
    ASSERT_EQ(train.exitCode(), 0) << train.readAllStandardError().toStdString();
  }

  ModalBoxCloser boxes;
  auto owned = std::make_unique<ProcessRunLauncher>(cli);
  QSignalSpy finished(owned.get(), &RunLauncher::finished);
  MainWindow window(std::move(owned));
  window.setHeadless(true);
  // A 1280 x 720 screen, less the desktop's panel and the title bar: the
  // whole loop runs in a window of that size.
  const QSize screen(1280, 720 - 70);
  window.resize(screen);
  window.show();
  ASSERT_TRUE(window.openFile(trace).isOk());
  QApplication::processEvents();
  EXPECT_EQ(window.size(), screen) << "the window's minimum is larger than the screen";
  ASSERT_EQ(window.runsModel()->rows().size(), 1u);
  const int64_t baseline = window.runsModel()->rows().front().id;
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return window.report() && window.report()->run.id == baseline; }, testing::kHangMs));

  // Run > Run again with changes: the shown run is kept to compare with.
  QAction* again = actionNamed(window, QObject::tr("Run &again with changes…"));
  ASSERT_NE(again, nullptr);
  again->trigger();
  EXPECT_EQ(window.baselineRunId(), baseline);

  // Samples menu: dp2-zero1.jsonc (the tiny model).
  LayoutEditor* editor = window.layoutEditor();
  auto* samples = editor->findChild<QToolButton*>("samples");
  ASSERT_NE(samples, nullptr);
  ASSERT_NE(samples->menu(), nullptr);
  emit samples->menu()->aboutToShow();
  QAction* sample = nullptr;
  for (QAction* a : samples->menu()->actions()) {
    if (a->text() == "dp2-zero1.jsonc") sample = a;
  }
  ASSERT_NE(sample, nullptr) << "the Samples menu lists the shipped samples";
  sample->trigger();
  EXPECT_EQ(editor->layout().dp, 2) << "the sample loaded";
  EXPECT_EQ(editor->layout().zeroStage, layout::ZeroStage::kOptimizer);

  // Edits: pp 2 with gpipe instead of dp 2, and a few bigger micro-batches.
  auto spin = [&](const char* key) { return editor->findChild<QSpinBox*>(key); };
  for (const char* key : {"dp", "pp", "micro_batches", "micro_batch_size", "steps"})
    ASSERT_NE(spin(key), nullptr) << key;
  spin("dp")->setValue(1);
  spin("pp")->setValue(2);
  auto* schedule = editor->findChild<QComboBox*>("schedule");
  ASSERT_NE(schedule, nullptr);
  const int gpipe = schedule->findText("gpipe");
  ASSERT_GE(gpipe, 0);
  schedule->setCurrentIndex(gpipe);
  auto* zero = editor->findChild<QComboBox*>("zero_stage");
  ASSERT_NE(zero, nullptr);
  zero->setCurrentIndex(0);
  spin("micro_batches")->setValue(8);
  spin("micro_batch_size")->setValue(16);
  spin("steps")->setValue(kSteps);
  const layout::Layout edited = editor->layout();
  EXPECT_EQ(edited.pp, 2);
  EXPECT_EQ(edited.schedule, layout::ScheduleKind::kGPipe);
  ASSERT_TRUE(editor->isValid()) << editor->problems().join("; ").toStdString();

  // The planner's costs measured from the shown run: the new run's once it
  // has ended.
  auto* costs = window.planner()->findChild<QComboBox*>("calibration");
  ASSERT_NE(costs, nullptr);
  costs->setCurrentIndex(costs->findData(PlannerPanel::kShownRunSource));
  ASSERT_GE(costs->currentIndex(), 0);

  // Run it from the editor's button, and watch the list and the timeline.
  auto* run = editor->findChild<QPushButton*>("run");
  ASSERT_NE(run, nullptr);
  const QRect runRect(run->mapTo(&window, QPoint(0, 0)), run->size());
  EXPECT_TRUE(window.rect().contains(runRect)) << "the Run button is off the window";
  std::set<int> stepsWhileRunning;  // step counts the app showed mid-run
  int64_t newRun = 0;
  bool timelineFollowed = false;
  QTimer watch;
  watch.setInterval(20);
  QObject::connect(&watch, &QTimer::timeout, [&] {
    for (const RunRow& r : window.runsModel()->rows()) {
      if (r.id == baseline) continue;
      newRun = r.id;
      if (r.health == storage::RunHealth::kRunning) stepsWhileRunning.insert(r.steps);
    }
    timelineFollowed |= newRun > 0 && window.timeline()->model()->run().id == newRun &&
                        window.timeline()->model()->run().health == storage::RunHealth::kRunning;
  });
  watch.start();
  run->click();
  ASSERT_TRUE(QTest::qWaitFor([&] { return finished.size() == 1; }, 90000));
  watch.stop();
  ASSERT_EQ(finished.at(0).at(0).toInt(), 0) << finished.at(0).at(1).toString().toStdString();
  ASSERT_GT(newRun, baseline);

  // The live run filled in: the list showed it running with a partial and
  // growing step count, and the timeline followed it while it ran.
  std::string seen;
  for (int s : stepsWhileRunning) seen += std::to_string(s) + " ";
  std::printf("step counts the app showed while the run ran: %s\n", seen.c_str());
  EXPECT_GE(stepsWhileRunning.size(), 2u) << "step counts seen while running: " << seen;
  EXPECT_TRUE(std::any_of(stepsWhileRunning.begin(), stepsWhileRunning.end(),
                          [](int s) { return s > 0 && s < kSteps; }))
      << "step counts seen while running: " << seen;
  EXPECT_TRUE(timelineFollowed);
  auto finishedRow = [&]() -> const RunRow* {
    for (const RunRow& r : window.runsModel()->rows()) {
      if (r.id == newRun && r.health == storage::RunHealth::kFinished) return &r;
    }
    return nullptr;
  };
  ASSERT_TRUE(QTest::qWaitFor([&] { return finishedRow() != nullptr; }, testing::kHangMs));
  EXPECT_EQ(finishedRow()->steps, kSteps);
  EXPECT_EQ(finishedRow()->worldSize, 2);
  // With the Run output dock open the window still fits the screen.
  QApplication::processEvents();
  EXPECT_LE(window.minimumSizeHint().width(), screen.width());
  EXPECT_LE(window.minimumSizeHint().height(), screen.height());
  EXPECT_EQ(window.size(), screen);

  // The planner measured the new run once it ended (not "Cannot measure").
  ASSERT_TRUE(QTest::qWaitFor(
      [&] {
        return window.planner()->calibration().has_value() &&
               window.planner()->calibration()->sourceRun == newRun;
      },
      testing::kHangMs));
  EXPECT_FALSE(window.planner()->statusText().contains("Cannot measure"))
      << window.planner()->statusText().toStdString();

  // Compare opened on the kept run and the new one, and filled its table.
  EXPECT_EQ(window.tabs()->currentIndex(), MainWindow::kCompareTab);
  CompareView* compare = window.compareView();
  EXPECT_EQ(compare->runA(), baseline);
  EXPECT_EQ(compare->runB(), newRun);
  ASSERT_TRUE(QTest::qWaitFor([&] { return compare->table()->rowCount() > 0; }, testing::kHangMs));
  bool ppRow = false;
  for (const analysis::ComparisonRow& r : compare->table()->rows()) {
    if (r.metric == "pp") {
      ppRow = true;
      EXPECT_EQ(r.a, "1");
      EXPECT_EQ(r.b, "2");
    }
  }
  EXPECT_TRUE(ppRow) << "the table compares the layouts";

  // Export the new run's timeline, PNG and SVG, as File > Export does.
  window.tabs()->setCurrentIndex(MainWindow::kTimelineTab);
  ASSERT_TRUE(QTest::qWaitFor(
      [&] {
        return window.timeline()->model()->run().id == newRun &&
               window.timeline()->model()->caughtUp();
      },
      testing::kHangMs));
  const QString png = QString::fromStdString(dir.file("timeline.png"));
  const QString svg = QString::fromStdString(dir.file("timeline.svg"));
  ASSERT_TRUE(window.exportTimelineTo(png).isOk());
  ASSERT_TRUE(window.exportTimelineTo(svg).isOk());
  const QImage picture(png);
  ASSERT_FALSE(picture.isNull());
  EXPECT_GT(pixelsOf(picture, colourOf(trace_model::EventKind::kForward)), 20);
  EXPECT_EQ(solidBlackBlock(picture, 12), QPoint(-1, -1));
  EXPECT_TRUE(boxes.texts().isEmpty()) << boxes.texts().join("; ").toStdString();

  // Open another file: its run only, in the list, the status bar and the
  // timeline; compare lets go of the old file's runs.
  const QString otherTrace = QString::fromStdString(dir.file("other.db"));
  {
    QProcess train;
    train.start(cli, {"train", "--model", "tiny", "--steps", "2", "--trace", otherTrace});
    ASSERT_TRUE(train.waitForFinished(60000));
    ASSERT_EQ(train.exitCode(), 0) << train.readAllStandardError().toStdString();
  }
  ASSERT_TRUE(window.openFile(otherTrace).isOk());
  ASSERT_EQ(window.runsModel()->rowCount(), 1);
  EXPECT_EQ(window.timeline()->model()->run().id, window.runsModel()->rows().front().id);
  EXPECT_EQ(window.compareView()->runA(), 0);
  QString status;
  for (QLabel* l : window.statusBar()->findChildren<QLabel*>()) status += l->text() + "\n";
  EXPECT_TRUE(status.contains("other.db · 1 run\n")) << status.toStdString();
  EXPECT_FALSE(status.contains("is not in"))
      << "a stale row was selected: " << status.toStdString();
  // The tabs follow: the new file's run is analysed, the old file's report
  // gone from the charts, metrics and kernels (issue 31 item 1).
  const int64_t otherRun = window.runsModel()->rows().front().id;
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return window.report() && window.report()->run.id == otherRun; }, testing::kHangMs));
  // The old file's runs had 3 steps (the one opened) and kSteps on 2 ranks.
  EXPECT_EQ(window.report()->run.info.worldSize, 1);
  EXPECT_EQ(window.report()->steps.size(), 2u) << "a report of the old file's run";
  EXPECT_EQ(window.metrics()->rowCount(), 1) << "one rank: the new file's run";
  EXPECT_TRUE(window.charts()->summaryText().contains(QStringLiteral("run %1").arg(otherRun)))
      << window.charts()->summaryText().toStdString();
  // File > Reload runs (F5) keeps it so.
  QAction* reload = actionNamed(window, QObject::tr("Re&load runs"));
  ASSERT_NE(reload, nullptr);
  reload->trigger();
  QApplication::processEvents();
  EXPECT_EQ(window.runsModel()->rowCount(), 1);
  // Still the 1280 x 720 screen's window, whatever tab is shown.
  for (int tab = 0; tab < window.tabs()->count(); ++tab) {
    window.tabs()->setCurrentIndex(tab);
    QApplication::processEvents();
    EXPECT_LE(window.minimumSizeHint().width(), screen.width()) << "tab " << tab;
    EXPECT_LE(window.minimumSizeHint().height(), screen.height()) << "tab " << tab;
    EXPECT_EQ(window.size(), screen) << "tab " << tab;
  }
  EXPECT_TRUE(boxes.texts().isEmpty()) << boxes.texts().join("; ").toStdString();

  QString tool;
  const QString rendered =
      renderSvgElsewhere(svg, QString::fromStdString(dir.file("svg.png")), &tool);
  if (rendered.isEmpty()) {
    GTEST_SKIP() << "neither rsvg-convert (librsvg2-bin) nor ImageMagick's convert is "
                    "installed: the SVG was written but not rendered by another renderer";
  }
  ASSERT_FALSE(rendered.startsWith("failed"))
      << tool.toStdString() << " " << rendered.toStdString();
  std::printf("the SVG rendered by %s\n", qPrintable(tool));
  const QImage other(rendered);
  ASSERT_FALSE(other.isNull()) << tool.toStdString();
  EXPECT_GT(other.width(), 600);
  EXPECT_GT(pixelsOf(other, colourOf(trace_model::EventKind::kForward)), 20)
      << "the spans are drawn, in their colours";
  const QPoint black = solidBlackBlock(other, 12);
  EXPECT_EQ(black, QPoint(-1, -1))
      << tool.toStdString() << " drew a solid-black area at " << black.x() << "," << black.y();
}

}  // namespace
}  // namespace bubblescope::gui
