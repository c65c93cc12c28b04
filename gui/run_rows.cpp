#include "gui/run_rows.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "storage/analysis/imported_layout.h"
#include "storage/analysis/run_layout.h"

namespace bubblescope::gui {

QString layoutSummary(const std::string& layoutJson, const std::string& modelJson) {
  const std::optional<layout::Layout> l = analysis::runLayout(layoutJson, modelJson);
  if (!l) return QString::fromStdString(layoutJson);
  QStringList parts;
  if (l->worldSize() == 1) {
    parts << QStringLiteral("single process");
  } else {
    parts << QStringLiteral("dp%1 tp%2 pp%3").arg(l->dp).arg(l->tp).arg(l->pp);
  }
  if (l->pp > 1) {
    QString schedule = QString::fromUtf8(layout::scheduleKindName(l->schedule));
    if (l->schedule == layout::ScheduleKind::kInterleaved) {
      schedule += QStringLiteral(" v%1").arg(l->virtualChunks);
    }
    parts << QStringLiteral("%1 m%2").arg(schedule).arg(l->microBatches);
  }
  if (layout::shardsOptimizer(l->zeroStage)) {
    parts << QStringLiteral("zero%1").arg(layout::zeroStageNumber(l->zeroStage));
  }
  if (l->gradCompression.compresses()) {
    parts << QString::fromStdString(l->gradCompression.toString());
  }
  if (l->allReduce == layout::AllReduceAlgorithm::kHierarchical) {
    parts << QString::fromUtf8(layout::allReduceAlgorithmName(l->allReduce));
  }
  if (l->ranksPerNode >= 1) parts << QStringLiteral("nodes of %1").arg(l->ranksPerNode);
  if (l->emulatesInterNodeLink()) {
    parts << QStringLiteral("link %1 Gb/s %2 µs").arg(l->interNodeGbps).arg(l->interNodeLatencyUs);
  }
  parts << QString::fromStdString(l->model.preset);
  return parts.join(QStringLiteral(" · "));
}

QString layoutSummary(const storage::RunInfo& info) {
  if (info.imported) return QString::fromStdString(analysis::importedLayoutSummary(info));
  return layoutSummary(info.layoutJson, info.modelJson);
}

QString healthText(storage::RunHealth health) {
  return QString::fromUtf8(storage::toString(health));
}

Result<RunRow> loadRunRow(storage::TraceReader& reader, const storage::RunRecord& run) {
  RunRow row;
  row.id = run.id;
  row.name = QString::fromStdString(run.info.name);
  row.layoutSummary = layoutSummary(run.info);
  row.backend = QString::fromStdString(run.info.backend);
  row.source = QString::fromUtf8(storage::sourceName(run.info));
  row.worldSize = run.info.worldSize;
  auto ranks = reader.ranks(run.id);
  if (!ranks.isOk()) return ranks.status();
  row.ranksPresent = static_cast<int32_t>(ranks->size());
  row.health = run.health;
  row.error = QString::fromStdString(run.error);
  row.events = run.eventCount;
  auto steps = reader.steps(run.id);
  if (!steps.isOk()) return steps.status();
  std::map<int32_t, std::pair<int64_t, int64_t>> windows;
  std::map<int32_t, double> losses;
  for (const trace_model::StepRecord& s : *steps) {
    auto [it, inserted] = windows.try_emplace(s.step, s.startNs, s.endNs);
    if (!inserted) {
      it->second.first = std::min(it->second.first, s.startNs);
      it->second.second = std::max(it->second.second, s.endNs);
    }
    if (!std::isnan(s.loss)) losses[s.step] = s.loss;
  }
  row.steps = static_cast<int32_t>(windows.size());
  if (!windows.empty()) {
    // The mean, as the charts and `report` show it.
    double sum = 0;
    for (const auto& [step, w] : windows) sum += double(w.second - w.first);
    row.meanStepNs = sum / static_cast<double>(windows.size());
  }
  if (!losses.empty()) row.lastLoss = losses.rbegin()->second;
  return row;
}

Result<std::vector<RunRow>> loadRunRows(storage::TraceReader& reader) {
  auto runs = reader.runs();
  if (!runs.isOk()) return runs.status();
  std::vector<RunRow> rows;
  for (const storage::RunRecord& run : *runs) {
    auto row = loadRunRow(reader, run);
    if (!row.isOk()) return row.status();
    rows.push_back(std::move(*row));
  }
  return rows;
}

}  // namespace bubblescope::gui
