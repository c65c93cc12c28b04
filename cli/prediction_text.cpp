#include "cli/prediction_text.h"

#include <thread>

#include "planning/formulas.h"
#include "storage/analysis/text_table.h"
#include "storage/calibration_store.h"
#include "storage/process_identity.h"

namespace bubblescope::cli {

Result<layout::Prediction> predictFromFile(const layout::Layout& layout, const std::string& path,
                                           int64_t calibrationId,
                                           const layout::PredictOptions& options) {
  BS_ASSIGN_OR_RETURN(const layout::Calibration c, storage::loadCalibration(path, calibrationId));
  BS_ASSIGN_OR_RETURN(layout::Prediction p, layout::predictLayout(layout, c, options));
  const std::string host = storage::currentHostName();
  const auto cores = static_cast<int32_t>(std::thread::hardware_concurrency());
  if (c.host != host || (c.cores > 0 && c.cores != cores)) {
    p.warnings.push_back("the calibration was measured on host " + c.host + " with " +
                         std::to_string(c.cores) + " cores, this is " + host + " with " +
                         std::to_string(cores) + ": the prediction is for that machine");
  }
  return p;
}

std::string predictionToText(const layout::Layout& layout, const layout::Prediction& p) {
  using analysis::formatBytes;
  using analysis::formatMs;
  using analysis::formatPercent;
  std::string out = "predicted step " + formatMs(p.stepNs) + " ms, tokens/s " +
                    analysis::formatNumber(p.tokensPerSecond, 0) + "\n";
  analysis::TextTable t{
      {"stage", "bubble predicted", "bubble formula", "activations", "memory"}, {}, false};
  const double formula = layout::formulaBubble(layout);
  for (size_t k = 0; k < p.bubble.size(); ++k) {
    t.rows.push_back({std::to_string(k), formatPercent(p.bubble[k]), formatPercent(formula),
                      formatBytes(p.activationBytes[k]), formatBytes(p.memoryBytes[k])});
  }
  out += t.render(false);
  for (const auto& [dim, ns] : p.exposedCommNs) {
    out += "exposed " + dim + " communication " + formatMs(ns) + " ms per step (" +
           formatPercent(p.stepNs > 0 ? ns / p.stepNs : 0.0) + ")\n";
  }
  const layout::GradReductionCost& g = p.gradReduction;
  if (g.sentBytes > 0) {
    out += "dp gradients (" + layout.gradCompression.toString() + "): " + formatBytes(g.sentBytes) +
           " sent per step against " + formatBytes(g.uncompressedBytes) + " for fp32, ratio " +
           analysis::formatNumber(g.compressionRatio(), 2) + "; collectives " + formatMs(g.commNs) +
           " ms, encoding " + formatMs(g.codecNs) + " ms";
    if (g.interNodeBytes > 0) out += "; " + formatBytes(g.interNodeBytes) + " cross nodes";
    out += "\n";
  }
  for (const std::string& w : p.warnings) out += "warning: " + w + "\n";
  return out;
}

storage::SimulatedRunOptions predictedRunOptions(const layout::Prediction& p) {
  storage::SimulatedRunOptions o;
  o.unitNs = 1;
  o.costs.forward = 1;  // every op has its own cost (opCosts)
  o.costs.backwardInput = 1;
  o.costs.comm = p.p2pNs;
  o.costs.recvWake = p.recvWakeNs;
  o.opCosts = p.opCostsNs;
  for (size_t k = 0; k < p.memoryBytes.size(); ++k) {
    o.memoryBytesByStage.push_back({{"activations", p.activationBytes[k]}});
  }
  return o;
}

}  // namespace bubblescope::cli
