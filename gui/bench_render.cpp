#include "gui/bench_render.h"

#include <sys/resource.h>
#include <time.h>

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QImage>
#include <QTimer>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <vector>

#include "gui/timeline_panel.h"
#include "storage/trace_reader.h"

namespace bubblescope::gui {

namespace {

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5));
  return v[i];
}

double peakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // Linux: KiB
}

// Anonymous resident memory (/proc/self/status RssAnon): what the app
// allocated, without the trace file's pages that the reader maps (those are
// page cache that the kernel can drop; ru_maxrss counts them).
double anonRssMb() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "RssAnon:") {
      double kb = 0;
      status >> kb;
      return kb / 1024.0;
    }
    status.ignore(1 << 16, '\n');
  }
  return 0.0;
}

// CPU time of `clock` in seconds: on a shared, loaded machine the wall
// times above also count the time other processes held the cores; these
// count only this process's (or this thread's) own work.
double cpuS(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + t.tv_nsec / 1e9;
}

struct FrameTimes {
  double wallMs = 0, cpuMs = 0;
};

FrameTimes renderMs(TimelineView* view, QImage& image) {
  QElapsedTimer t;
  const double cpu0 = cpuS(CLOCK_THREAD_CPUTIME_ID);
  t.start();
  view->render(&image);
  return {t.nsecsElapsed() / 1e6, (cpuS(CLOCK_THREAD_CPUTIME_ID) - cpu0) * 1e3};
}

}  // namespace

int benchRender(const BenchRenderOptions& o, std::ostream& out) {
  const QString file = o.file;
  out << "file: " << file.toStdString() << "\n";

  QElapsedTimer openTimer;
  openTimer.start();
  const double openCpu0 = cpuS(CLOCK_PROCESS_CPUTIME_ID);
  auto reader = storage::TraceReader::open(file.toStdString());
  if (!reader.isOk()) {
    out << "error: " << reader.status().message() << "\n";
    return 1;
  }
  auto runs = (*reader)->runs();
  if (!runs.isOk() || runs->empty()) {
    out << "error: " << (runs.isOk() ? "the file holds no runs" : runs.status().message()) << "\n";
    return 1;
  }
  const int64_t runId = o.runId > 0 ? o.runId : runs->back().id;
  TimelinePanel panel;
  panel.resize(o.width + 260, o.height + 40);
  TimelineView* view = panel.view();
  view->resize(o.width, o.height);
  if (Status s = panel.showRun(reader->get(), runId); !s.isOk()) {
    out << "error: " << s.message() << "\n";
    return 1;
  }
  QImage image(view->size(), QImage::Format_ARGB32_Premultiplied);
  view->render(&image);
  out << "open_s: " << openTimer.nsecsElapsed() / 1e9 << "\n";
  out << "open_cpu_s: " << cpuS(CLOCK_PROCESS_CPUTIME_ID) - openCpu0 << "\n";
  double anonPeakMb = anonRssMb();
  out << "events: " << panel.model()->run().eventCount << "\n";
  out << "ranks: " << panel.model()->run().info.worldSize << "\n";

  // The overview is indexed on the model's own thread while this (the GUI)
  // thread paints the whole run about 60 times a second, as a window showing
  // the run would while the user waits.
  TimelineModel* model = panel.model();
  QElapsedTimer indexTimer;
  indexTimer.start();
  std::vector<double> indexingFrames;
  QTimer paint;
  paint.setInterval(16);
  QObject::connect(&paint, &QTimer::timeout, [&] {
    indexingFrames.push_back(renderMs(view, image).wallMs);
    anonPeakMb = std::max(anonPeakMb, anonRssMb());
  });
  QEventLoop indexing;
  QObject::connect(model, &TimelineModel::indexingFinished, &indexing, &QEventLoop::quit);
  model->startIndexing();
  paint.start();
  if (model->indexing()) indexing.exec();
  paint.stop();
  if (!model->indexError().isOk()) {
    out << "error: " << model->indexError().message() << "\n";
    return 1;
  }
  out << "index_s: " << indexTimer.nsecsElapsed() / 1e9 << "\n";
  out << "index_cpu_s: " << model->indexingCpuSeconds() << "\n";
  out << "indexed_events: " << model->ingestProgress() * model->run().eventCount << "\n";
  out << "frames_while_indexing: " << indexingFrames.size() << "\n";
  out << "frame_ms_p95_while_indexing: " << percentile(indexingFrames, 0.95) << "\n";
  anonPeakMb = std::max(anonPeakMb, anonRssMb());

  const double start = panel.model()->startNs(), end = panel.model()->endNs();
  const double span = end - start;
  const struct {
    const char* name;
    double width;
  } levels[] = {{"zoomed_out", span}, {"mid", span / 40}, {"deep", span / 4000}};
  for (const auto& level : levels) {
    const double t0 = start + (span - level.width) / 2;
    view->setFollowing(false);
    view->setViewRange(t0, t0 + level.width);
    // The first frame of a level: a window too big to fetch in a frame is
    // asked for in the background and this frame draws the overview
    // (TimelineModel::inlineFetchEvents); fetch_ms is until the window is
    // taken in (the first frame's time included).
    QElapsedTimer fetchTimer;
    fetchTimer.start();
    const double first = renderMs(view, image).wallMs;
    const bool background = model->windowPending();
    model->waitForWindow();
    const double fetch = fetchTimer.nsecsElapsed() / 1e6;
    std::vector<double> times, cpuTimes, modelTimes;
    for (int i = 0; i < o.frames; ++i) {
      // Pan a few pixels each frame: every frame is painted anew, within the
      // window already fetched.
      view->panByPixels(i % 2 == 0 ? 3 : -2);
      const FrameTimes frame = renderMs(view, image);
      times.push_back(frame.wallMs);
      cpuTimes.push_back(frame.cpuMs);
      // The same frame from the model alone (a view a hair longer bypasses
      // its frame cache; 1e-3 ns is lost at imported traces' epoch times).
      const TimelinePlacement at = view->placement();
      const auto [first, last] = view->visibleRows();
      QElapsedTimer m;
      m.start();
      (void)panel.model()->frame(at.t0Ns, std::nextafter(at.t1Ns, HUGE_VAL), at.plot.width(), first,
                                 last);
      modelTimes.push_back(m.nsecsElapsed() / 1e6);
    }
    out << "model_ms_p50_" << level.name << ": " << percentile(modelTimes, 0.5) << "\n";
    out << "first_frame_ms_" << level.name << ": " << first << "\n";
    out << "fetch_ms_" << level.name << ": " << fetch << (background ? " (background)" : "")
        << "\n";
    out << "frame_ms_p50_" << level.name << ": " << percentile(times, 0.5) << "\n";
    out << "frame_ms_p95_" << level.name << ": " << percentile(times, 0.95) << "\n";
    out << "frame_cpu_ms_p95_" << level.name << ": " << percentile(cpuTimes, 0.95) << "\n";
    anonPeakMb = std::max(anonPeakMb, anonRssMb());
  }
  out << "peak_rss_mb: " << peakRssMb() << "\n";
  out << "anon_rss_mb_max: " << anonPeakMb << "\n";
  out << "file_mb: " << QFileInfo(file).size() / (1024.0 * 1024.0) << "\n";
  panel.clear();
  return 0;
}

}  // namespace bubblescope::gui
