#include "gui/chart_data.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "gui/run_rows.h"

namespace bubblescope::gui {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double orNaN(std::optional<double> v) {
  return v ? *v : kNaN;
}

QString rankLabel(const analysis::RankReport& r) {
  return QStringLiteral("%1").arg(r.info.rank);
}

void rankKeys(const analysis::RunReport& report, ChartData& c) {
  for (const auto& r : report.ranks) {
    c.labels << rankLabel(r);
    c.ids.push_back(r.info.rank);
  }
}

}  // namespace

const ChartSeries* ChartData::find(const QString& name) const {
  for (const ChartSeries& s : series) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

ChartData utilisationChart(const analysis::RunReport& report) {
  ChartData c;
  c.title = QStringLiteral("Utilisation and communication per rank");
  c.valueLabel = QStringLiteral("share of step time");
  rankKeys(report, c);
  ChartSeries util{QStringLiteral("utilisation"), {}};
  ChartSeries ratio{QStringLiteral("comm ratio"), {}};
  for (const auto& r : report.ranks) {
    util.values.push_back(orNaN(r.utilization()));
    ratio.values.push_back(orNaN(r.commRatio()));
  }
  c.series.push_back(std::move(util));
  for (int d = 0; d < trace_model::kParallelDimCount; ++d) {
    bool any = false;
    for (const auto& r : report.ranks) any = any || r.commNsByDim[d] > 0;
    if (!any) continue;
    const auto dim = trace_model::toString(static_cast<trace_model::ParallelDim>(d));
    const QString dimName = d == static_cast<int>(trace_model::ParallelDim::kNone)
                                ? QStringLiteral("other")
                                : QString::fromUtf8(dim.data(), static_cast<qsizetype>(dim.size()));
    ChartSeries s{QStringLiteral("comm %1").arg(dimName), {}};
    for (const auto& r : report.ranks) {
      s.values.push_back(r.commRatio(static_cast<trace_model::ParallelDim>(d)).value_or(kNaN));
    }
    c.series.push_back(std::move(s));
  }
  c.series.push_back(std::move(ratio));
  return c;
}

ChartData bubbleChart(const analysis::RunReport& report) {
  ChartData c;
  c.title = QStringLiteral("Pipeline bubble per stage");
  c.valueLabel = QStringLiteral("share of step time");
  // One stage (pp = 1) is no pipeline: it has no pipeline bubble to show.
  if (report.stages.size() < 2) return c;
  ChartSeries measured{QStringLiteral("measured"), {}};
  ChartSeries replayed{QStringLiteral("replayed"), {}};
  ChartSeries formula{QStringLiteral("formula"), {}};
  bool anyReplayed = false;
  for (const auto& s : report.stages) {
    // The axis says "pipeline stage": "stage 0stage 1stage 2" overlapped
    // at four stages on a 1280 px screen.
    c.labels << QString::number(s.stage);
    c.ids.push_back(s.stage);
    measured.values.push_back(orNaN(s.bubbleFraction));
    replayed.values.push_back(orNaN(s.bubbleReplayed));
    formula.values.push_back(orNaN(s.bubbleFormula));
    anyReplayed |= s.bubbleReplayed.has_value();
  }
  // The ideal-hardware replay (an oversubscribed run) between the two.
  c.series = {std::move(measured)};
  if (anyReplayed) c.series.push_back(std::move(replayed));
  c.series.push_back(std::move(formula));
  return c;
}

ChartData breakdownChart(const analysis::RunReport& report) {
  ChartData c;
  c.title = QStringLiteral("Step time breakdown per rank");
  c.valueLabel = QStringLiteral("ms per step");
  rankKeys(report, c);
  ChartSeries compute{QStringLiteral("compute"), {}}, exposed{QStringLiteral("exposed comm"), {}},
      wait{QStringLiteral("wait"), {}}, idle{QStringLiteral("idle"), {}};
  for (const auto& r : report.ranks) {
    const double perStepMs = r.steps > 0 ? 1e-6 / r.steps : kNaN;
    compute.values.push_back(r.computeNs * perStepMs);
    exposed.values.push_back(r.exposedCommNs * perStepMs);
    wait.values.push_back(r.waitNs * perStepMs);
    idle.values.push_back(r.idleNs * perStepMs);
  }
  c.series = {std::move(compute), std::move(exposed), std::move(wait), std::move(idle)};
  return c;
}

ChartData lossChart(const analysis::RunReport& report) {
  ChartData c;
  c.title = QStringLiteral("Loss per step");
  c.valueLabel = QStringLiteral("loss");
  ChartSeries loss{QStringLiteral("loss"), {}};
  for (const auto& s : report.steps) {
    c.labels << QString::number(s.step);
    c.ids.push_back(s.step);
    loss.values.push_back(orNaN(s.loss));
  }
  c.series = {std::move(loss)};
  return c;
}

LossCurve lossCurve(const analysis::RunReport& report) {
  LossCurve c;
  c.runId = report.run.id;
  c.label = QStringLiteral("run %1 · %2").arg(report.run.id).arg(layoutSummary(report.run.info));
  for (const auto& s : report.steps) {
    c.steps.push_back(s.step);
    c.losses.push_back(orNaN(s.loss));
  }
  return c;
}

ChartData lossChart(const std::vector<LossCurve>& curves) {
  ChartData c;
  c.title = QStringLiteral("Loss per step of the compared runs");
  c.valueLabel = QStringLiteral("loss");
  std::set<int32_t> steps;
  for (const LossCurve& curve : curves) steps.insert(curve.steps.begin(), curve.steps.end());
  std::map<int32_t, size_t> keyOfStep;
  for (int32_t step : steps) {
    keyOfStep[step] = c.ids.size();
    c.labels << QString::number(step);
    c.ids.push_back(step);
  }
  for (const LossCurve& curve : curves) {
    ChartSeries s{curve.label, std::vector<double>(c.ids.size(), kNaN)};
    for (size_t i = 0; i < curve.steps.size(); ++i) {
      s.values[keyOfStep.at(curve.steps[i])] = curve.losses[i];
    }
    c.series.push_back(std::move(s));
  }
  return c;
}

ChartData memoryChart(const analysis::RunReport& report) {
  ChartData c;
  c.title = QStringLiteral("Peak memory per rank");
  c.valueLabel = QStringLiteral("MiB");
  rankKeys(report, c);
  constexpr double kMiB = 1024.0 * 1024.0;
  std::vector<std::string> categories;
  for (const auto& r : report.ranks) {
    for (const auto& m : r.memory) {
      if (std::find(categories.begin(), categories.end(), m.category) == categories.end())
        categories.push_back(m.category);
    }
  }
  ChartSeries formula{QStringLiteral("formula"), {}};
  std::vector<ChartSeries> measured;
  for (const std::string& cat : categories) measured.push_back({QString::fromStdString(cat), {}});
  bool anyMeasured = false;
  for (const auto& r : report.ranks) {
    double states = 0;
    bool known = false;
    for (size_t i = 0; i < categories.size(); ++i) {
      double v = kNaN;
      for (const auto& m : r.memory) {
        if (m.category != categories[i]) continue;
        if (m.measuredBytes) v = *m.measuredBytes / kMiB, anyMeasured = true;
        if (m.formulaBytes) states += *m.formulaBytes / kMiB, known = true;
      }
      measured[i].values.push_back(v);
    }
    formula.values.push_back(known ? states : kNaN);
  }
  if (anyMeasured) {
    for (auto& s : measured) c.series.push_back(std::move(s));
  }
  c.series.push_back(std::move(formula));
  return c;
}

}  // namespace bubblescope::gui
