#include "planning/core_sharing.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "planning/contention.h"
#include "planning/link_class.h"

namespace bubblescope::layout {
namespace {

int32_t busiestHostRanks(const std::vector<std::string>& placed) {
  std::map<std::string, int32_t> perHost;
  int32_t most = 0;
  for (const std::string& h : placed) most = std::max(most, ++perHost[h]);
  return most;
}

const OpCostEntry* sharedEntry(const Calibration& c, const std::string& op) {
  for (const OpCostEntry& e : c.ops) {
    if (e.part == kSharedCoresPart && e.op == op) return &e;
  }
  return nullptr;
}

}  // namespace

std::string coreSharingWarning(const CoreSharing& s, std::optional<double> meanStretch,
                               bool placed) {
  const double paid = s.paid;
  const bool background = s.computeFactor() > 1 && s.background >= 0.5;
  if (!s.shared() && !background) return "";
  char factor[320];
  if (meanStretch && paid < 1) {
    std::snprintf(factor, sizeof factor,
                  "%.2fx slower on average (time-sharing: %.2fx while every stage computes, of "
                  "which a tp group's ranks pay %.0f%%: their waits for each other, priced in "
                  "the tp all-reduces, hold the rest; a stage waiting in the pipeline's bubbles "
                  "leaves its cores to the others)",
                  *meanStretch, s.computeFactor(), 100 * paid);
  } else if (paid < 1) {
    std::snprintf(factor, sizeof factor,
                  "%.2fx slower (time-sharing: %.2fx, of which a tp group's ranks pay %.0f%%: "
                  "their waits for each other, priced in the tp all-reduces, hold the rest)",
                  s.paidFactor(), s.computeFactor(), 100 * paid);
  } else if (meanStretch && placed) {
    std::snprintf(factor, sizeof factor,
                  "%.2fx slower on average (placed as the scheduler does: a running rank keeps "
                  "its core, a woken one joins the core of the rank that woke it; up to %dx for "
                  "ranks sharing a core)",
                  *meanStretch, s.ranks - s.cores + 1);
  } else if (meanStretch) {
    std::snprintf(factor, sizeof factor,
                  "%.2fx slower on average (%.2fx while every stage computes; a stage waiting "
                  "in the pipeline's bubbles leaves its cores to the others)",
                  *meanStretch, s.computeFactor());
  } else {
    std::snprintf(factor, sizeof factor, "%.2fx slower%s", s.computeFactor(),
                  s.shared() ? " (time-sharing)" : "");
  }
  if (s.shared()) {
    return std::to_string(s.ranks) + " ranks on a host of " + std::to_string(s.cores) +
           " cores: they share the cores (oversubscribed), so compute is predicted " + factor;
  }
  char text[400];
  std::snprintf(text, sizeof text,
                "%.1f busy threads of other work beside %d rank%s on a host of %d cores: "
                "compute is predicted %s",
                s.background, s.ranks, s.ranks == 1 ? "" : "s", s.cores, factor);
  return text;
}

bool hasSharedTpFit(const Calibration& c) {
  const LinkFit* f = c.linkFit("tp", "allreduce", kSharedCores);
  return f && f->dim == "tp" && f->link == kSharedCores;
}

CoreSharing coreSharingOf(const std::vector<std::string>& placed, const Calibration& c,
                          double background, int32_t tp) {
  CoreSharing s;
  s.ranks = busiestHostRanks(placed);
  s.cores = c.cores;
  s.background = background;
  s.ratio = computeStretch(s.ranks, background, c.cores);
  if (!s.shared()) return s;
  // The wall column, also for costs in thread CPU time: the stretch s
  // assumes the scheduler shares the cores fairly, and the turns time-shared
  // ranks take are not fair; their CPU time cannot see that (dp4 on the 2
  // cores: 1.03-1.10 in wall time, 1.006-1.009 in CPU time over eight
  // benches, each of which measured dp4 m4 5-16 % slower than predicted
  // from the CPU column).
  if (const OpCostEntry* e = sharedEntry(c, "straggler")) s.straggler = std::max(1.0, e->wallNs);
  const OpCostEntry* e = sharedEntry(c, kTpStretchPaidOp);
  if (tp > 1 && e && e->wallNs >= 0 && !c.oversubscribed() && hasSharedTpFit(c)) {
    s.paid = std::min(1.0, e->wallNs);
  }
  return s;
}

Calibration withSharedCores(Calibration c, const Calibration& shared) {
  if (!shared.oversubscribed()) return c;
  for (const LinkFit& f : shared.links) {
    if (f.link != kSameHost) continue;
    LinkFit g = f;
    g.link = kSharedCores;
    const bool known = std::any_of(c.links.begin(), c.links.end(),
                                   [&](const LinkFit& o) { return o.sameKey(g); });
    if (!known) c.links.push_back(g);
  }
  // One straggler entry: the shared run's replaces an earlier one.
  const auto straggler = std::find_if(shared.ops.begin(), shared.ops.end(), [](const auto& e) {
    return e.part == "step" && e.op == "straggler";
  });
  if (straggler != shared.ops.end()) {
    c.ops.erase(std::remove_if(c.ops.begin(), c.ops.end(),
                               [](const OpCostEntry& o) {
                                 return o.part == kSharedCoresPart && o.op == "straggler";
                               }),
                c.ops.end());
    c.ops.push_back({kSharedCoresPart, "straggler", 0, 1, straggler->wallNs, straggler->cpuNs,
                     straggler->samples});
  }
  return c;
}

}  // namespace bubblescope::layout
