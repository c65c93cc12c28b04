#include "planning/contention.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace bubblescope::layout {

double backgroundFromShare(double share, int32_t threads, int32_t cores) {
  if (!(share > 0) || !std::isfinite(share) || threads <= 0 || cores <= 0) return 0.0;
  return std::max(0.0, cores / share - threads);
}

double computeStretch(int32_t ranks, double background, int32_t cores) {
  if (cores <= 0 || !std::isfinite(background)) return 1.0;
  return std::max(1.0, (ranks + std::max(0.0, background)) / cores);
}

std::optional<double> recordedBackground(const Calibration& c) {
  return c.perParameterNs(kContentionPart, kBackgroundOp, false);
}

Calibration withBackground(Calibration c, double background) {
  return withSingleEntry(std::move(c), kContentionPart, kBackgroundOp, background);
}

double measuredStretch(const Calibration& c) {
  if (const auto ops = c.perParameterNs(kContentionPart, kOpStretchOp, false);
      ops && std::isfinite(*ops) && *ops > 0) {
    return *ops;
  }
  double wall = 0, cpu = 0;
  for (const OpCostEntry& e : c.ops) {
    if (e.part == "block" && (e.op == "forward" || e.op == "backward")) {
      wall += e.wallNs;
      cpu += e.cpuNs;
    }
  }
  const double ratio = wall / cpu;
  return std::isfinite(ratio) && ratio > 0 ? ratio : 1.0;
}

double ownOverhead(const Calibration& c) {
  const auto background = recordedBackground(c);
  if (!background) return 1.0;
  return measuredStretch(c) / computeStretch(c.ranksPerHost, *background, c.cores);
}

std::optional<double> perParameterCpuNs(const Calibration& c, const std::string& part,
                                        const std::string& op) {
  const auto wall = c.perParameterNs(part, op, false);
  const auto cpu = c.perParameterNs(part, op, true);
  if (!wall || !cpu) return std::nullopt;
  return *cpu != *wall ? *cpu : *wall / measuredStretch(c);
}

}  // namespace bubblescope::layout
