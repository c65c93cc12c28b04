#include "gui/teaching_bench.h"

#include <QElapsedTimer>
#include <QImage>
#include <QSlider>
#include <algorithm>
#include <ctime>
#include <vector>

#include "gui/teaching_lab.h"

namespace bubblescope::gui {
namespace {

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * (v.size() - 1) + 0.5)];
}

// CPU time of the calling thread, in ms: what a frame costs, whatever else
// the machine runs.
double threadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

}  // namespace

int benchTeaching(std::ostream& out, int frames) {
  TeachingLab lab;
  lab.resize(1600, 900);
  lab.show();
  QImage image(lab.size(), QImage::Format_ARGB32_Premultiplied);
  auto* ratio = lab.findChild<QSlider*>("lab_b");
  for (layout::ScheduleKind kind : layout::allScheduleKinds()) {
    layout::Layout l;
    l.schedule = kind;
    l.pp = 8;
    l.microBatches = 32;
    l.virtualChunks = 2;
    if (Status s = lab.simulate(l); !s.isOk()) {
      out << "bench-teaching: " << s.message() << "\n";
      return 1;
    }
    std::vector<double> ms, cpuMs;
    for (int i = 0; i < frames; ++i) {
      QElapsedTimer t;
      t.start();
      const double cpu0 = threadCpuMs();
      ratio->setValue(100 + (i % 50) * 2);  // B / F from 1.00 to 1.98, as a drag does
      lab.render(&image);
      cpuMs.push_back(threadCpuMs() - cpu0);
      ms.push_back(t.nsecsElapsed() / 1e6);
    }
    const char* name = layout::scheduleKindName(kind);
    out << name << ".ops: " << lab.model().order().size() << "\n";
    out << name << ".frame_ms_p50: " << percentile(ms, 0.5) << "\n";
    out << name << ".frame_ms_p95: " << percentile(ms, 0.95) << "\n";
    out << name << ".frame_ms_max: " << *std::max_element(ms.begin(), ms.end()) << "\n";
    out << name << ".frame_cpu_ms_p50: " << percentile(cpuMs, 0.5) << "\n";
    out << name << ".frame_cpu_ms_p95: " << percentile(cpuMs, 0.95) << "\n";
  }
  return 0;
}

}  // namespace bubblescope::gui
