// Human-readable durations and byte counts for labels and tooltips.
#pragma once

#include <QString>
#include <cstdint>

namespace bubblescope::gui {

// "850 ns", "12.3 µs", "4.56 ms", "1.234 s" (3 significant digits or more).
QString formatDuration(double ns);
// "512 B", "1.5 KiB", "3.2 MiB", "1.1 GiB".
QString formatBytes(int64_t bytes);
// A ruler label: every label of one view shares a unit (that of the largest
// time in view, maxAbsNs) and as many decimals as the tick spacing needs in
// it: "0", "0.5 ms", "1.0 ms"; "59.98 s" at 20 ms ticks. The origin is "0".
QString formatTickLabel(double tNs, double tickNs, double maxAbsNs);
// Ruler tick spacing: the 1-2-5 multiple of a power of ten that is at least
// minNs.
double niceTickNs(double minNs);

}  // namespace bubblescope::gui
