// RunRow: what the runs list shows of one run, read once through the reader.
#pragma once

#include <QString>
#include <QStringList>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "storage/trace_reader.h"

namespace bubblescope::gui {

struct RunRow {
  int64_t id = 0;
  QString name;
  QString layoutSummary;  // "dp2 tp1 pp2 · 1f1b m8 · zero1 · tiny"
  QString backend;
  QString source;  // "measured", "simulated" or "imported"
  int32_t worldSize = 0;     // the run's world size (an imported trace's world_size)
  int32_t ranksPresent = 0;  // ranks the file holds (an import of 2 of 128 ranks: 2)
  storage::RunHealth health = storage::RunHealth::kRunning;
  QString error;
  int32_t steps = 0;
  // Mean over steps (as Charts and `report` show it) of step = latest end −
  // earliest start over ranks.
  std::optional<double> meanStepNs;
  std::optional<double> lastLoss;
  int64_t events = 0;
};

// "dp2 tp1 pp2 · 1f1b m8 · zero1 · tiny" from the run's layout and model JSON
// (then what changes the dp gradients' path, before the model: "dp4 tp1 pp1
// · topk:0.01 · small", "dp4 tp1 pp1 · hierarchical · nodes of 2 · link 1
// Gb/s 50 µs · small"; analysis::runLayout; "single process · tiny" for one rank, the stored text
// itself when it is not a valid layout).
QString layoutSummary(const std::string& layoutJson, const std::string& modelJson);
// The same for a run: an imported run's line says what the import knows
// (analysis::importedLayoutSummary), never dp1 tp1 pp1.
QString layoutSummary(const storage::RunInfo& info);
// "running", "finished", "failed", "interrupted".
QString healthText(storage::RunHealth health);

// One row per run of the file, in id order.
Result<std::vector<RunRow>> loadRunRows(storage::TraceReader& reader);
Result<RunRow> loadRunRow(storage::TraceReader& reader, const storage::RunRecord& run);

}  // namespace bubblescope::gui
