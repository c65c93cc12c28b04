#include "storage/analysis/moe_comm.h"

#include "engine/layout/expert_parallel_volume.h"
#include "storage/analysis/text_table.h"

namespace bubblescope::analysis {
namespace {

constexpr auto kEp = static_cast<size_t>(trace_model::ParallelDim::kEp);

nlohmann::ordered_json orNull(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

std::optional<double> moeDropRate(const std::vector<MoeBlockLoad>& loads) {
  int64_t routed = 0, dropped = 0;
  for (const auto& l : loads) routed += l.routed, dropped += l.dropped;
  if (routed <= 0) return std::nullopt;
  return static_cast<double>(dropped) / static_cast<double>(routed);
}

EpComm epCommOf(const RunReport& report, const std::vector<MoeBlockLoad>& loads, int32_t ep) {
  EpComm out{.ep = ep, .ranks = {}, .dropRate = moeDropRate(loads)};
  for (const RankReport& r : report.ranks) {
    if (r.steps <= 0) continue;
    EpRankComm c{.rank = r.info.rank, .stage = std::max(0, r.info.pp)};
    c.timeNsPerStep = static_cast<double>(r.commNsByDim[kEp]) / r.steps;
    c.bytesPerStep = static_cast<double>(r.commBytesByDim[kEp]) / r.steps;
    c.shareOfStep = r.commRatio(trace_model::ParallelDim::kEp);
    if (report.layout) {
      c.formulaBytesPerStep =
          layout::epVolumeBytesPerStep(layout::epVolumeInput(*report.layout, ep, c.stage));
      c.formulaAfterDropsBytesPerStep = *c.formulaBytesPerStep * (1.0 - out.dropRate.value_or(0.0));
    }
    if (c.bytesPerStep <= 0 && c.timeNsPerStep <= 0 && c.formulaBytesPerStep.value_or(0) <= 0)
      continue;
    out.ranks.push_back(c);
  }
  return out;
}

std::string epCommText(const EpComm& comm, bool markdown) {
  if (comm.empty()) return "";
  TextTable t{{"rank", "stage", "all-to-all ms/step", "share of step", "traced/step",
               "formula/step", "formula after drops", "traced / formula"},
              {}};
  for (const auto& c : comm.ranks) {
    t.rows.push_back({std::to_string(c.rank), std::to_string(c.stage), formatMs(c.timeNsPerStep),
                      formatPercent(c.shareOfStep), formatBytes(c.bytesPerStep),
                      formatBytes(c.formulaBytesPerStep),
                      formatBytes(c.formulaAfterDropsBytesPerStep),
                      formatNumber(c.measuredToFormula(), 3)});
  }
  const std::string title = "Expert parallelism (ep " + std::to_string(comm.ep) +
                            "): all-to-all time and bytes per rank and step; formula 4·k·T·C·"
                            "(ep−1)/ep·4 B per MoE block and micro-batch, drop rate " +
                            formatPercent(comm.dropRate);
  return (markdown ? "\n### " + title + "\n\n" : "\n" + title + "\n") + t.render(markdown);
}

nlohmann::ordered_json epCommJson(const EpComm& comm) {
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (const auto& c : comm.ranks) {
    ranks.push_back(
        {{"rank", c.rank},
         {"stage", c.stage},
         {"time_ns_per_step", c.timeNsPerStep},
         {"share_of_step", orNull(c.shareOfStep)},
         {"bytes_per_step", c.bytesPerStep},
         {"formula_bytes_per_step", orNull(c.formulaBytesPerStep)},
         {"formula_after_drops_bytes_per_step", orNull(c.formulaAfterDropsBytesPerStep)},
         {"measured_to_formula", orNull(c.measuredToFormula())}});
  }
  return {{"ep", comm.ep}, {"drop_rate", orNull(comm.dropRate)}, {"ranks", std::move(ranks)}};
}

}  // namespace bubblescope::analysis
