#include "gui/prediction_format.h"

#include <QLocale>
#include <QObject>
#include <QStringList>
#include <algorithm>
#include <utility>
#include <vector>

#include "planning/planner.h"
#include "planning/prediction_summary.h"
#include "gui/time_format.h"

namespace bubblescope::gui {

layout::Calibration calibrationFor(const std::optional<layout::Calibration>& measured,
                                   const layout::ModelConfig& model) {
  return measured ? *measured : layout::flopsCalibration(model, kFlopsEstimatePerSecond);
}

double totalExposedCommNs(const layout::Prediction& p) {
  double sum = 0;
  for (const auto& [dim, ns] : p.exposedCommNs) sum += ns;
  return sum;
}

double peakMemoryBytes(const layout::Prediction& p) {
  double peak = 0;
  for (double m : p.memoryBytes) peak = std::max(peak, m);
  return peak;
}

QString exposedCommText(const layout::Prediction& p) {
  std::vector<std::pair<double, std::string>> dims;
  for (const auto& [dim, ns] : p.exposedCommNs) {
    if (ns > 0) dims.emplace_back(ns, dim);
  }
  std::sort(dims.rbegin(), dims.rend());
  QStringList parts;
  for (const auto& [ns, dim] : dims) {
    parts << QStringLiteral("%1 %2").arg(QString::fromStdString(dim), formatDuration(ns));
  }
  return parts.isEmpty() ? QStringLiteral("none") : parts.join(QStringLiteral(" · "));
}

QString tokensPerSecondText(double tokensPerSecond) {
  return QLocale(QLocale::English).toString(tokensPerSecond, 'f', 0);
}

QString predictionLine(const layout::Prediction& p) {
  return QObject::tr(
             "step %1 · %2 tokens/s · bubble %3% (worst stage) · exposed comm: %4 · "
             "memory %5 per rank (largest stage)")
      .arg(formatDuration(p.stepNs), tokensPerSecondText(p.tokensPerSecond))
      .arg(worstBubble(p) * 100, 0, 'f', 1)
      .arg(exposedCommText(p), formatBytes(static_cast<int64_t>(peakMemoryBytes(p))));
}

QStringList shownWarnings(const std::vector<std::string>& warnings, bool measured) {
  QStringList lines;
  if (!measured) return lines;
  for (const std::string& w : warnings) {
    if (lines.size() == kMaxWarnings) {
      lines << QObject::tr("(%1 more)").arg(warnings.size() - kMaxWarnings);
      break;
    }
    lines << QString::fromStdString(w);
  }
  return lines;
}

QString layoutShortName(const layout::Layout& l) {
  QStringList parts{QStringLiteral("dp%1 tp%2 pp%3").arg(l.dp).arg(l.tp).arg(l.pp)};
  if (layout::shardsOptimizer(l.zeroStage)) {
    parts << QStringLiteral("zero%1").arg(layout::zeroStageNumber(l.zeroStage));
  }
  QString schedule;
  if (l.pp > 1) {
    schedule = QString::fromUtf8(layout::scheduleKindName(l.schedule));
    if (l.schedule == layout::ScheduleKind::kInterleaved) {
      schedule += QStringLiteral(" v%1").arg(l.virtualChunks);
    }
    schedule += ' ';
  }
  parts << schedule + QStringLiteral("m%1").arg(l.microBatches);
  if (l.microBatchSize != 1) parts << QStringLiteral("b%1").arg(l.microBatchSize);
  if (l.recompute) parts << QStringLiteral("recompute");
  return parts.join(QStringLiteral(" · "));
}

}  // namespace bubblescope::gui
