#include "storage/analysis/run_comparison.h"

#include <algorithm>
#include <cstdio>

#include "engine/layout/global_batch.h"
#include "storage/analysis/text_table.h"

namespace bubblescope::analysis {
namespace {

template <class T>
std::string str(const std::optional<T>& v) {
  if (!v) return "-";
  if constexpr (std::is_same_v<T, std::string>) {
    return *v;
  } else {
    return std::to_string(*v);
  }
}

std::string relativeChange(std::optional<double> a, std::optional<double> b) {
  if (!a || !b) return "-";
  if (*a == *b) return "same";
  if (*a == 0) return "new";
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", (*b - *a) / *a * 100.0);
  return text;
}

std::string pointChange(std::optional<double> a, std::optional<double> b) {
  if (!a || !b) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f pp", (*b - *a) * 100.0);
  return text;
}

std::optional<double> bubbleMean(const RunReport& r) {
  double sum = 0;
  int n = 0;
  for (const auto& s : r.stages) {
    if (s.bubbleFraction) sum += *s.bubbleFraction, ++n;
  }
  return n ? std::optional<double>(sum / n) : std::nullopt;
}

std::optional<double> bubbleFormulaOf(const RunReport& r) {
  return r.stages.empty() ? std::nullopt : r.stages.front().bubbleFormula;
}

// The largest measured total of model states and activations over the ranks.
std::optional<double> peakMemory(const RunReport& r) {
  std::optional<double> peak;
  for (const auto& rank : r.ranks) {
    double total = 0;
    bool any = false;
    for (const auto& m : rank.memory) {
      if (m.measuredBytes) total += *m.measuredBytes, any = true;
    }
    if (any) peak = std::max(peak.value_or(0), total);
  }
  return peak;
}

// HTA's GPU figure `share` (a share of the steps' time) meaned over the
// ranks with GPU records; unknown when no rank has any.
std::optional<double> gpuMean(const RunReport& r, double (*share)(const GpuTime&)) {
  double sum = 0;
  int n = 0;
  for (const auto& rank : r.ranks) {
    if (rank.gpu && rank.gpu->windowNs > 0) sum += share(*rank.gpu), ++n;
  }
  return n ? std::optional<double>(sum / n) : std::nullopt;
}

double gpuShare(int64_t ns, const GpuTime& g) {
  return static_cast<double>(ns) / static_cast<double>(g.windowNs);
}

std::optional<double> volumeOf(const RunReport& r, const std::string& dim) {
  for (const auto& v : r.commVolume) {
    if (v.dim == dim) return v.measuredBytesPerStep;
  }
  return std::nullopt;
}

// A preset by its name; any other model by its sizes.
std::string modelName(const layout::ModelConfig& m) {
  auto preset = layout::modelPreset(m.preset);
  if (preset.isOk() && *preset == m) return m.preset;
  return "custom (" + std::to_string(m.numLayers) + " layers, hidden " + std::to_string(m.hidden) +
         ", " + std::to_string(m.numHeads) + " heads)";
}

}  // namespace

std::optional<double> meanOverRanks(const RunReport& r,
                                    std::optional<double> (RankReport::*metric)() const) {
  double sum = 0;
  int n = 0;
  for (const auto& rank : r.ranks) {
    if (auto v = (rank.*metric)()) sum += *v, ++n;
  }
  return n ? std::optional<double>(sum / n) : std::nullopt;
}

std::vector<ComparisonRow> compareRuns(const RunReport& a, const RunReport& b) {
  std::vector<ComparisonRow> rows;
  // One row per layout key; "-" for a run without a known layout.
  auto layoutRow = [&](const std::string& name, auto value) {
    auto of = [&](const RunReport& r) { return r.layout ? value(*r.layout) : std::string("-"); };
    const std::string x = of(a), y = of(b);
    rows.push_back({name, x, y, x == y ? "same" : "changed"});
  };
  using layout::Layout;
  rows.push_back({"name", a.run.info.name, b.run.info.name, ""});
  rows.push_back({"status", storage::toString(a.run.health), storage::toString(b.run.health),
                  a.run.health == b.run.health ? "same" : "changed"});
  rows.push_back({"source", storage::sourceName(a.run.info), storage::sourceName(b.run.info),
                  std::string(storage::sourceName(a.run.info)) == storage::sourceName(b.run.info)
                      ? "same"
                      : "changed"});
  rows.push_back({"world size", std::to_string(a.run.info.worldSize),
                  std::to_string(b.run.info.worldSize),
                  a.run.info.worldSize == b.run.info.worldSize ? "same" : "changed"});
  // The model and the global batch: either changes what a step computes,
  // so a step time or a loss compares only in their light.
  layoutRow("model", [](const Layout& l) { return modelName(l.model); });
  layoutRow("dp", [](const Layout& l) { return std::to_string(l.dp); });
  layoutRow("tp", [](const Layout& l) { return std::to_string(l.tp); });
  layoutRow("pp", [](const Layout& l) { return std::to_string(l.pp); });
  layoutRow("zero stage",
            [](const Layout& l) { return std::to_string(layout::zeroStageNumber(l.zeroStage)); });
  layoutRow("schedule", [](const Layout& l) { return std::string(scheduleKindName(l.schedule)); });
  layoutRow("micro-batches", [](const Layout& l) { return std::to_string(l.microBatches); });
  layoutRow("virtual chunks", [](const Layout& l) { return std::to_string(l.virtualChunks); });
  layoutRow("micro-batch size", [](const Layout& l) { return std::to_string(l.microBatchSize); });
  layoutRow("global batch", [](const Layout& l) {
    const int64_t n = layout::globalBatchSequences(l);
    return std::to_string(n) + (n == 1 ? " sequence (" : " sequences (") +
           std::to_string(n * l.model.seqLen) + " tokens)";
  });
  layoutRow("ep", [](const Layout& l) { return std::to_string(l.ep); });
  layoutRow("recompute", [](const Layout& l) { return std::string(l.recompute ? "yes" : "no"); });
  layoutRow("grad compression", [](const Layout& l) { return l.gradCompression.toString(); });
  layoutRow("all-reduce", [](const Layout& l) {
    return std::string(layout::allReduceAlgorithmName(l.allReduce));
  });
  layoutRow("ranks per node", [](const Layout& l) {
    return l.ranksPerNode > 0 ? std::to_string(l.ranksPerNode) : std::string("the hosts");
  });
  layoutRow("inter-node link", [](const Layout& l) {
    if (!l.emulatesInterNodeLink()) return std::string("not emulated");
    return formatNumber(l.interNodeGbps, 3) + " Gb/s, " + formatNumber(l.interNodeLatencyUs, 1) +
           " us";
  });
  layoutRow("parameters", [](const Layout& l) { return std::to_string(l.model.parameterCount()); });

  auto timeRow = [&](const std::string& name, std::optional<double> x, std::optional<double> y) {
    rows.push_back({name, formatMs(x), formatMs(y), relativeChange(x, y)});
  };
  auto shareRow = [&](const std::string& name, std::optional<double> x, std::optional<double> y) {
    rows.push_back({name, formatPercent(x), formatPercent(y), pointChange(x, y)});
  };
  auto bytesRow = [&](const std::string& name, std::optional<double> x, std::optional<double> y) {
    rows.push_back({name, formatBytes(x), formatBytes(y), relativeChange(x, y)});
  };
  rows.push_back({"steps", std::to_string(a.steps.size()), std::to_string(b.steps.size()),
                  a.steps.size() == b.steps.size() ? "same" : "changed"});
  timeRow("step time mean (ms)", a.stepTimeMeanNs, b.stepTimeMeanNs);
  timeRow("step time std (ms)", a.stepTimeStdNs, b.stepTimeStdNs);
  rows.push_back({"tokens/s", formatNumber(a.tokensPerS, 0), formatNumber(b.tokensPerS, 0),
                  relativeChange(a.tokensPerS, b.tokensPerS)});
  shareRow("utilization (mean over ranks)", meanOverRanks(a, &RankReport::utilization),
           meanOverRanks(b, &RankReport::utilization));
  shareRow("comm ratio", meanOverRanks(a, &RankReport::commRatio),
           meanOverRanks(b, &RankReport::commRatio));
  shareRow("overlap", meanOverRanks(a, &RankReport::overlap),
           meanOverRanks(b, &RankReport::overlap));
  shareRow("exposed comm", meanOverRanks(a, &RankReport::exposedCommRatio),
           meanOverRanks(b, &RankReport::exposedCommRatio));
  shareRow("idle", meanOverRanks(a, &RankReport::idleRatio),
           meanOverRanks(b, &RankReport::idleRatio));
  shareRow("bubble measured (mean over stages)", bubbleMean(a), bubbleMean(b));
  shareRow("bubble formula", bubbleFormulaOf(a), bubbleFormulaOf(b));
  // HTA's temporal breakdown of the GPU (runs with GPU records: imported
  // traces, CUDA runs).
  const auto busy = [](const GpuTime& g) { return gpuShare(g.busyNs, g); };
  const auto compute = [](const GpuTime& g) { return gpuShare(g.computeNs, g); };
  const auto nonCompute = [](const GpuTime& g) { return gpuShare(g.nonComputeNs(), g); };
  const auto idle = [](const GpuTime& g) { return gpuShare(g.idleNs(), g); };
  if (gpuMean(a, busy) || gpuMean(b, busy)) {
    shareRow("GPU busy (mean over ranks)", gpuMean(a, busy), gpuMean(b, busy));
    shareRow("GPU compute", gpuMean(a, compute), gpuMean(b, compute));
    shareRow("GPU non-compute", gpuMean(a, nonCompute), gpuMean(b, nonCompute));
    shareRow("GPU idle", gpuMean(a, idle), gpuMean(b, idle));
  }
  bytesRow("peak memory per rank", peakMemory(a), peakMemory(b));
  for (const char* dim : {"dp+zero", "tp", "pp", "ep", "unknown"}) {
    const auto x = volumeOf(a, dim), y = volumeOf(b, dim);
    if (x || y) bytesRow(std::string("comm volume ") + dim + " per step", x, y);
  }
  rows.push_back({"slowest rank", str(a.slowestRank), str(b.slowestRank), ""});
  rows.push_back({"stragglers", std::to_string(a.stragglers.size()),
                  std::to_string(b.stragglers.size()),
                  a.stragglers.size() == b.stragglers.size() ? "same" : "changed"});
  return rows;
}

}  // namespace bubblescope::analysis
