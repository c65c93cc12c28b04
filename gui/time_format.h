// Human-readable durations and byte counts for labels and tooltips.
#pragma once

#include <QString>
#include <cstdint>

namespace bubblescope::gui {

// "850 ns", "12.3 µs", "4.56 ms", "1.234 s" (3 significant digits or more).
QString formatDuration(double ns);
// "512 B", "1.5 KiB", "3.2 MiB", "1.1 GiB".
QString formatBytes(int64_t bytes);
// Ruler tick spacing: the 1-2-5 multiple of a power of ten that is at least
// minNs.
double niceTickNs(double minNs);

}  // namespace bubblescope::gui
