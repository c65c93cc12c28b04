#include "storage/analysis/calibration_text.h"

#include <nlohmann/json.hpp>

#include "planning/contention.h"
#include "planning/core_sharing.h"
#include "planning/grad_reduction_cost.h"
#include "storage/analysis/text_table.h"

namespace bubblescope::analysis {

std::string calibrationToText(const layout::Calibration& c) {
  std::string out =
      "calibration " + std::to_string(c.id) + " (" + c.name + "): model " +
      (c.model.preset.empty() ? "custom" : c.model.preset) + ", host " + c.host + ", " +
      std::to_string(c.ranksPerHost) + " ranks on " + std::to_string(c.cores) + " cores" +
      (c.oversubscribed() ? " (oversubscribed: predictions use CPU time)" : "") + "\n\n";
  TextTable ops{{"part", "op", "b", "tp", "wall ms", "cpu ms", "samples"}, {}, false};
  for (const layout::OpCostEntry& e : c.ops) {
    // Size 0: the optimizer's and the step's time outside ops are per
    // parameter (shown in ns), the straggler factor and the shared cores'
    // entries (core_sharing.h) ratios, the background a count of threads
    // (contention.h); a gradient codec is per element (its
    // b: PowerSGD's rank); the others ms.
    const bool threads = e.part == layout::kContentionPart && e.op == layout::kBackgroundOp;
    const bool ratio = !layout::isTimeCost(e) && !threads;
    const bool codec = e.part == layout::kCodecPart;
    const bool bucket = e.part == layout::kZeroBucketPart &&
                        (e.op == layout::kZeroBucketOp || e.op == layout::kZeroBucketSkewOp);
    const bool raw = e.microBatchSize == 0 || codec;
    ops.rows.push_back(
        {e.part,
         e.op + (ratio     ? " (ratio)"
                 : threads ? " (busy threads)"
                 : codec ? (e.microBatchSize > 0 ? " (ns/element, b = rank)" : " (ns/element)")
                 : bucket ? " (ns/element per micro-batch)"
                 : raw   ? " (ns/param)"
                         : ""),
         std::to_string(e.microBatchSize), std::to_string(e.tp),
         raw ? formatNumber(e.wallNs) : formatMs(e.wallNs),
         raw ? formatNumber(e.cpuNs) : formatMs(e.cpuNs), std::to_string(e.samples)});
  }
  out += "Compute per micro-batch\n" + ops.render(false);
  if (c.links.empty()) return out + "\nno communication measured\n";
  TextTable links{
      {"dim", "collective", "link", "group", "alpha us", "GB/s", "bytes", "samples"}, {}, false};
  for (const layout::LinkFit& f : c.links) {
    links.rows.push_back({f.dim, f.collective, f.link, std::to_string(f.groupSize),
                          formatNumber(f.alphaNs / 1e3),
                          f.betaNsPerByte > 0 ? formatNumber(1.0 / f.betaNsPerByte) : "-",
                          std::to_string(f.minBytes) + ".." + std::to_string(f.maxBytes),
                          std::to_string(f.samples)});
  }
  return out + "\nCommunication, time = alpha + bytes / bandwidth\n" + links.render(false);
}

nlohmann::json calibrationToJson(const layout::Calibration& c) {
  nlohmann::json ops = nlohmann::json::array(), links = nlohmann::json::array();
  for (const layout::OpCostEntry& e : c.ops) {
    ops.push_back({{"part", e.part},
                   {"op", e.op},
                   {"micro_batch_size", e.microBatchSize},
                   {"tp", e.tp},
                   {"wall_ns", e.wallNs},
                   {"cpu_ns", e.cpuNs},
                   {"samples", e.samples}});
  }
  for (const layout::LinkFit& f : c.links) {
    links.push_back({{"dim", f.dim},
                     {"collective", f.collective},
                     {"link", f.link},
                     {"group_size", f.groupSize},
                     {"alpha_ns", f.alphaNs},
                     {"beta_ns_per_byte", f.betaNsPerByte},
                     {"samples", f.samples},
                     {"min_bytes", f.minBytes},
                     {"max_bytes", f.maxBytes}});
  }
  return {{"id", c.id},
          {"name", c.name},
          {"source_run", c.sourceRun},
          {"method", c.method},
          {"host", c.host},
          {"cores", c.cores},
          {"ranks_per_host", c.ranksPerHost},
          {"model", layout::toJson(c.model)},
          {"ops", ops},
          {"links", links}};
}

}  // namespace bubblescope::analysis
