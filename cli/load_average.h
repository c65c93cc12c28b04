// loadAverage(): the machine's 1-minute load average (/proc/loadavg), -1 when
// unreadable. Benches print it before and after their measurements: other
// processes on the machine stretch the wall times they measure.
#pragma once

#include <fstream>

namespace bubblescope::cli {

inline double loadAverage() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  in >> load;
  return in ? load : -1.0;
}

}  // namespace bubblescope::cli
