#include "planning/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>

#include "common/median.h"
#include "planning/contention.h"
#include "planning/core_sharing.h"

namespace bubblescope::layout {
namespace {
// Below this a message's time is taken as latency (alpha) when only one size
// was measured; at or above it as bandwidth (beta).
constexpr double kLatencyBoundBytes = 65536;
}  // namespace

std::optional<Calibration::OpCoverage> Calibration::opCoverage(const std::string& part,
                                                               const std::string& op,
                                                               int32_t tp) const {
  // The measured tp degree nearest to the requested one.
  int32_t bestTp = -1;
  for (const OpCostEntry& e : ops) {
    if (e.part != part || e.op != op) continue;
    if (bestTp < 0 || std::abs(e.tp - tp) < std::abs(bestTp - tp)) bestTp = e.tp;
  }
  if (bestTp < 0) return std::nullopt;
  OpCoverage c{bestTp, -1, -1};
  for (const OpCostEntry& e : ops) {
    if (e.part != part || e.op != op || e.tp != bestTp) continue;
    c.minSize = c.minSize < 0 ? e.microBatchSize : std::min(c.minSize, e.microBatchSize);
    c.maxSize = std::max(c.maxSize, e.microBatchSize);
  }
  return c;
}

std::optional<double> Calibration::opCostNs(const std::string& part, const std::string& op,
                                            int32_t b, int32_t tp, bool cpuTime) const {
  const std::optional<OpCoverage> coverage = opCoverage(part, op, tp);
  if (!coverage) return std::nullopt;
  const int32_t bestTp = coverage->tp;
  std::map<int32_t, double> bySize;  // micro-batch size -> ns
  for (const OpCostEntry& e : ops) {
    if (e.part == part && e.op == op && e.tp == bestTp) {
      bySize[e.microBatchSize] = cpuTime ? e.cpuNs : e.wallNs;
    }
  }
  const double tpScale = static_cast<double>(bestTp) / tp;
  if (bySize.count(b)) return bySize[b] * tpScale;
  if (bySize.size() == 1 || b <= 0) {
    const auto [size, ns] = *bySize.begin();
    return size > 0 ? ns * b / size * tpScale : ns * tpScale;
  }
  // Interpolate between the two measured sizes around b (or the two nearest
  // at either end: extrapolation along the last segment).
  auto hi = bySize.lower_bound(b);
  if (hi == bySize.end()) --hi;
  if (hi == bySize.begin()) ++hi;
  auto lo = std::prev(hi);
  const double slope = (hi->second - lo->second) / (hi->first - lo->first);
  return std::max(0.0, lo->second + slope * (b - lo->first)) * tpScale;
}

std::optional<double> Calibration::perParameterNs(const std::string& part, const std::string& op,
                                                  bool cpuTime) const {
  for (const OpCostEntry& e : ops) {
    if (e.part == part && e.op == op && e.microBatchSize == 0) return cpuTime ? e.cpuNs : e.wallNs;
  }
  return std::nullopt;
}

double Calibration::stragglerFactor(bool cpuTime) const {
  for (const OpCostEntry& e : ops) {
    if (e.part == "step" && e.op == "straggler") return std::max(1.0, cpuTime ? e.cpuNs : e.wallNs);
  }
  return 1.0;
}

const LinkFit* Calibration::linkFit(const std::string& dim, const std::string& collective,
                                    const std::string& link) const {
  const LinkFit* sameLink = nullptr;
  const LinkFit* any = nullptr;
  for (const LinkFit& f : links) {
    if (f.collective != collective) continue;
    if (f.dim == dim && f.link == link) return &f;
    if (f.link == link && sameLink == nullptr) sameLink = &f;
    if (any == nullptr) any = &f;
  }
  return sameLink != nullptr ? sameLink : any;
}

LinkFit fitAlphaBeta(const std::vector<std::pair<double, double>>& points) {
  LinkFit fit;
  const double n = static_cast<double>(points.size());
  fit.samples = static_cast<int64_t>(points.size());
  if (points.empty()) return fit;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  double minX = points.front().first, maxX = points.front().first;
  for (const auto& [x, y] : points) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
    minX = std::min(minX, x);
    maxX = std::max(maxX, x);
  }
  fit.minBytes = static_cast<int64_t>(minX);
  fit.maxBytes = static_cast<int64_t>(maxX);
  const double meanY = sy / n;
  const double varX = sxx - sx * sx / n;
  if (maxX <= minX || varX <= 0) {  // one size: no intercept to separate
    if (maxX >= kLatencyBoundBytes) {
      fit.betaNsPerByte = meanY / maxX;
    } else {
      fit.alphaNs = meanY;
    }
    return fit;
  }
  double beta = (sxy - sx * sy / n) / varX;
  double alpha = meanY - beta * sx / n;
  if (beta < 0) {  // time does not grow with size: a constant
    beta = 0;
    alpha = meanY;
  } else if (alpha < 0) {  // refit through the origin
    alpha = 0;
    beta = sxy / sxx;
  }
  fit.alphaNs = alpha;
  fit.betaNsPerByte = beta;
  return fit;
}

std::vector<std::string> calibrationMismatches(const Calibration& c, const ModelConfig& model) {
  std::vector<std::string> out;
  const ModelConfig& m = c.model;
  if (m.hidden != model.hidden || m.seqLen != model.seqLen || m.vocabSize != model.vocabSize ||
      m.numHeads != model.numHeads || m.mlpRatio != model.mlpRatio) {
    out.push_back("the calibration was measured on model " +
                  (m.preset.empty() ? std::string("custom") : m.preset) + " (C " +
                  std::to_string(m.hidden) + ", T " + std::to_string(m.seqLen) + ", V " +
                  std::to_string(m.vocabSize) + "), not on this one (C " +
                  std::to_string(model.hidden) + ", T " + std::to_string(model.seqLen) + ", V " +
                  std::to_string(model.vocabSize) + "): layer costs are taken as they are");
  }
  // A MoE block's cost depends on its experts, their top-k routing and
  // capacity, and where the MoE blocks sit.
  auto experts = [](const ModelConfig& x) {
    if (!x.hasMoe()) return std::string("a dense model");
    char text[128];
    std::snprintf(text, sizeof text, "%d experts, top-%d, capacity factor %g, every %d blocks",
                  x.experts, x.topK, x.capacityFactor, x.moeEvery);
    return std::string(text);
  };
  if (experts(m) != experts(model)) {
    out.push_back("the calibration was measured on " + experts(m) + ", predicting " +
                  experts(model) +
                  ": block costs are taken as they are (calibrate from a run of these "
                  "experts)");
  }
  return out;
}

Calibration withSingleEntry(Calibration c, const std::string& part, const std::string& op,
                            double value) {
  std::erase_if(c.ops, [&](const OpCostEntry& e) { return e.part == part && e.op == op; });
  c.ops.push_back({part, op, 0, 1, value, value, 1});
  return c;
}

bool isTimeCost(const OpCostEntry& e) {
  if (e.part == kSharedCoresPart) {  // ns per parameter
    return e.op == kStepEndWaitOp || e.op == kStepEndWaitPipelineOp;
  }
  if (e.part == kContentionPart) return false;
  return !(e.part == "step" && e.op == "straggler");
}

Calibration withTimesScaled(Calibration c, double factor) {
  for (OpCostEntry& e : c.ops) {
    if (!isTimeCost(e)) continue;
    e.wallNs *= factor;
    e.cpuNs *= factor;
  }
  for (LinkFit& f : c.links) {
    f.alphaNs *= factor;
    f.betaNsPerByte *= factor;
  }
  return c;
}

namespace {

bool isLayerPart(const std::string& part) {
  return part == "embedding" || part == "block" || part == "head";
}

using LayerKey = std::tuple<std::string, std::string, int32_t, int32_t>;  // part, op, b, tp

struct LayerSample {
  size_t part = 0;  // index into the merged calibrations
  double wallNs = 0, cpuNs = 0;
};

// Each layer key's samples, one per calibration that measured it.
std::map<LayerKey, std::vector<LayerSample>> layerSamples(const std::vector<Calibration>& parts) {
  std::map<LayerKey, std::vector<LayerSample>> out;
  for (size_t i = 0; i < parts.size(); ++i) {
    for (const OpCostEntry& e : parts[i].ops) {
      if (isLayerPart(e.part)) {
        out[{e.part, e.op, e.microBatchSize, e.tp}].push_back({i, e.wallNs, e.cpuNs});
      }
    }
  }
  return out;
}

std::pair<double, double> medians(const std::vector<LayerSample>& samples) {
  std::vector<double> wall, cpu;
  for (const LayerSample& s : samples) wall.push_back(s.wallNs), cpu.push_back(s.cpuNs);
  return {median(wall), median(cpu)};
}

// Each calibration's pace against the others on the layer keys it shares
// with them: the median over those keys of (the key's median / its own),
// wall and CPU time apart; 1 where it shares none (or a ratio is not a
// number > 0).
std::vector<std::pair<double, double>> layerPaces(
    const std::map<LayerKey, std::vector<LayerSample>>& samples, size_t parts) {
  std::vector<std::vector<double>> wall(parts), cpu(parts);
  for (const auto& [key, list] : samples) {
    if (list.size() < 2) continue;
    const auto [wallMid, cpuMid] = medians(list);
    for (const LayerSample& s : list) {
      if (s.wallNs > 0 && wallMid > 0) wall[s.part].push_back(wallMid / s.wallNs);
      if (s.cpuNs > 0 && cpuMid > 0) cpu[s.part].push_back(cpuMid / s.cpuNs);
    }
  }
  std::vector<std::pair<double, double>> out(parts, {1.0, 1.0});
  for (size_t i = 0; i < parts; ++i) {
    if (!wall[i].empty()) out[i].first = median(wall[i]);
    if (!cpu[i].empty()) out[i].second = median(cpu[i]);
  }
  return out;
}

}  // namespace

Calibration mergeCalibrations(const std::vector<Calibration>& parts) {
  Calibration out;
  if (parts.empty()) return out;
  out = parts.front();
  out.ops.clear();
  out.links.clear();
  for (const Calibration& c : parts) {
    out.ranksPerHost = std::max(out.ranksPerHost, c.ranksPerHost);
    for (const OpCostEntry& e : c.ops) {
      const auto it = std::find_if(out.ops.begin(), out.ops.end(),
                                   [&](const OpCostEntry& o) { return o.sameKey(e); });
      if (it == out.ops.end()) {
        out.ops.push_back(e);
      } else if (isLayerPart(e.part)) {
        it->samples += e.samples;
      }
    }
    for (const LinkFit& f : c.links) {
      const bool known = std::any_of(out.links.begin(), out.links.end(),
                                     [&](const LinkFit& o) { return o.sameKey(f); });
      if (!known) out.links.push_back(f);
    }
  }
  // A layer key several parts measured: their median. One that a single
  // part measured (ZB-H1's split backward, another micro-batch size): that
  // part's cost at the others' pace.
  const auto samples = layerSamples(parts);
  const auto paces = layerPaces(samples, parts.size());
  for (OpCostEntry& e : out.ops) {
    const auto it = samples.find({e.part, e.op, e.microBatchSize, e.tp});
    if (it == samples.end()) continue;
    if (it->second.size() > 1) {
      std::tie(e.wallNs, e.cpuNs) = medians(it->second);
    } else {
      const auto [wallPace, cpuPace] = paces[it->second.front().part];
      e.wallNs *= wallPace;
      e.cpuNs *= cpuPace;
    }
  }
  return out;
}

Calibration withOwnCosts(Calibration merged, const Calibration& own) {
  for (const OpCostEntry& e : own.ops) {
    for (OpCostEntry& m : merged.ops) {
      if (m.sameKey(e)) m = e;
    }
  }
  return merged;
}

std::vector<std::string> layerCoverageGaps(const Calibration& c, int32_t tp,
                                           int32_t microBatchSize) {
  std::vector<std::string> out;
  const auto cov = c.opCoverage("block", "forward", tp);
  if (!cov) return out;
  if (cov->tp != tp) {
    out.push_back("no layer costs measured at tp " + std::to_string(tp) + ": the tp " +
                  std::to_string(cov->tp) + " costs scaled by " + std::to_string(cov->tp) + "/" +
                  std::to_string(tp) + " (calibrate from a tp " + std::to_string(tp) +
                  " run for its own)");
  }
  const int32_t b = microBatchSize;
  if (b < cov->minSize || b > cov->maxSize) {
    out.push_back("micro-batch size " + std::to_string(b) + " outside the measured sizes (" +
                  std::to_string(cov->minSize) +
                  (cov->maxSize > cov->minSize ? ".." + std::to_string(cov->maxSize) : "") +
                  "): layer costs extrapolated linearly");
  }
  return out;
}

}  // namespace bubblescope::layout
