// `bubblescope --bench-render FILE`: how fast the timeline paints.
//
// Opens FILE (e.g. a simulated run from `bubblescope-cli simulate`), times the first painted frame
// after open, indexes the run's overview in the background (TimelineModel::startIndexing) while
// painting the whole run every 16 ms, then paints frames at three zoom levels and prints `key:
// value` lines: open_s, index_s (until the indexing thread has caught up),
// frame_ms_p95_while_indexing, frame_ms_p50/p95 per level (zoomed_out, mid, deep), per level
// first_frame_ms (the first frame of the level) and fetch_ms (until its window is in: fetched in
// that frame, or on the fetch thread, "(background)", while that frame drew the overview),
// peak_rss_mb, anon_rss_mb_max; and
// open_cpu_s, index_cpu_s (the indexing thread's), frame_cpu_ms_p95 per level: the CPU time of
// the same work, which a loaded machine does not inflate. Runs offscreen; needs a QApplication
// (and its event loop, which it runs while indexing).
#pragma once

#include <QString>
#include <cstdint>
#include <ostream>

namespace bubblescope::gui {

struct BenchRenderOptions {
  QString file;                    // the trace file
  int64_t runId = 0;               // 0: the file's last run
  int frames = 40;                 // per zoom level
  int width = 1600, height = 900;  // of the timeline view
};

// Returns the process exit code.
int benchRender(const BenchRenderOptions& options, std::ostream& out);

}  // namespace bubblescope::gui
