// bubblescope: the desktop app. `bubblescope [FILE]` opens a trace file;
// `bubblescope --bench-render FILE` prints render timings; `bubblescope
// --bench-teaching` the teaching lab's frame time.
#include <QApplication>
#include <QCommandLineParser>
#include <QMessageBox>
#include <QSpinBox>
#include <QTimer>
#include <iostream>

#include "gui/bench_render.h"
#include "gui/layout_editor.h"
#include "gui/main_window.h"
#include "gui/palette.h"
#include "gui/render_trace.h"
#include "gui/screenshot.h"
#include "gui/teaching_bench.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("Bubblescope");
  QApplication::setApplicationName("bubblescope");
  QApplication::setApplicationVersion("0.1.0");
  Q_INIT_RESOURCE(bubblescope);
  QApplication::setWindowIcon(QIcon(":/bubblescope/icon.svg"));

  QCommandLineParser parser;
  parser.setApplicationDescription("Timeline and layout workbench for parallel training traces");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument("file", "Trace file to open (.db)", "[FILE]");
  QCommandLineOption bench("bench-render",
                           "Print render timings for FILE (or the trace --events/--ranks make)");
  QCommandLineOption benchEvents(
      "events", "With --bench-render and no FILE: a simulated trace of N events", "N");
  QCommandLineOption benchRanks("ranks", "With --events: on this many ranks", "R", "64");
  QCommandLineOption run("run", "Run id to show (default: the last run)", "ID");
  QCommandLineOption shot("screenshot", "Render the window on FILE to PNG and exit", "PNG");
  QCommandLineOption shotWhat(
      "screenshot-part",
      "window, timeline, layout, charts, metrics, kernels, kernel-timeline (the timeline with the "
      "Kernels tab's first row highlighted), teaching, planner (the window with the "
      "planner, its best candidate loaded), cluster-planner (the planner's GPU cluster page) or "
      "export (the timeline as File > Export writes it, PNG or SVG)",
      "PART", "window");
  QCommandLineOption step("step", "With --screenshot: zoom the timeline to this step", "N", "-1");
  QCommandLineOption zoom("zoom", "With --screenshot: zoom in by this factor", "X", "1");
  QCommandLineOption select("select-span", "With --screenshot: show a span's details");
  QCommandLineOption size("size", "With --screenshot: window size", "WxH", "1500x900");
  QCommandLineOption layoutFile("layout", "With --screenshot: load this layout", "JSON");
  QCommandLineOption edit("edit", "With --screenshot: set a layout field, e.g. tp=3", "KEY=VALUE");
  QCommandLineOption compare("compare", "With --screenshot: compare runs A,B", "A,B");
  QCommandLineOption mark("mark-rank", "With --screenshot: mark a rank as a chart click does", "N",
                          "-1");
  QCommandLineOption indexed("indexed-events",
                             "With --screenshot: stop indexing after N events (the view while a "
                             "big file is still being indexed)",
                             "N", "-1");
  QCommandLineOption labSteps(
      "lab-steps", "With --screenshot-part teaching: show only the first N ops", "N", "-1");
  QCommandLineOption planMemory(
      "plan-memory", "With --screenshot-part planner: the memory per rank, GiB", "GiB", "0");
  QCommandLineOption idealReplay(
      "ideal-replay", "With --screenshot: the timeline draws the run's ideal-hardware replay");
  QCommandLineOption planWorld("plan-world",
                               "With --screenshot-part planner: the world size to plan", "N", "-1");
  QCommandLineOption benchTeaching("bench-teaching",
                                   "Print the teaching lab's frame time (p = 8, m = 32)");
  QCommandLineOption paletteOpt("palette", "system (default), light or dark", "NAME", "system");
  parser.addOptions({bench, run, shot, shotWhat, step, zoom, select, size, layoutFile, edit,
                     compare, mark, indexed, labSteps, planWorld, planMemory, idealReplay,
                     benchTeaching, paletteOpt, benchEvents, benchRanks});
  parser.process(app);
  const QStringList files = parser.positionalArguments();

  if (parser.isSet(bench)) {
    bubblescope::gui::BenchRenderOptions options;
    if (!files.isEmpty()) {
      options.file = files.first();
    } else if (parser.isSet(benchEvents)) {
      bool eventsOk = false, ranksOk = false;
      const qint64 events = parser.value(benchEvents).toLongLong(&eventsOk);
      const int ranks = parser.value(benchRanks).toInt(&ranksOk);
      if (!eventsOk || !ranksOk) {
        std::cerr << "bubblescope: --events and --ranks take whole numbers\n";
        return 2;
      }
      auto made = bubblescope::gui::ensureRenderTrace(events, ranks, std::cout);
      if (!made.isOk()) {
        std::cerr << "bubblescope: " << made.status().message() << "\n";
        return 1;
      }
      options.file = *made;
    } else {
      std::cerr << "bubblescope: --bench-render needs a trace FILE (e.g. from bubblescope-cli "
                   "simulate) or --events N [--ranks R]\n";
      return 2;
    }
    options.runId = parser.value(run).toLongLong();
    return bubblescope::gui::benchRender(options, std::cout);
  }

  if (parser.isSet(benchTeaching)) return bubblescope::gui::benchTeaching(std::cout);

  if (parser.value(paletteOpt) != "system") {
    bubblescope::gui::applyPalette(parser.value(paletteOpt) == "dark");
  }
  bubblescope::gui::MainWindow window;
  const bool headless = parser.isSet(shot);  // never a dialog: errors go to stderr
  window.setHeadless(headless);
  window.show();
  if (!files.isEmpty()) {
    const bubblescope::Status s = window.openFile(files.first());
    if (!s.isOk()) {
      std::cerr << "bubblescope: " << s.message() << "\n";
      if (headless) return 1;
      QMessageBox::warning(&window, "Open trace", QString::fromStdString(s.message()));
    } else if (parser.isSet(run)) {
      const bubblescope::Status r = window.showRun(parser.value(run).toLongLong());
      if (!r.isOk()) std::cerr << "bubblescope: " << r.message() << "\n";
    }
  }
  if (parser.isSet(shot)) {
    if (parser.isSet(layoutFile)) {
      const auto s = window.layoutEditor()->loadFile(parser.value(layoutFile));
      if (!s.isOk()) std::cerr << "bubblescope: " << s.message() << "\n";
    }
    for (const QString& kv : parser.values(edit)) {
      const QStringList parts = kv.split('=');
      auto* spin = window.layoutEditor()->findChild<QSpinBox*>(parts.value(0));
      if (spin != nullptr) spin->setValue(parts.value(1).toInt());
    }
    bubblescope::gui::ScreenshotOptions o;
    o.out = parser.value(shot);
    o.what = parser.value(shotWhat);
    o.step = parser.value(step).toInt();
    o.zoom = parser.value(zoom).toDouble();
    o.selectFirstSpan = parser.isSet(select);
    o.markRank = parser.value(mark).toInt();
    o.labSteps = parser.value(labSteps).toInt();
    o.planWorld = parser.value(planWorld).toInt();
    o.planMemoryGiB = parser.value(planMemory).toDouble();
    o.idealReplay = parser.isSet(idealReplay);
    o.indexedEvents = parser.value(indexed).toLongLong();
    if (parser.isSet(compare)) {
      const QStringList ab = parser.value(compare).split(',');
      o.compareA = ab.value(0).toLongLong();
      o.compareB = ab.value(1).toLongLong();
    }
    const QStringList wh = parser.value(size).split('x');
    if (wh.size() == 2) {
      o.width = wh[0].toInt();
      o.height = wh[1].toInt();
    }
    return bubblescope::gui::saveScreenshot(window, o);
  }
  return app.exec();
}
