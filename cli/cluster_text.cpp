#include "cli/cluster_text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

#include "cli/run_description.h"
#include "storage/analysis/text_table.h"
#include "planning/prediction_summary.h"

namespace bubblescope::cli {
namespace {

std::string fixed(double x, int digits) {
  char text[48];
  std::snprintf(text, sizeof(text), "%.*f", digits, x);
  return text;
}

std::string gib(double bytes) { return fixed(bytes / (1024.0 * 1024 * 1024), 1) + " GiB"; }

using layout::worstBubble;

// "tp 120 ms, pp 3 ms, dp 40 ms" (exposed, per step, the slowest stage).
std::string commText(const layout::Prediction& p) {
  std::string out;
  for (const auto& [dim, ns] : p.exposedCommNs) {
    out += (out.empty() ? "" : ", ") + dim + " " + fixed(ns / 1e6, 0) + " ms";
  }
  return out.empty() ? "-" : out;
}

std::string candidateName(const layout::Layout& l) {
  std::string name = runName(l);
  if (l.recompute) name += " recompute";
  return name;
}

}  // namespace

std::string clusterPlanToText(const layout::ClusterPlanRequest& r, const layout::ClusterPlan& p) {
  std::string out = r.model.preset + " on " + std::to_string(r.gpus) + " x " +
                    r.hardware.deviceName + " (" + r.hardware.name + ", " +
                    r.hardware.nodeName + "), global batch " + std::to_string(r.globalBatch) +
                    ", " + r.settings.dtype + "\n";
  analysis::TextTable t{{"#", "layout", "b", "m", "step s", "tokens/s", "TFLOP/s/GPU", "MFU",
                         "memory/GPU", "bubble", "exposed comm", "limited by"},
                        {},
                        true};
  for (size_t i = 0; i < p.best.size(); ++i) {
    const layout::ClusterCandidate& c = p.best[i];
    t.rows.push_back({std::to_string(i + 1), candidateName(c.layout),
                      std::to_string(c.layout.microBatchSize),
                      std::to_string(c.layout.microBatches), fixed(c.prediction.stepNs / 1e9, 3),
                      analysis::formatNumber(c.prediction.tokensPerSecond, 0),
                      fixed(c.tflopsPerGpu, 1), analysis::formatPercent(c.mfu),
                      gib(c.peakMemoryBytes), analysis::formatPercent(worstBubble(c.prediction)),
                      commText(c.prediction), c.limit});
  }
  out += t.render(false);
  out += std::to_string(p.considered) + " layouts estimated, " + std::to_string(p.fitEstimate) +
         " fit " + gib(r.hardware.memoryBytes()) + " by the estimate, " +
         std::to_string(p.simulatedCount) + " simulated\n";
  return out;
}

nlohmann::json clusterPlanToJson(const layout::ClusterPlanRequest& r,
                                 const layout::ClusterPlan& p) {
  nlohmann::json candidates = nlohmann::json::array();
  for (size_t i = 0; i < p.best.size(); ++i) {
    const layout::ClusterCandidate& c = p.best[i];
    nlohmann::json l = layout::toJson(c.layout);
    l.erase("hosts");  // one per node: the profile says them
    candidates.push_back({{"rank", i + 1},
                          {"name", candidateName(c.layout)},
                          {"layout", l},
                          {"step_s", c.prediction.stepNs / 1e9},
                          {"tokens_per_s", c.prediction.tokensPerSecond},
                          {"tflops_per_gpu", c.tflopsPerGpu},
                          {"mfu", c.mfu},
                          {"memory_per_gpu_bytes", c.peakMemoryBytes},
                          {"bubble", c.prediction.bubble},
                          {"exposed_comm_ms", c.prediction.exposedCommNs},
                          {"limit", c.limit}});
    for (auto& [dim, ns] : candidates.back()["exposed_comm_ms"].items()) {
      ns = ns.get<double>() / 1e6;
    }
  }
  return {{"hardware", r.hardware.name},   {"gpus", r.gpus},
          {"model", r.model.preset},       {"global_batch", r.globalBatch},
          {"dtype", r.settings.dtype},     {"considered", p.considered},
          {"fit_estimate", p.fitEstimate}, {"simulated", p.simulatedCount},
          {"candidates", candidates}};
}

std::string clusterPredictionToText(const layout::Layout& l, const layout::Prediction& p,
                                    const layout::HardwareProfile& hw,
                                    const layout::ClusterSettings& s) {
  double memory = 0;
  for (double m : p.memoryBytes) memory = std::max(memory, m);
  const double tflops = layout::clusterTflopsPerGpu(l, p.stepNs);
  std::string out = "predicted on " + std::to_string(l.worldSize()) + " x " + hw.deviceName +
                    " (" + hw.name + "), " + s.dtype + "\n";
  out += "step: " + fixed(p.stepNs / 1e6, 1) + " ms\n";
  out += "tokens/s: " + analysis::formatNumber(p.tokensPerSecond, 0) + "\n";
  out += "tflops_per_gpu: " + fixed(tflops, 1) + "\n";
  out += "mfu: " + analysis::formatPercent(layout::clusterMfu(l, p.stepNs, hw.peakFlops(s.dtype))) +
         "\n";
  out += "bubble (worst stage): " + analysis::formatPercent(worstBubble(p)) + "\n";
  out += "exposed comm: " + commText(p) + "\n";
  out += "memory per GPU: " + gib(memory) + " of " + gib(hw.memoryBytes()) +
         (memory > hw.memoryBytes() ? " (does not fit)" : "") + "\n";
  out += "limited by: " + layout::clusterLimit(p, memory, hw.memoryBytes()) + "\n";
  for (const std::string& w : p.warnings) out += "warning: " + w + "\n";
  return out;
}

}  // namespace bubblescope::cli
