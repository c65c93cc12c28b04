#include "storage/analysis/report_text.h"

#include <cmath>
#include <cstdio>

#include "storage/analysis/gpu_kernel_text.h"
#include "storage/analysis/gpu_report_text.h"
#include "storage/analysis/imported_layout.h"
#include "storage/analysis/text_table.h"

namespace bubblescope::analysis {
namespace {

constexpr size_t kStepsShown = 20;

std::string heading(const std::string& title, bool markdown) {
  return formatHeading(title, markdown);
}

std::string commByDim(const RankReport& r) {
  std::string out;
  for (int d = 0; d < trace_model::kParallelDimCount; ++d) {
    if (r.commNsByDim[d] == 0 && r.commBytesByDim[d] == 0) continue;
    const double steps = r.steps > 0 ? r.steps : 1;
    if (!out.empty()) out += ", ";
    out += std::string(trace_model::toString(static_cast<trace_model::ParallelDim>(d))) + " " +
           formatMs(r.commNsByDim[d] / steps) + " ms " + formatBytes(r.commBytesByDim[d] / steps);
  }
  return out.empty() ? "-" : out;
}

// 125 -> "125", 1234567 -> "1.23M".
std::string formatCount(double n) {
  if (n < 1e3) return formatNumber(n, 0);
  if (n < 1e6) return formatNumber(n / 1e3, 2) + "K";
  if (n < 1e9) return formatNumber(n / 1e6, 2) + "M";
  return formatNumber(n / 1e9, 2) + "B";
}

std::optional<double> asDouble(std::optional<int64_t> v) {
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

std::string ranksTable(const RunReport& report, bool markdown) {
  TextTable t{{"rank", "dp/tp/pp", "step ms", "util", "comm", "overlap", "exposed", "wait", "idle",
               "comm per step by dim"},
              {},
              /*lastColumnLeft=*/true};
  for (const auto& r : report.ranks) {
    t.rows.push_back({std::to_string(r.info.rank),
                      coordinateText(r.info.dp) + "/" + coordinateText(r.info.tp) + "/" +
                          coordinateText(r.info.pp),
                      r.steps ? formatMs(static_cast<double>(r.stepNs) / r.steps) : "-",
                      formatPercent(r.utilization()), formatPercent(r.commRatio()),
                      formatPercent(r.overlap()), formatPercent(r.exposedCommRatio()),
                      formatPercent(r.waitRatio()), formatPercent(r.idleRatio()), commByDim(r)});
  }
  return heading("Ranks (shares of step time; overlap is of comm time)", markdown) +
         t.render(markdown);
}

std::string stagesTable(const RunReport& report, bool markdown) {
  if (report.stages.empty()) return "";  // no rank's stage is known (an imported run)
  TextTable t{{"stage", "ranks", "bubble measured", "bubble replayed", "bubble formula", "formula"},
              {},
              true};
  for (const auto& s : report.stages) {
    std::string ranks;
    for (int32_t r : s.ranks) {
      if (!ranks.empty()) ranks += ',';
      ranks += std::to_string(r);
    }
    t.rows.push_back({std::to_string(s.stage), ranks, formatPercent(s.bubbleFraction),
                      formatPercent(s.bubbleReplayed), formatPercent(s.bubbleFormula),
                      s.bubbleFormulaText.empty() ? "-" : s.bubbleFormulaText});
  }
  return heading("Pipeline stages (bubble = (wait + idle) / step)", markdown) + t.render(markdown);
}

std::string memoryTable(const RunReport& report, bool markdown) {
  bool any = false;
  for (const auto& r : report.ranks) {
    for (const auto& m : r.memory) any |= m.measuredBytes || m.formulaBytes;
  }
  if (!any) return "";
  TextTable t{{"rank"}, {}};
  if (!report.ranks.empty()) {
    for (const auto& m : report.ranks[0].memory) t.header.push_back(m.category + " (formula)");
  }
  for (const auto& r : report.ranks) {
    std::vector<std::string> row{std::to_string(r.info.rank)};
    for (const auto& m : r.memory) {
      std::string formula;
      if (m.formulaBytes) {
        formula = " (" + formatBytes(asDouble(m.formulaBytes));
        if (m.formulaTransientBytes.value_or(0) > 0) {
          formula += " + " + formatBytes(asDouble(m.formulaTransientBytes));
        }
        formula += ")";
      }
      row.push_back(formatBytes(asDouble(m.measuredBytes)) + formula);
    }
    t.rows.push_back(std::move(row));
  }
  return heading("Memory per rank, peak (ZeRO formula, fp32 Adam: kept + transient)", markdown) +
         t.render(markdown);
}

// What the dp gradients' compression did to their bytes: the uncompressed
// formula over the measured dp+zero bytes (docs/parallel.md).
std::string gradCompressionLine(const RunReport& report) {
  if (!report.layout || !report.layout->gradCompression.compresses()) return "";
  std::string out = "grad_compression " + report.layout->gradCompression.toString();
  for (const auto& v : report.commVolume) {
    if (v.dim == std::string("dp+zero") && v.formulaBytesPerStep && v.measuredBytesPerStep > 0) {
      out += ": dp+zero bytes per step " + formatBytes(v.measuredBytesPerStep) +
             " against the uncompressed formula's " + formatBytes(v.formulaBytesPerStep) +
             ", compression ratio " +
             formatNumber(*v.formulaBytesPerStep / v.measuredBytesPerStep, 2);
    }
  }
  return out + "\n";
}

// The dp all-reduce's algorithm and the emulated inter-node link the run
// was made with (its stored layout), so a reader knows the link was not real.
std::string allReduceLines(const RunReport& report) {
  if (!report.layout) return "";
  const layout::Layout& l = *report.layout;
  std::string out;
  if (l.allReduce == layout::AllReduceAlgorithm::kHierarchical) {
    out += "all_reduce hierarchical: " +
           (l.ranksPerNode > 0 ? "emulated nodes of " + std::to_string(l.ranksPerNode) + " ranks"
                               : std::string("nodes from the hosts")) +
           "\n";
  }
  const std::string link = layout::interNodeLinkLine(l);
  return link.empty() ? out : out + link + "\n";
}

std::string volumeTable(const RunReport& report, bool markdown) {
  if (report.commVolume.empty()) return "";
  TextTable t{{"dim", "measured per step", "formula per step", "measured / formula"}, {}};
  for (const auto& v : report.commVolume) {
    std::optional<double> ratio;
    if (v.formulaBytesPerStep && *v.formulaBytesPerStep > 0) {
      ratio = v.measuredBytesPerStep / *v.formulaBytesPerStep;
    }
    t.rows.push_back({v.dim, formatBytes(v.measuredBytesPerStep),
                      formatBytes(v.formulaBytesPerStep), formatNumber(ratio, 2)});
  }
  return heading("Communication volume per rank (all-reduce counted twice)", markdown) +
         t.render(markdown) + gradCompressionLine(report) + allReduceLines(report);
}

std::string stepsTable(const RunReport& report, bool markdown) {
  if (report.steps.empty()) return "";
  TextTable t{{"step", "loss", "time ms", "tokens"}, {}};
  for (size_t i = 0; i < report.steps.size() && i < kStepsShown; ++i) {
    const auto& s = report.steps[i];
    t.rows.push_back({std::to_string(s.step), formatNumber(s.loss, 4), formatMs(s.timeNs),
                      s.tokens > 0 ? std::to_string(s.tokens) : "-"});
  }
  std::string more;
  if (report.steps.size() > kStepsShown) {
    more = std::string("(") + std::to_string(report.steps.size() - kStepsShown) + " more steps)\n";
  }
  return heading("Steps", markdown) + t.render(markdown) + more;
}

// Each piece of advice: the finding, the layout change, its predicted gain.
std::string adviceText(const RunReport& report, bool markdown) {
  if (report.advice.empty()) return "";
  std::string out = heading("Advice (gains predicted from this run's own calibration)", markdown);
  for (const Advice& a : report.advice) {
    const std::string dim = a.dimension.empty() ? "" : " " + a.dimension;
    out += markdown ? "- **" + a.rule + "**" + dim + ": " + a.message + "\n"
                    : a.rule + dim + ": " + a.message + "\n";
    const std::string indent = markdown ? "  - " : "  ";
    if (!a.change.empty()) {
      out += indent + "change: " + (markdown ? "`" + a.change + "`" : a.change) + "\n";
    }
    if (a.predicted) out += indent + a.predictedText() + "\n";
  }
  return out;
}

}  // namespace

std::string layoutSummary(const std::optional<layout::Layout>& layout) {
  if (!layout) return "no layout";
  const layout::Layout& l = *layout;
  auto n = [](int64_t v) { return std::to_string(v); };
  std::string out = "dp" + n(l.dp) + " tp" + n(l.tp) + " pp" + n(l.pp) + " zero" +
                    n(layout::zeroStageNumber(l.zeroStage)) + " " +
                    layout::scheduleKindName(l.schedule) + " m=" + n(l.microBatches);
  if (l.schedule == layout::ScheduleKind::kInterleaved) out += " v=" + n(l.virtualChunks);
  out += " b=" + n(l.microBatchSize) +
         " params=" + formatCount(static_cast<double>(l.model.parameterCount()));
  return out;
}

std::string reportToText(const RunReport& report, bool markdown, int32_t topKernels) {
  const auto& run = report.run;
  char line[512];
  std::snprintf(line, sizeof line, "%srun %lld  %s  [%s]  %s, world %d, %s, %lld events\n",
                markdown ? "## " : "", static_cast<long long>(run.id), run.info.name.c_str(),
                storage::toString(run.health), run.info.backend.c_str(), run.info.worldSize,
                storage::sourceName(run.info), static_cast<long long>(run.eventCount));
  std::string out = line;
  if (markdown) out += '\n';
  out += "layout: " +
         (run.info.imported ? importedLayoutSummary(run.info) : layoutSummary(report.layout)) +
         "\n";
  for (const auto& note : report.notes) out += (markdown ? "- note: " : "note: ") + note + "\n";

  std::string slowest;
  if (report.slowestRank) slowest += "slowest rank " + std::to_string(*report.slowestRank);
  if (report.slowestStage) {
    if (!slowest.empty()) slowest += ", ";
    slowest += "slowest stage " + std::to_string(*report.slowestStage);
  }
  std::snprintf(line, sizeof line,
                "%sstep time %s ms mean, %s ms std (min %s, max %s) over %zu steps; "
                "tokens/s %s%s%s\n",
                markdown ? "\n" : "", formatMs(report.stepTimeMeanNs).c_str(),
                formatMs(report.stepTimeStdNs).c_str(), formatMs(report.stepTimeMinNs).c_str(),
                formatMs(report.stepTimeMaxNs).c_str(), report.steps.size(),
                formatNumber(report.tokensPerS, 0).c_str(), slowest.empty() ? "" : "; ",
                slowest.c_str());
  out += line;
  if (report.ranks.empty()) return out;
  out += ranksTable(report, markdown);
  out += gpuReportText(report, markdown);
  out += gpuKernelText(report, markdown, topKernels);
  out += stagesTable(report, markdown);
  out += memoryTable(report, markdown);
  out += volumeTable(report, markdown);
  out += heading("Stragglers", markdown);
  if (report.stragglers.empty()) out += "none\n";
  for (const auto& s : report.stragglers) {
    std::snprintf(line, sizeof line, "%srank %d: %s late by %s ms on average in %d of %d steps\n",
                  markdown ? "- " : "", s.rank, s.reason.c_str(), formatMs(s.lateNsMean).c_str(),
                  s.lateSteps, s.steps);
    out += line;
  }
  out += adviceText(report, markdown);
  out += stepsTable(report, markdown);
  return out;
}

}  // namespace bubblescope::analysis
