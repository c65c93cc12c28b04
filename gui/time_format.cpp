#include "gui/time_format.h"

#include <algorithm>
#include <cmath>

namespace bubblescope::gui {

QString formatDuration(double ns) {
  const double a = std::fabs(ns);
  auto fmt = [](double v, const char* unit) {
    const int decimals = std::fabs(v) >= 100 ? 0 : (std::fabs(v) >= 10 ? 1 : 2);
    return QString::number(v, 'f', decimals) + QString::fromUtf8(unit);
  };
  if (a < 1e3) return fmt(ns, " ns");
  if (a < 1e6) return fmt(ns / 1e3, " µs");
  if (a < 1e9) return fmt(ns / 1e6, " ms");
  return fmt(ns / 1e9, " s");
}

QString formatBytes(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) return QStringLiteral("%1 B").arg(bytes);
  if (b < 1024.0 * 1024) return QStringLiteral("%1 KiB").arg(b / 1024, 0, 'f', 1);
  if (b < 1024.0 * 1024 * 1024) return QStringLiteral("%1 MiB").arg(b / (1024.0 * 1024), 0, 'f', 1);
  return QStringLiteral("%1 GiB").arg(b / (1024.0 * 1024 * 1024), 0, 'f', 2);
}

QString formatTickLabel(double tNs, double tickNs, double maxAbsNs) {
  if (std::fabs(tNs) < tickNs * 1e-6) return QStringLiteral("0");
  struct Unit {
    double ns;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{1e9, " s"}, {1e6, " ms"}, {1e3, " µs"}, {1, " ns"}};
  const Unit* unit = &kUnits[3];
  for (const Unit& u : kUnits) {
    if (std::fabs(maxAbsNs) >= u.ns) {
      unit = &u;
      break;
    }
  }
  // Decimals that tell two ticks apart: 0.5 ms ticks need one, 20 ms in s two.
  const int decimals =
      std::clamp(static_cast<int>(std::ceil(-std::log10(tickNs / unit->ns) - 1e-9)), 0, 9);
  return QString::number(tNs / unit->ns, 'f', decimals) + QString::fromUtf8(unit->name);
}

double niceTickNs(double minNs) {
  if (!(minNs > 0)) return 1.0;
  const double p = std::pow(10.0, std::floor(std::log10(minNs)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= minNs) return m * p;
  }
  return 10.0 * p;
}

}  // namespace bubblescope::gui
