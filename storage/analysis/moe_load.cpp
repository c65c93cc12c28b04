#include "storage/analysis/moe_load.h"

#include <algorithm>
#include <map>

#include "engine/layout/moe_samples.h"
#include "storage/analysis/text_table.h"

namespace bubblescope::analysis {
namespace {

// One block's samples of one step.
struct StepLoad {
  std::map<int32_t, double> routed, dropped;  // by expert
  std::optional<double> auxLoss;
};

}  // namespace

std::vector<MoeBlockLoad> moeLoadFromSamples(const std::vector<trace_model::Sample>& samples) {
  std::map<int32_t, std::map<int64_t, StepLoad>> blocks;  // block -> step time -> load
  for (const auto& s : samples) {
    const auto key = layout::parseMoeSampleName(s.name);
    if (!key) continue;
    StepLoad& step = blocks[key->block][s.timeNs];
    switch (key->series) {
      case layout::MoeSeries::kRouted:
        step.routed[key->expert] = s.value;
        break;
      case layout::MoeSeries::kDropped:
        step.dropped[key->expert] = s.value;
        break;
      case layout::MoeSeries::kAuxLoss:
        step.auxLoss = s.value;
        break;
    }
  }
  std::vector<MoeBlockLoad> out;
  for (const auto& [block, steps] : blocks) {
    MoeBlockLoad load{.block = block};
    double auxSum = 0.0;
    int32_t auxSteps = 0, index = 0;
    for (const auto& [timeNs, step] : steps) {
      const int32_t current = index++;
      if (step.auxLoss) {
        auxSum += *step.auxLoss;
        ++auxSteps;
      }
      double total = 0.0, most = 0.0;
      for (const auto& [expert, routed] : step.routed) {
        total += routed;
        most = std::max(most, routed);
      }
      for (const auto& [expert, dropped] : step.dropped)
        load.dropped += static_cast<int64_t>(dropped);
      load.experts = std::max(load.experts, static_cast<int32_t>(step.routed.size()));
      if (total <= 0.0) continue;
      load.routed += static_cast<int64_t>(total);
      const double imbalance = most / (total / static_cast<double>(step.routed.size()));
      load.imbalanceMean += imbalance;
      if (imbalance > load.imbalanceMax) {
        load.imbalanceMax = imbalance;
        load.imbalanceMaxStep = current;
      }
      ++load.steps;
    }
    if (load.steps > 0) load.imbalanceMean /= load.steps;
    if (auxSteps > 0) load.auxLossMean = auxSum / auxSteps;
    out.push_back(load);
  }
  return out;
}

std::string moeLoadText(const std::vector<MoeBlockLoad>& loads, bool markdown) {
  if (loads.empty()) return "";
  TextTable t{{"block", "experts", "steps", "imbalance mean", "imbalance max (step)", "dropped",
               "drop rate", "aux loss"},
              {}};
  for (const auto& l : loads) {
    t.rows.push_back(
        {"h." + std::to_string(l.block), std::to_string(l.experts), std::to_string(l.steps),
         formatNumber(l.imbalanceMean, 2),
         formatNumber(l.imbalanceMax, 2) + " (" + std::to_string(l.imbalanceMaxStep) + ")",
         std::to_string(l.dropped) + "/" + std::to_string(l.routed), formatPercent(l.dropRate()),
         formatNumber(l.auxLossMean, 4)});
  }
  const std::string title =
      "Mixture of experts: load per MoE block (imbalance = max/mean assignments per expert)";
  return (markdown ? "\n### " + title + "\n\n" : "\n" + title + "\n") + t.render(markdown);
}

nlohmann::ordered_json moeLoadJson(const std::vector<MoeBlockLoad>& loads) {
  auto orNull = [](const std::optional<double>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& l : loads) {
    out.push_back({{"block", l.block},
                   {"experts", l.experts},
                   {"steps", l.steps},
                   {"imbalance_mean", l.imbalanceMean},
                   {"imbalance_max", l.imbalanceMax},
                   {"imbalance_max_step", l.imbalanceMaxStep},
                   {"routed", l.routed},
                   {"dropped", l.dropped},
                   {"drop_rate", orNull(l.dropRate())},
                   {"aux_loss_mean", orNull(l.auxLossMean)}});
  }
  return out;
}

}  // namespace bubblescope::analysis
