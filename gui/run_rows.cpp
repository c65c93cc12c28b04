#include "gui/run_rows.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

namespace bubblescope::gui {

QString layoutSummary(const std::string& layoutJson, const std::string& modelJson) {
  const nlohmann::json layout = nlohmann::json::parse(layoutJson, nullptr, false, true);
  const nlohmann::json model = nlohmann::json::parse(modelJson, nullptr, false, true);
  if (layout.is_discarded() || !layout.is_object()) return QString::fromStdString(layoutJson);
  auto integer = [&](const char* key, int64_t fallback) -> int64_t {
    auto it = layout.find(key);
    return it != layout.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
  };
  auto text = [](const nlohmann::json& j, const char* key) -> QString {
    if (!j.is_object()) return {};
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? QString::fromStdString(it->get<std::string>())
                                            : QString();
  };
  QStringList parts;
  if (!layout.empty()) {
    parts << QStringLiteral("dp%1 tp%2 pp%3")
                 .arg(integer("dp", 1))
                 .arg(integer("tp", 1))
                 .arg(integer("pp", 1));
    QString schedule = text(layout, "schedule");
    if (!schedule.isEmpty()) {
      if (schedule == QLatin1String("interleaved")) {
        schedule += QStringLiteral(" v%1").arg(integer("virtual_chunks", 1));
      }
      parts << QStringLiteral("%1 m%2").arg(schedule).arg(integer("micro_batches", 1));
    }
    const int64_t zero = integer("zero_stage", 0);
    if (zero > 0) parts << QStringLiteral("zero%1").arg(zero);
  }
  QString preset = text(model, "preset");
  if (preset.isEmpty() && layout.contains("model")) preset = text(layout["model"], "preset");
  if (!preset.isEmpty()) parts << preset;
  if (parts.isEmpty()) return QStringLiteral("single process");
  return parts.join(QStringLiteral(" · "));
}

QString healthText(storage::RunHealth health) {
  return QString::fromUtf8(storage::toString(health));
}

Result<RunRow> loadRunRow(storage::TraceReader& reader, const storage::RunRecord& run) {
  RunRow row;
  row.id = run.id;
  row.name = QString::fromStdString(run.info.name);
  row.layoutSummary = layoutSummary(run.info.layoutJson, run.info.modelJson);
  row.backend = QString::fromStdString(run.info.backend);
  row.source = run.info.simulated ? QStringLiteral("simulated") : QStringLiteral("measured");
  row.worldSize = run.info.worldSize;
  row.health = run.health;
  row.error = QString::fromStdString(run.error);
  row.events = run.eventCount;
  auto steps = reader.steps(run.id);
  if (!steps.isOk()) return steps.status();
  std::map<int32_t, std::pair<int64_t, int64_t>> windows;
  std::map<int32_t, double> losses;
  for (const tracer::StepRecord& s : *steps) {
    auto [it, inserted] = windows.try_emplace(s.step, s.startNs, s.endNs);
    if (!inserted) {
      it->second.first = std::min(it->second.first, s.startNs);
      it->second.second = std::max(it->second.second, s.endNs);
    }
    if (!std::isnan(s.loss)) losses[s.step] = s.loss;
  }
  row.steps = static_cast<int32_t>(windows.size());
  if (!windows.empty()) {
    std::vector<double> times;
    for (const auto& [step, w] : windows) times.push_back(double(w.second - w.first));
    std::sort(times.begin(), times.end());
    const size_t n = times.size();
    row.medianStepNs = n % 2 == 1 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
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
