// `bubblescope FILE --screenshot OUT.png`: renders the main window on FILE
// offscreen (after indexing the shown run completely) and saves it, for
// scripts/screenshots.sh and the docs.
#pragma once

#include <QString>
#include <cstdint>

namespace bubblescope::gui {

class MainWindow;

struct ScreenshotOptions {
  QString out;              // PNG path
  QString what = "window";  // window | timeline | layout | charts | metrics | kernels |
                            // kernel-timeline | compare | teaching | planner | chart:NAME
  int step = -1;            // >= 0: zoom the timeline to this step
  double zoom = 1.0;        // > 1: zoom in around the centre of the view
  int width = 1500, height = 900;
  bool selectFirstSpan = false;        // show a span in the detail panel
  int64_t compareA = 0, compareB = 0;  // > 0: open compare on these runs
  int markRank = -1;                   // >= 0: mark this rank as a chart click does
  int64_t indexedEvents = -1;          // >= 0: stop indexing there (a file still being indexed)
  int labSteps = -1;                   // what == "teaching": >= 0 shows only the first labSteps ops
  bool idealReplay = false;            // the timeline draws the run's ideal-hardware replay
  int planWorld = -1;                  // what == "planner": > 0 plans this world size
  double planMemoryGiB = 0;            // what == "planner": > 0 is the memory per rank
};

// Returns the process exit code (0: written).
int saveScreenshot(MainWindow& window, const ScreenshotOptions& options);

}  // namespace bubblescope::gui
