#include "planning/ascii_render.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "planning/simulator.h"

namespace bubblescope::layout {

Result<std::string> renderAscii(const Schedule& schedule) {
  BS_ASSIGN_OR_RETURN(const Simulation sim, simulate(schedule, unitCosts(schedule)));
  const auto cells = static_cast<size_t>(std::llround(sim.makespan));
  std::vector<std::vector<std::string>> grid(schedule.stages, std::vector<std::string>(cells, "."));
  size_t width = 1;
  for (int32_t k = 0; k < schedule.stages; ++k) {
    for (const OpInterval& iv : sim.stages[k].timeline) {
      const Op& op = schedule.stageOps[k][iv.opIndex];
      if (!isCompute(op.type)) continue;
      std::string label = opTypeLetter(op.type) + std::to_string(op.microBatch);
      if (schedule.chunks > 1) label += static_cast<char>('a' + op.chunk);
      const auto first = static_cast<size_t>(std::llround(iv.start));
      const auto last = static_cast<size_t>(std::llround(iv.end));
      for (size_t t = first; t < last && t < cells; ++t) grid[k][t] = label;
      width = std::max(width, label.size());
    }
  }
  std::string out;
  const std::string stagePrefix = "stage ";
  const size_t labelWidth = std::to_string(schedule.stages - 1).size();
  for (int32_t k = 0; k < schedule.stages; ++k) {
    std::string row = stagePrefix + std::to_string(k);
    row.resize(stagePrefix.size() + labelWidth, ' ');
    row += " |";
    for (const std::string& cell : grid[k]) {
      row += ' ';
      row += cell;
      row.append(width - cell.size(), ' ');
    }
    while (!row.empty() && row.back() == ' ') row.pop_back();
    out += row + '\n';
  }
  return out;
}

}  // namespace bubblescope::layout
