#include "storage/analysis/gpu_kernel_text.h"

#include "storage/analysis/last_step_cut.h"
#include "storage/analysis/text_table.h"

namespace bubblescope::analysis {
namespace {

using trace_model::KernelType;

constexpr KernelType kTypes[] = {KernelType::kComputation, KernelType::kCommunication,
                                 KernelType::kMemory, KernelType::kOther};

std::optional<double> share(int64_t ns, int64_t of) {
  if (of <= 0) return std::nullopt;
  return static_cast<double>(ns) / static_cast<double>(of);
}

std::string us(double ns) {
  return formatNumber(ns / 1e3, 1);
}

std::string nameCell(const std::string& name, bool markdown) {
  std::string out =
      name.size() > kKernelNameWidth ? name.substr(0, kKernelNameWidth - 3) + "..." : name;
  if (!markdown) return out;
  std::string escaped;
  for (char c : out) {
    if (c == '|') escaped += '\\';
    escaped += c;
  }
  return escaped;
}

// The records every kernel table covers (the GPU time's: last_step_cut.h),
// for its heading.
std::string covered(const RunReport& report) {
  for (const auto& r : report.ranks) {
    if (r.kernels) return coveredGpuRecords(r.kernels->launchCut, r.kernels->includeLastStep);
  }
  return "";
}

std::string typeTable(const RunReport& report, bool markdown) {
  TextTable t{{"rank", "records", "left out", "kernel ms", "computation", "communication",
               "memory", "other"},
              {}};
  for (const auto& r : report.ranks) {
    if (!r.kernels) continue;
    const KernelBreakdown& b = r.kernels->breakdown;
    std::vector<std::string> row{
        std::to_string(r.info.rank), std::to_string(r.kernels->records),
        std::to_string(r.kernels->launchedBeforeProfile + r.kernels->afterLastStep),
        formatMs(static_cast<double>(b.totalNs()))};
    for (KernelType type : kTypes) row.push_back(formatPercent(share(b.ns(type), b.totalNs())));
    t.rows.push_back(std::move(row));
  }
  if (t.rows.empty()) return "";
  return formatHeading("GPU kernel time by type, of " + covered(report) +
                           " (HTA kernel types; summed record durations, shares of the rank's "
                           "kernel time; left out: records launched before the profile or "
                           "outside the steps counted)",
                       markdown) +
         t.render(markdown);
}

std::string topTable(const RunReport& report, bool markdown, int32_t top) {
  TextTable t{{"rank", "type", "count", "total ms", "mean us", "p95 us", "share", "ranks",
               "rank min ms", "rank max ms", "max/mean", "kernel"},
              {},
              /*lastColumnLeft=*/true};
  for (const auto& r : report.ranks) {
    if (!r.kernels) continue;
    const KernelBreakdown& b = r.kernels->breakdown;
    for (const KernelStats* k : topKernels(b, top)) {
      const KernelSpread& s = report.kernelSpreads.at(k->name);
      t.rows.push_back({std::to_string(r.info.rank), std::string(trace_model::toString(k->type)),
                        std::to_string(k->count), formatMs(static_cast<double>(k->totalNs)),
                        us(k->meanNs()), us(static_cast<double>(k->p95Ns)),
                        formatPercent(share(k->totalNs, b.totalNs())), std::to_string(s.ranks),
                        formatMs(static_cast<double>(s.minTotalNs)),
                        formatMs(static_cast<double>(s.maxTotalNs)),
                        formatNumber(s.maxOverMean(), 2), nameCell(k->name, markdown)});
    }
  }
  if (t.rows.empty()) return "";
  return formatHeading("Top " + std::to_string(top) + " kernels per rank by total time, of " +
                           covered(report) +
                           " (p95: nearest rank; share of the rank's kernel time; rank min/max: "
                           "the kernel's total on the ranks that ran it)",
                       markdown) +
         t.render(markdown);
}

std::string launchTable(const RunReport& report, bool markdown) {
  TextTable t{
      {"rank", "launches", "delay p50 us", "delay p95 us", "delay max us", "shorter than launch"},
      {}};
  for (const auto& r : report.ranks) {
    if (!r.kernels || !r.kernels->launches) continue;
    const LaunchStats& l = *r.kernels->launches;
    t.rows.push_back({std::to_string(r.info.rank), std::to_string(l.launches),
                      us(static_cast<double>(l.delayP50Ns)), us(static_cast<double>(l.delayP95Ns)),
                      us(static_cast<double>(l.delayMaxNs)),
                      std::to_string(l.shorterThanLaunch) + " (" +
                          formatPercent(share(l.shorterThanLaunch, l.launches)) + ")"});
  }
  if (t.rows.empty()) return "";
  return formatHeading("CUDA launches of " + covered(report) +
                           " (HTA launch statistics: delay = GPU start - launch call's end, "
                           "0 if negative; shorter than launch = GPU duration under the call's)",
                       markdown) +
         t.render(markdown);
}

std::string copiesTable(const RunReport& report, bool markdown) {
  TextTable t{{"rank", "kind", "count", "bytes", "total ms", "GB/s"}, {}};
  for (const auto& r : report.ranks) {
    if (!r.kernels) continue;
    for (const MemoryCopyKind& c : r.kernels->copies) {
      std::optional<double> rate;
      if (c.bytes && c.ns > 0) rate = static_cast<double>(*c.bytes) / static_cast<double>(c.ns);
      t.rows.push_back({std::to_string(r.info.rank), c.kind, std::to_string(c.count),
                        c.bytes ? formatBytes(static_cast<double>(*c.bytes)) : "-",
                        formatMs(static_cast<double>(c.ns)), formatNumber(rate, 2)});
    }
  }
  if (t.rows.empty()) return "";
  return formatHeading("Memory copies by kind, of " + covered(report) +
                           " (summed durations; GB/s = bytes / time)",
                       markdown) +
         t.render(markdown);
}

}  // namespace

std::string gpuKernelText(const RunReport& report, bool markdown, int32_t topKernels) {
  return typeTable(report, markdown) + topTable(report, markdown, topKernels) +
         launchTable(report, markdown) + copiesTable(report, markdown);
}

}  // namespace bubblescope::analysis
