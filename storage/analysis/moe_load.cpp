#include "storage/analysis/moe_load.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "engine/layout/moe_samples.h"
#include "storage/analysis/text_table.h"

namespace bubblescope::analysis {
namespace {

// One block's samples of one step.
struct StepSamples {
  std::map<int32_t, double> routed, dropped;  // by expert
  std::optional<double> auxLoss;
};

MoeStepLoad stepLoad(int32_t step, int64_t timeNs, const StepSamples& s, int32_t experts) {
  MoeStepLoad out{.step = step, .timeNs = timeNs};
  out.routedByExpert.assign(static_cast<size_t>(experts), 0);
  out.droppedByExpert.assign(static_cast<size_t>(experts), 0);
  for (const auto& [expert, routed] : s.routed)
    out.routedByExpert[static_cast<size_t>(expert)] = static_cast<int64_t>(routed);
  for (const auto& [expert, dropped] : s.dropped) {
    if (expert < experts)
      out.droppedByExpert[static_cast<size_t>(expert)] = static_cast<int64_t>(dropped);
  }
  int64_t most = 0;
  for (int64_t r : out.routedByExpert) out.routed += r, most = std::max(most, r);
  for (int64_t d : out.droppedByExpert) out.dropped += d;
  // Over the experts with a routed series (a step missing one is not averaged with a zero).
  if (out.routed > 0 && !s.routed.empty()) {
    const double mean = static_cast<double>(out.routed) / static_cast<double>(s.routed.size());
    out.imbalance = static_cast<double>(most) / mean;
  }
  out.auxLoss = s.auxLoss;
  return out;
}

}  // namespace

std::vector<MoeBlockLoad> moeLoadFromSamples(const std::vector<trace_model::Sample>& samples) {
  // rank -> block -> that rank's step time -> samples
  std::map<int32_t, std::map<int32_t, std::map<int64_t, StepSamples>>> ranks;
  for (const auto& s : samples) {
    const auto key = layout::parseMoeSampleName(s.name);
    if (!key) continue;
    StepSamples& step = ranks[s.rank][key->block][s.timeNs];
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
  // Each rank's n-th step of a block is the block's n-th step: the ranks'
  // counts add up (each routed its own tokens), their aux losses average,
  // and the step's time is the latest rank's.
  struct Merged {
    StepSamples sum;
    int64_t timeNs = 0;
    double auxSum = 0.0;
    int32_t auxRanks = 0;
  };
  std::map<int32_t, std::map<int32_t, Merged>> merged;  // block -> step index -> merged
  for (const auto& [rank, blocksOfRank] : ranks) {
    for (const auto& [block, steps] : blocksOfRank) {
      int32_t index = 0;
      for (const auto& [timeNs, step] : steps) {
        Merged& m = merged[block][index++];
        for (const auto& [e, v] : step.routed) m.sum.routed[e] += v;
        for (const auto& [e, v] : step.dropped) m.sum.dropped[e] += v;
        if (step.auxLoss) m.auxSum += *step.auxLoss, ++m.auxRanks;
        m.timeNs = std::max(m.timeNs, timeNs);
      }
    }
  }
  std::map<int32_t, std::map<int64_t, StepSamples>> blocks;  // block -> step time -> samples
  for (auto& [block, steps] : merged) {
    for (auto& [index, m] : steps) {
      if (m.auxRanks > 0) m.sum.auxLoss = m.auxSum / m.auxRanks;
      blocks[block][m.timeNs] = std::move(m.sum);
    }
  }
  std::vector<MoeBlockLoad> out;
  for (const auto& [block, steps] : blocks) {
    MoeBlockLoad load{.block = block};
    for (const auto& [timeNs, step] : steps) {
      if (!step.routed.empty())
        load.experts = std::max(load.experts, step.routed.rbegin()->first + 1);
    }
    double auxSum = 0.0;
    int32_t auxSteps = 0, index = 0;
    for (const auto& [timeNs, step] : steps) {
      MoeStepLoad s = stepLoad(index++, timeNs, step, load.experts);
      if (s.auxLoss) auxSum += *s.auxLoss, ++auxSteps;
      load.dropped += s.dropped;
      if (s.imbalance) {
        load.routed += s.routed;
        load.imbalanceMean += *s.imbalance;
        if (*s.imbalance > load.imbalanceMax) {
          load.imbalanceMax = *s.imbalance;
          load.imbalanceMaxStep = s.step;
        }
        ++load.steps;
      }
      load.perStep.push_back(std::move(s));
    }
    if (load.steps > 0) load.imbalanceMean /= load.steps;
    if (auxSteps > 0) load.auxLossMean = auxSum / auxSteps;
    out.push_back(std::move(load));
  }
  return out;
}

namespace {

std::string title(const std::string& text, bool markdown) {
  return markdown ? "\n### " + text + "\n\n" : "\n" + text + "\n";
}

// Rows = steps, one column per block: "imbalance / drop rate".
std::string perStepText(const std::vector<MoeBlockLoad>& loads, bool markdown) {
  TextTable t{{"step"}, {}};
  size_t steps = 0;
  for (const auto& l : loads) {
    t.header.push_back("h." + std::to_string(l.block) + " max/mean, drop");
    steps = std::max(steps, l.perStep.size());
  }
  for (size_t i = 0; i < steps; ++i) {
    std::vector<std::string> row{std::to_string(i)};
    for (const auto& l : loads) {
      if (i >= l.perStep.size()) {
        row.push_back("-");
        continue;
      }
      const MoeStepLoad& s = l.perStep[i];
      row.push_back(formatNumber(s.imbalance, 2) + ", " + formatPercent(s.dropRate()));
    }
    t.rows.push_back(std::move(row));
  }
  return title(
             "Mixture of experts: load imbalance (max/mean assignments per expert) and drop "
             "rate per step and block",
             markdown) +
         t.render(markdown);
}

}  // namespace

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
  return title(
             "Mixture of experts: load per MoE block (imbalance = max/mean assignments per "
             "expert)",
             markdown) +
         t.render(markdown) + perStepText(loads, markdown);
}

nlohmann::ordered_json moeLoadJson(const std::vector<MoeBlockLoad>& loads) {
  auto orNull = [](const std::optional<double>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& l : loads) {
    nlohmann::ordered_json steps = nlohmann::ordered_json::array();
    for (const auto& s : l.perStep) {
      steps.push_back({{"step", s.step},
                       {"routed", s.routed},
                       {"dropped", s.dropped},
                       {"imbalance", orNull(s.imbalance)},
                       {"drop_rate", orNull(s.dropRate())},
                       {"routed_by_expert", s.routedByExpert},
                       {"dropped_by_expert", s.droppedByExpert}});
    }
    out.push_back({{"block", l.block},
                   {"experts", l.experts},
                   {"steps", l.steps},
                   {"imbalance_mean", l.imbalanceMean},
                   {"imbalance_max", l.imbalanceMax},
                   {"imbalance_max_step", l.imbalanceMaxStep},
                   {"routed", l.routed},
                   {"dropped", l.dropped},
                   {"drop_rate", orNull(l.dropRate())},
                   {"aux_loss_mean", orNull(l.auxLossMean)},
                   {"per_step", std::move(steps)}});
  }
  return out;
}

}  // namespace bubblescope::analysis
