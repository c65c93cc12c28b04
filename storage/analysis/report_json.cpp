#include "storage/analysis/report_json.h"

#include <nlohmann/json.hpp>

namespace bubblescope::analysis {
namespace {

using json = nlohmann::ordered_json;

template <class T>
json orNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json msOrNull(const std::optional<double>& ns) {
  return ns ? json(*ns / 1e6) : json(nullptr);
}

json layoutJson(const RunReport& r) {
  json j = json::parse(r.run.info.layoutJson, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? json(r.run.info.layoutJson) : j;
}

// HTA's temporal breakdown and overlap, as shares of the GPU time; the
// idle breakdown per stream and the work launched before the profile.
json gpuJson(const std::optional<GpuTime>& g) {
  if (!g || g->windowNs <= 0) return nullptr;
  const double w = static_cast<double>(g->windowNs);
  json idle = json::array();
  for (const GpuStreamIdle& s : g->idle) {
    idle.push_back({{"stream", s.stream},
                    {"idle_ms", s.totalNs() / 1e6},
                    {"host_wait_ms", s.hostWaitNs / 1e6},
                    {"kernel_wait_ms", s.kernelWaitNs / 1e6},
                    {"other_ms", s.otherNs / 1e6}});
  }
  json before = json::array();
  for (const GpuStreamWork& b : g->launchedBeforeProfile) {
    before.push_back({{"stream", b.stream}, {"records", b.records}, {"ms", b.ns / 1e6}});
  }
  return {{"step_time_ms", g->windowNs / 1e6},
          {"steps", g->steps},
          {"launch_cut", g->launchCut},
          {"include_last_step", g->includeLastStep},
          {"busy_ms", g->busyNs / 1e6},
          {"utilization", g->busyNs / w},
          {"compute_ratio", g->computeNs / w},
          {"non_compute_ratio", g->nonComputeNs() / w},
          {"idle_ratio", g->idleNs() / w},
          {"comm_ratio", g->commNs / w},
          {"overlap",
           g->commNs > 0 ? json(static_cast<double>(g->overlapNs) / g->commNs) : json(nullptr)},
          {"idle_by_stream", idle},
          {"launched_before_profile", before}};
}

// The kernel breakdown by HTA type and the top kernels with their spread
// over the ranks, the launch statistics, the memory copies by kind.
json kernelsJson(const RunReport& report, const std::optional<GpuKernels>& k, int32_t top) {
  if (!k) return nullptr;
  const KernelBreakdown& b = k->breakdown;
  const double total = static_cast<double>(b.totalNs());
  json byType = json::object();
  for (size_t t = 0; t < kKernelTypeCount; ++t) {
    byType[std::string(trace_model::toString(static_cast<trace_model::KernelType>(t)))] = {
        {"records", b.countByType[t]},
        {"ms", b.nsByType[t] / 1e6},
        {"share", total > 0 ? json(b.nsByType[t] / total) : json(nullptr)}};
  }
  json kernels = json::array();
  for (const KernelStats* s : topKernels(b, top)) {
    const KernelSpread& spread = report.kernelSpreads.at(s->name);
    kernels.push_back({{"name", s->name},
                       {"type", std::string(trace_model::toString(s->type))},
                       {"count", s->count},
                       {"total_ms", s->totalNs / 1e6},
                       {"mean_ms", s->meanNs() / 1e6},
                       {"min_ms", s->minNs / 1e6},
                       {"p50_ms", s->p50Ns / 1e6},
                       {"p95_ms", s->p95Ns / 1e6},
                       {"max_ms", s->maxNs / 1e6},
                       {"share", total > 0 ? json(s->totalNs / total) : json(nullptr)},
                       {"ranks", spread.ranks},
                       {"rank_min_total_ms", spread.minTotalNs / 1e6},
                       {"rank_min", spread.minRank},
                       {"rank_max_total_ms", spread.maxTotalNs / 1e6},
                       {"rank_max", spread.maxRank},
                       {"rank_mean_total_ms", spread.meanTotalNs / 1e6},
                       {"max_over_mean", spread.maxOverMean()}});
  }
  json launches = nullptr;
  if (k->launches) {
    const LaunchStats& l = *k->launches;
    launches = {{"launches", l.launches},
                {"delay_p50_ms", l.delayP50Ns / 1e6},
                {"delay_p95_ms", l.delayP95Ns / 1e6},
                {"delay_max_ms", l.delayMaxNs / 1e6},
                {"delay_mean_ms", l.delayMeanNs / 1e6},
                {"shorter_than_launch", l.shorterThanLaunch}};
  }
  json copies = json::array();
  for (const MemoryCopyKind& c : k->copies) {
    copies.push_back(
        {{"kind", c.kind}, {"count", c.count}, {"bytes", orNull(c.bytes)}, {"ms", c.ns / 1e6}});
  }
  return {{"records", k->records},
          {"launched_before_profile", k->launchedBeforeProfile},
          {"after_last_step", k->afterLastStep},
          {"launch_cut", k->launchCut},
          {"include_last_step", k->includeLastStep},
          {"kernel_ms", total / 1e6},
          {"by_type", byType},
          {"top", kernels},
          {"launches", launches},
          {"memory_copies", copies}};
}

json rankJson(const RunReport& report, const RankReport& r, int32_t top) {
  json byDim = json::object();
  for (int d = 0; d < trace_model::kParallelDimCount; ++d) {
    if (r.commNsByDim[d] == 0 && r.commBytesByDim[d] == 0) continue;
    const double steps = r.steps > 0 ? r.steps : 1;
    byDim[std::string(trace_model::toString(static_cast<trace_model::ParallelDim>(d)))] = {
        {"time_ms", r.commNsByDim[d] / steps / 1e6}, {"bytes", r.commBytesByDim[d] / steps}};
  }
  json memory = json::object(), formula = json::object(), transient = json::object();
  for (const auto& m : r.memory) {
    memory[m.category] = orNull(m.measuredBytes);
    formula[m.category] = orNull(m.formulaBytes);
    transient[m.category] = orNull(m.formulaTransientBytes);
  }
  // A coordinate below 0 is unknown (an imported rank's): null.
  auto coordinate = [](int32_t c) { return c < 0 ? json(nullptr) : json(c); };
  return {{"rank", r.info.rank},
          {"dp", coordinate(r.info.dp)},
          {"tp", coordinate(r.info.tp)},
          {"pp", coordinate(r.info.pp)},
          {"host", r.info.host},
          {"steps", r.steps},
          {"whole_run", r.wholeRun},
          {"step_ms", r.steps > 0 ? json(r.stepNs / 1e6 / r.steps) : json(nullptr)},
          {"utilization", orNull(r.utilization())},
          {"comm_ratio", orNull(r.commRatio())},
          {"overlap", orNull(r.overlap())},
          {"exposed_comm_ratio", orNull(r.exposedCommRatio())},
          {"wait_ratio", orNull(r.waitRatio())},
          {"idle_ratio", orNull(r.idleRatio())},
          {"bubble_fraction", orNull(r.bubbleFraction())},
          {"comm_by_dim", byDim},
          {"memory_bytes", memory},
          {"memory_formula_bytes", formula},
          {"memory_formula_transient_bytes", transient},
          {"gpu", gpuJson(r.gpu)},
          {"gpu_kernels", kernelsJson(report, r.kernels, top)}};
}

json adviceJson(const std::vector<Advice>& advice) {
  json out = json::array();
  for (const Advice& a : advice) {
    json predicted = nullptr;
    if (a.predicted) {
      const PredictedGain& g = *a.predicted;
      predicted = {{"before", g.measuredBefore ? "measured" : "predicted"},
                   {"step_ms_before", g.stepNsBefore / 1e6},
                   {"step_ms_after", g.stepNsAfter / 1e6},
                   {"step_change", g.stepChange()},
                   {"tokens_per_s_before", g.tokensPerSBefore},
                   {"tokens_per_s_after", g.tokensPerSAfter},
                   {"gain", g.gain()},
                   {"peak_memory_bytes_before", g.peakMemoryBytesBefore},
                   {"peak_memory_bytes_after", g.peakMemoryBytesAfter}};
    }
    out.push_back(
        {{"rule", a.rule},
         {"dimension", a.dimension.empty() ? json(nullptr) : json(a.dimension)},
         {"message", a.message},
         {"change", a.change.empty() ? json(nullptr) : json(a.change)},
         {"layout", a.layout ? json::parse(layout::toJson(*a.layout).dump()) : json(nullptr)},
         {"predicted", predicted}});
  }
  return out;
}

}  // namespace

json runToJson(const RunReport& r, int32_t top) {
  json steps = json::array();
  for (const auto& s : r.steps) {
    steps.push_back({{"step", s.step},
                     {"loss", orNull(s.loss)},
                     {"tokens", s.tokens},
                     {"time_ms", s.timeNs / 1e6}});
  }
  json ranks = json::array();
  for (const auto& rank : r.ranks) ranks.push_back(rankJson(r, rank, top));
  json stages = json::array();
  for (const auto& s : r.stages) {
    stages.push_back({{"stage", s.stage},
                      {"ranks", s.ranks},
                      {"bubble_fraction", orNull(s.bubbleFraction)},
                      {"bubble_replayed", orNull(s.bubbleReplayed)},
                      {"bubble_formula", orNull(s.bubbleFormula)},
                      {"bubble_formula_text", s.bubbleFormulaText}});
  }
  json stragglers = json::array();
  for (const auto& s : r.stragglers) {
    stragglers.push_back({{"rank", s.rank},
                          {"reason", s.reason},
                          {"late_ms", s.lateNsMean / 1e6},
                          {"late_steps", s.lateSteps},
                          {"steps", s.steps}});
  }
  json volume = json::array();
  for (const auto& v : r.commVolume) {
    volume.push_back({{"dim", v.dim},
                      {"measured_bytes_per_step", v.measuredBytesPerStep},
                      {"formula_bytes_per_step", orNull(v.formulaBytesPerStep)}});
  }
  return {{"id", r.run.id},
          {"name", r.run.info.name},
          {"status", storage::toString(r.run.health)},
          {"error", r.run.error},
          {"source", storage::sourceName(r.run.info)},
          {"backend", r.run.info.backend},
          {"world_size", r.run.info.worldSize},
          {"events", r.run.eventCount},
          {"layout", layoutJson(r)},
          {"steps", steps},
          {"step_time_ms",
           {{"mean", msOrNull(r.stepTimeMeanNs)},
            {"std", msOrNull(r.stepTimeStdNs)},
            {"min", msOrNull(r.stepTimeMinNs)},
            {"max", msOrNull(r.stepTimeMaxNs)}}},
          {"ranks", ranks},
          {"stages", stages},
          {"tokens_per_s", orNull(r.tokensPerS)},
          {"replayed_step_time_ms", msOrNull(r.replayedStepNs)},
          {"slowest_rank", orNull(r.slowestRank)},
          {"slowest_stage", orNull(r.slowestStage)},
          {"stragglers", stragglers},
          {"comm_volume", volume},
          {"advice", adviceJson(r.advice)},
          {"notes", r.notes}};
}

json reportToJson(const std::vector<RunReport>& reports, int32_t top) {
  json runs = json::array();
  for (const auto& r : reports) runs.push_back(runToJson(r, top));
  return {{"runs", runs}};
}

}  // namespace bubblescope::analysis
