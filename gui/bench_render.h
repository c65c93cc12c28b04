// `bubblescope --bench-render [FILE]`: how fast the timeline paints.
//
// Opens FILE (or generates a synthetic trace of `events` events on 64 ranks
// into a temporary file), times the first painted frame after open, indexes
// the run's overview, then paints frames at three zoom levels and prints
// `key: value` lines: open_s, index_s, frame_ms_p50/p95 per level
// (zoomed_out, mid, deep), fetch_ms per level (the first frame of a level,
// which fetches its window), peak_rss_mb. Runs offscreen; needs a
// QApplication.
#pragma once

#include <QString>
#include <cstdint>
#include <ostream>

namespace bubblescope::gui {

struct BenchRenderOptions {
  QString file;                    // empty: generate one
  int64_t events = 10'000'000;     // for the generated trace
  int64_t runId = 0;               // 0: the file's last run
  int frames = 40;                 // per zoom level
  int width = 1600, height = 900;  // of the timeline view
};

// Returns the process exit code.
int benchRender(const BenchRenderOptions& options, std::ostream& out);

}  // namespace bubblescope::gui
