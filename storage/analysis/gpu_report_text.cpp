#include "storage/analysis/gpu_report_text.h"

#include <algorithm>

#include "storage/analysis/last_step_cut.h"
#include "storage/analysis/text_table.h"

namespace bubblescope::analysis {
namespace {

std::optional<double> share(int64_t ns, int64_t of) {
  if (of <= 0) return std::nullopt;
  return static_cast<double>(ns) / static_cast<double>(of);
}

// Which steps' launches count, as HTA's include_last_profiler_step says.
std::string stepsText(const GpuTime& g) {
  return coveredGpuRecords(g.launchCut, g.includeLastStep);
}

std::string breakdownTable(const RunReport& report, bool markdown) {
  TextTable t{{"rank", "step ms", "gpu busy", "compute", "non-compute", "idle", "comm", "overlap"},
              {}};
  const GpuTime* any = nullptr;
  for (const auto& r : report.ranks) {
    if (!r.gpu || r.gpu->windowNs <= 0) continue;
    const GpuTime& g = *r.gpu;
    any = &g;
    const int64_t w = g.windowNs;
    t.rows.push_back(
        {std::to_string(r.info.rank), formatMs(static_cast<double>(w) / std::max(1, g.steps)),
         formatPercent(share(g.busyNs, w)), formatPercent(share(g.computeNs, w)),
         formatPercent(share(g.nonComputeNs(), w)), formatPercent(share(g.idleNs(), w)),
         formatPercent(share(g.commNs, w)), formatPercent(share(g.overlapNs, g.commNs))});
  }
  if (any == nullptr) return "";
  return formatHeading("GPU time (HTA temporal breakdown of " + stepsText(*any) +
                           "; shares of the GPU time, overlap of comm time)",
                       markdown) +
         t.render(markdown);
}

std::string idleTable(const RunReport& report, bool markdown) {
  TextTable t{{"rank", "stream", "idle ms", "host wait", "kernel wait", "other"}, {}};
  for (const auto& r : report.ranks) {
    if (!r.gpu) continue;
    for (const GpuStreamIdle& s : r.gpu->idle) {
      const int64_t total = s.totalNs();
      t.rows.push_back(
          {std::to_string(r.info.rank), std::to_string(s.stream),
           formatMs(static_cast<double>(total)), formatPercent(share(s.hostWaitNs, total)),
           formatPercent(share(s.kernelWaitNs, total)), formatPercent(share(s.otherNs, total))});
    }
  }
  if (t.rows.empty()) return "";
  return formatHeading(
             "GPU idle time by stream (HTA idle breakdown: gaps between a stream's records; "
             "host wait = launched after the previous ended, kernel wait = gap under 30 us; "
             "shares of the stream's idle time)",
             markdown) +
         t.render(markdown);
}

std::string beforeProfileLines(const RunReport& report, bool markdown) {
  std::string out;
  for (const auto& r : report.ranks) {
    if (!r.gpu) continue;
    for (const GpuStreamWork& w : r.gpu->launchedBeforeProfile) {
      out += std::string(markdown ? "- " : "") + "rank " + std::to_string(r.info.rank) +
             ": GPU work launched before the profile: " + formatMs(static_cast<double>(w.ns)) +
             " ms on stream " + std::to_string(w.stream) + " (" + std::to_string(w.records) +
             " records whose launch is not in the trace; not in the GPU time)\n";
    }
  }
  return out;
}

}  // namespace

std::string gpuReportText(const RunReport& report, bool markdown) {
  const std::string breakdown = breakdownTable(report, markdown);
  const std::string before = beforeProfileLines(report, markdown);
  if (breakdown.empty() && before.empty()) {
    // An imported run is read for its GPU work: say there is none.
    if (!report.run.info.imported) return "";
    return formatHeading("GPU time", markdown) +
           "none: no rank has GPU records (kernels, collectives, memcpy or memset on a GPU "
           "stream)\n";
  }
  return breakdown + before + idleTable(report, markdown);
}

}  // namespace bubblescope::analysis
