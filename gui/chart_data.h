// ChartData: the numbers each chart of a RunReport shows, as plain vectors
// (no plotting code), so that tests can check them and ChartsPanel only
// draws them.
//
// Units: ratios are shares of step time in [0, 1]; times are ms per step
// (the rank's summed step time divided by its step count); memory in MiB.
// Unknown values (std::nullopt in the report) are NaN, which the charts skip.
#pragma once

#include <QString>
#include <QStringList>
#include <cstdint>
#include <vector>

#include "storage/analysis/run_report.h"

namespace bubblescope::gui {

// One named series of values, one per key.
struct ChartSeries {
  QString name;
  std::vector<double> values;
};

// Bars or lines over keys 0..n-1 labelled `labels`; `ids` are the ranks or
// stages (or steps) the keys stand for.
struct ChartData {
  QString title;
  QString valueLabel;
  QStringList labels;
  std::vector<int32_t> ids;
  std::vector<ChartSeries> series;  // drawn in this order (stacked when the chart stacks)

  const ChartSeries* find(const QString& name) const;
};

// Per rank: "utilisation", then "comm dp", "comm tp", ... (time share per
// parallel dimension that has any communication; a span counts once in its
// dimension; "comm other" for spans without one), and "comm ratio" (the union,
// as the report defines it).
ChartData utilisationChart(const analysis::RunReport& report);
// Per stage: "measured" ((wait + idle) / step, mean of its ranks), for an
// oversubscribed run with an ideal-hardware replay "replayed" (the report's
// bubble_replayed), and "formula" (the schedule's formula, NaN when
// unknown). No series when the run has fewer than two stages (pp = 1 has no
// pipeline).
ChartData bubbleChart(const analysis::RunReport& report);
// Per rank, stacked, ms per step: "compute", "exposed comm", "wait", "idle";
// they add up to the step time.
ChartData breakdownChart(const analysis::RunReport& report);
// Per step: "loss".
ChartData lossChart(const analysis::RunReport& report);

// One run's loss per step, labelled for a chart of several runs' losses.
struct LossCurve {
  int64_t runId = 0;
  QString label;  // "run 3 · dp4 tp1 pp1 · topk:0.01 · small" (run_rows.h layoutSummary)
  std::vector<int32_t> steps;  // ascending
  std::vector<double> losses;  // [steps.size()]; NaN unknown
};
LossCurve lossCurve(const analysis::RunReport& report);
// The compared runs' losses on one plot: keys are every step any curve has,
// ascending; one series per curve named by its label (in the curves'
// order), NaN at a step its run does not have.
ChartData lossChart(const std::vector<LossCurve>& curves);
// Per rank, stacked MiB of each category's measured peak ("parameters", ...);
// "formula" is the ZeRO formula's model states (parameters + gradients +
// optimizer) when known, else NaN.
ChartData memoryChart(const analysis::RunReport& report);

}  // namespace bubblescope::gui
