#include "storage/analysis/moe_comm.h"

#include <nlohmann/json.hpp>

#include <map>

#include "planning/expert_parallel_volume.h"
#include "storage/analysis/text_table.h"

namespace bubblescope::analysis {
namespace {

constexpr auto kEp = static_cast<size_t>(trace_model::ParallelDim::kEp);

nlohmann::ordered_json orNull(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

// Kept rows per expert of one rank's tokens, summed over its blocks and steps.
std::vector<double> keptByExpert(const std::vector<MoeBlockLoad>& loads, int32_t experts) {
  std::vector<double> kept(static_cast<size_t>(experts), 0.0);
  for (const auto& l : loads) {
    for (const auto& s : l.perStep) {
      for (size_t e = 0; e < s.routedByExpert.size() && e < kept.size(); ++e)
        kept[e] += static_cast<double>(s.routedByExpert[e] - s.droppedByExpert[e]);
    }
  }
  return kept;
}

// The ep group of a rank: same pp and tp, dp in the same block of ep.
bool sameEpGroup(const storage::RankInfo& a, const storage::RankInfo& b, int32_t ep) {
  return a.pp == b.pp && a.tp == b.tp && a.dp / ep == b.dp / ep;
}

// Traced ep bytes of every rank with samples over all its steps (not per
// step), by the run's routing; ranks without samples are left out.
std::map<int32_t, double> routingBytes(const RunReport& report,
                                       const std::vector<trace_model::Sample>& samples,
                                       int32_t ep) {
  std::map<int32_t, double> out;
  const layout::Layout& l = *report.layout;
  const int32_t experts = l.model.experts;
  if (ep <= 1 || experts <= 0 || experts % ep != 0) return out;
  std::map<int32_t, std::vector<trace_model::Sample>> byRank;
  for (const auto& s : samples) byRank[s.rank].push_back(s);
  std::map<int32_t, std::vector<double>> kept;  // rank -> kept rows per expert
  std::map<int32_t, int32_t> stepsOf;           // rank -> steps with samples
  for (const auto& [rank, own] : byRank) {
    const auto loads = moeLoadFromSamples(own);
    if (loads.empty()) continue;
    kept[rank] = keptByExpert(loads, experts);
    stepsOf[rank] = static_cast<int32_t>(loads[0].perStep.size());
  }
  const double rowBytes = 4.0 * l.model.hidden;
  const int32_t perRank = experts / ep;
  for (const RankReport& r : report.ranks) {
    auto own = kept.find(r.info.rank);
    if (own == kept.end()) continue;
    double sent = 0, served = 0;
    for (double k : own->second) sent += k;
    const int32_t first = (r.info.dp % ep) * perRank;
    for (const RankReport& other : report.ranks) {
      auto theirs = kept.find(other.info.rank);
      if (theirs == kept.end() || !sameEpGroup(r.info, other.info, ep)) continue;
      for (int32_t e = first; e < first + perRank; ++e) served += theirs->second[e];
    }
    const double counts = 4.0 * experts * l.microBatches *
                          layout::moeBlocksOnStage(l, std::max(0, r.info.pp)) *
                          stepsOf[r.info.rank];
    const double gradNorm =
        static_cast<double>(layout::kEpGradNormBytesPerStep) * stepsOf[r.info.rank];
    out[r.info.rank] = 2.0 * rowBytes * sent + 2.0 * rowBytes * served + counts + gradNorm;
  }
  return out;
}

}  // namespace

std::optional<double> moeDropRate(const std::vector<MoeBlockLoad>& loads) {
  int64_t routed = 0, dropped = 0;
  for (const auto& l : loads) routed += l.routed, dropped += l.dropped;
  if (routed <= 0) return std::nullopt;
  return static_cast<double>(dropped) / static_cast<double>(routed);
}

int32_t epDegreeOf(const RunReport& report) {
  const auto j = nlohmann::json::parse(report.run.info.layoutJson, nullptr, false, true);
  if (!j.is_object() || !j.contains("ep") || !j["ep"].is_number_integer()) return 1;
  return std::max(1, j["ep"].get<int32_t>());
}

EpComm epCommOf(const RunReport& report, const std::vector<trace_model::Sample>& samples,
                const std::vector<MoeBlockLoad>& loads, int32_t ep) {
  EpComm out{.ep = ep, .ranks = {}, .dropRate = moeDropRate(loads), .offRankShare = 0};
  out.offRankShare = layout::epOffRankShare(out.ep);
  const auto routing =
      report.layout ? routingBytes(report, samples, ep) : std::map<int32_t, double>{};
  for (const RankReport& r : report.ranks) {
    if (r.steps <= 0 || (r.commNsByDim[kEp] <= 0 && r.commBytesByDim[kEp] <= 0)) continue;
    EpRankComm c{.rank = r.info.rank, .stage = std::max(0, r.info.pp)};
    c.timeNsPerStep = static_cast<double>(r.commNsByDim[kEp]) / r.steps;
    c.bytesPerStep = static_cast<double>(r.commBytesByDim[kEp]) / r.steps;
    c.shareOfStep = r.commRatio(trace_model::ParallelDim::kEp);
    if (report.layout) {
      c.formulaBytesPerStep =
          layout::epVolumeBytesPerStep(layout::epVolumeInput(*report.layout, ep, c.stage));
    }
    if (auto it = routing.find(r.info.rank); it != routing.end())
      c.routingBytesPerStep = it->second / r.steps;
    out.ranks.push_back(c);
  }
  return out;
}

std::string epCommText(const EpComm& comm, bool markdown) {
  if (comm.empty()) return "";
  TextTable t{{"rank", "stage", "all-to-all ms/step", "share of step", "traced/step",
               "even routing/step", "run's routing/step", "traced / routing"},
              {}};
  for (const auto& c : comm.ranks) {
    t.rows.push_back({std::to_string(c.rank), std::to_string(c.stage), formatMs(c.timeNsPerStep),
                      formatPercent(c.shareOfStep), formatBytes(c.bytesPerStep),
                      formatBytes(c.formulaBytesPerStep), formatBytes(c.routingBytesPerStep),
                      formatNumber(c.measuredToRouting(), 3)});
  }
  const std::string title =
      "Expert parallelism (ep " + std::to_string(comm.ep) +
      "): time and bytes per rank and step; even routing (4·k·T·C + E)·4 B per MoE block "
      "and micro-batch + 8 B, " +
      formatPercent(comm.offRankShare) + " of it off the rank; drop rate " +
      formatPercent(comm.dropRate);
  return (markdown ? "\n### " + title + "\n\n" : "\n" + title + "\n") + t.render(markdown);
}

nlohmann::ordered_json epCommJson(const EpComm& comm) {
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (const auto& c : comm.ranks) {
    ranks.push_back({{"rank", c.rank},
                     {"stage", c.stage},
                     {"time_ns_per_step", c.timeNsPerStep},
                     {"share_of_step", orNull(c.shareOfStep)},
                     {"bytes_per_step", c.bytesPerStep},
                     {"formula_bytes_per_step", orNull(c.formulaBytesPerStep)},
                     {"routing_bytes_per_step", orNull(c.routingBytesPerStep)},
                     {"measured_to_routing", orNull(c.measuredToRouting())}});
  }
  return {{"ep", comm.ep},
          {"drop_rate", orNull(comm.dropRate)},
          {"off_rank_share", comm.offRankShare},
          {"ranks", std::move(ranks)}};
}

}  // namespace bubblescope::analysis
