#include "storage/analysis/advice.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "planning/formulas.h"
#include "planning/prediction.h"
#include "planning/prediction_summary.h"
#include "storage/analysis/layout_variants.h"
#include "storage/analysis/run_report.h"
#include "storage/analysis/text_table.h"

namespace bubblescope::analysis {
namespace {

using layout::Layout;
using layout::Prediction;

std::string signedPercent(double change) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", change * 100);
  return buf;
}

// The global batch in sequences.
int64_t sequences(const Layout& l) {
  return int64_t{l.dp} * l.microBatches * l.microBatchSize;
}

double peakOf(const Prediction& p) {
  double peak = 0;
  for (double b : p.memoryBytes) peak = std::max(peak, b);
  return peak;
}

// The largest measured memory of a rank (the sum of its categories' peaks).
std::optional<double> measuredPeakBytes(const RunReport& r) {
  std::optional<double> peak;
  for (const RankReport& rank : r.ranks) {
    double sum = 0;
    bool any = false;
    for (const auto& m : rank.memory) {
      if (!m.measuredBytes) continue;
      sum += static_cast<double>(*m.measuredBytes);
      any = true;
    }
    if (any) peak = std::max(peak.value_or(0.0), sum);
  }
  return peak;
}

class Advisor {
 public:
  Advisor(const RunReport& r, const std::optional<layout::Calibration>& c, const AdviceOptions& o)
      : r_(r), c_(c), o_(o) {
    if (r_.layout && c_) {
      auto base = layout::predictLayout(*r_.layout, *c_);
      if (base.isOk()) base_ = std::move(*base);
      // Without stragglers: every rank at the calibration's mean pace.
      layout::Calibration even = *c_;
      std::erase_if(even.ops, [](const layout::OpCostEntry& e) {
        return e.part == "step" && e.op == "straggler";
      });
      auto unstretched = layout::predictLayout(*r_.layout, even);
      if (unstretched.isOk()) even_ = std::move(*unstretched);
    }
  }

  std::vector<Advice> run() {
    commShare();
    bubbleAboveFormula();
    stragglers();
    memoryHeadroom();
    fewMicroBatches();
    return std::move(out_);
  }

 private:
  struct Best {
    Layout layout;
    Prediction prediction;
  };

  // The candidate with the most predicted tokens/s that fits the memory
  // budget (when one is set) and gains at least minGain over the run's own
  // layout's prediction; one that keeps the global batch (a training
  // hyper-parameter) when any does.
  std::optional<Best> best(const std::vector<Layout>& candidates) const {
    unmeasured_.clear();
    unpriced_.clear();
    if (!base_) return std::nullopt;
    std::optional<Best> keeps, changes;
    for (const Layout& l : candidates) {
      // Op costs do not scale linearly in the micro-batch size (a size-2
      // op costs less than two size-1 ops): no prediction at an unmeasured one.
      if (!measuredAt(l.microBatchSize)) {
        unmeasured_.insert(l.microBatchSize);
        continue;
      }
      auto p = layout::predictLayout(l, *c_);
      if (!p.isOk()) continue;
      // A layout priced with a cost this run never measured (another
      // dimension's fit, half an all-reduce, a constant: the prediction's
      // "no ..." warnings the run's own layout does not have) is a guess, not
      // a measured gain (issue 35: ZeRO-3 -> tp 2 priced from the dp fit was
      // predicted +57% and measured -48%).
      if (const std::string* guess = newGuess(*p)) {
        unpriced_.push_back(layoutChangeText(*r_.layout, l) + ": " + *guess);
        continue;
      }
      if (o_.memoryPerRankBytes && peakOf(*p) > *o_.memoryPerRankBytes) continue;
      if (p->tokensPerSecond < base_->tokensPerSecond * (1 + o_.minGain)) continue;
      std::optional<Best>& found = sequences(l) == sequences(*r_.layout) ? keeps : changes;
      if (!found || p->tokensPerSecond > found->prediction.tokensPerSecond) {
        found = Best{l, std::move(*p)};
      }
    }
    return keeps ? keeps : changes;
  }

  void attach(Advice& a, const std::optional<Best>& b) const {
    if (!unmeasured_.empty()) {
      std::string sizes;
      for (int32_t size : unmeasured_) sizes += (sizes.empty() ? "" : ", ") + std::to_string(size);
      a.message += " (micro-batch size " + sizes +
                   " not measured: layouts at it are left out; `bubblescope-cli calibrate "
                   "--model M` into this file measures sizes 1, 2 and 4)";
    }
    if (!unpriced_.empty()) {
      a.message += " (" + std::to_string(unpriced_.size()) + " nearby layout" +
                   (unpriced_.size() > 1 ? "s" : "") +
                   " left out: this run did not measure what they would cost, e.g. " +
                   unpriced_.front() + ")";
    }
    if (!b) return;
    a.change = layoutChangeText(*r_.layout, b->layout);
    a.layout = b->layout;
    a.predicted = PredictedGain{base_->stepNs,          b->prediction.stepNs,
                                base_->tokensPerSecond, b->prediction.tokensPerSecond,
                                peakOf(*base_),         peakOf(b->prediction)};
  }

  // The first of p's warnings that a cost was guessed ("no ...: costed
  // with dim dp", "... taken as 0", ...) which the run's own layout's
  // prediction does not carry; null when p guesses nothing new.
  const std::string* newGuess(const Prediction& p) const {
    for (const std::string& w : p.warnings) {
      if (!layout::isGuess(w)) continue;
      if (std::find(base_->warnings.begin(), base_->warnings.end(), w) == base_->warnings.end()) {
        return &w;
      }
    }
    return nullptr;
  }

  // Whether the calibration holds a block forward cost at micro-batch size b.
  bool measuredAt(int32_t b) const {
    return std::any_of(c_->ops.begin(), c_->ops.end(), [&](const layout::OpCostEntry& e) {
      return e.part == "block" && e.op == "forward" && e.microBatchSize == b;
    });
  }

  void add(Advice a) { out_.push_back(std::move(a)); }

  std::optional<Prediction> even_;        // the run's layout without the straggler factor
  mutable std::set<int32_t> unmeasured_;  // sizes best() left out, for attach()
  mutable std::vector<std::string> unpriced_;  // layouts best() left out as guesses: "change: why"

  void commShare() {
    using trace_model::ParallelDim;
    for (ParallelDim dim :
         {ParallelDim::kDp, ParallelDim::kZero, ParallelDim::kTp, ParallelDim::kPp}) {
      double sum = 0, exposed = 0;
      int ranks = 0;
      for (const RankReport& rank : r_.ranks) {
        if (auto share = rank.commRatio(dim)) {
          sum += *share;
          exposed += rank.exposedCommRatio(dim).value_or(0.0);
          ++ranks;
        }
      }
      // Communication that compute hides costs nothing: the rule weighs
      // what the step waits for.
      if (ranks == 0 || exposed / ranks <= o_.commShare) continue;
      const std::string name(trace_model::toString(dim));
      Advice a;
      a.rule = "comm_share";
      a.dimension = name;
      a.message = name + " communication takes " + formatPercent(sum / ranks) + " of the step, " +
                  formatPercent(exposed / ranks) +
                  " exposed (not overlapped with compute; mean over " + std::to_string(ranks) +
                  " ranks), above " + formatPercent(o_.commShare) +
                  ": restructure so less of the step waits on communication";
      if (r_.layout) attach(a, best(commVariants(*r_.layout, name)));
      add(std::move(a));
    }
  }

  void bubbleAboveFormula() {
    // One stage has no pipeline bubble to blame on the schedule: what it
    // waits for (a ZeRO-3 gather, a slow dp peer) is the other rules' subject.
    if (r_.stages.size() < 2) return;
    const StageReport* worst = nullptr;
    for (const StageReport& s : r_.stages) {
      if (!s.bubbleFraction || !s.bubbleFormula) continue;
      const double excess = *s.bubbleFraction - *s.bubbleFormula;
      if (excess <= o_.bubbleExcessPoints) continue;
      if (*s.bubbleFraction <= *s.bubbleFormula * o_.bubbleExcessRatio) continue;
      if (!worst || excess > *worst->bubbleFraction - *worst->bubbleFormula) worst = &s;
    }
    if (!worst) return;
    Advice a;
    a.rule = "bubble_above_formula";
    a.dimension = "pp";
    a.message = "stage " + std::to_string(worst->stage) + "'s bubble is " +
                formatPercent(worst->bubbleFraction) + ", far above its formula " +
                formatPercent(worst->bubbleFormula) + " (" + worst->bubbleFormulaText + ")";
    if (worst->bubbleReplayed) {
      const bool near = *worst->bubbleReplayed - *worst->bubbleFormula <= o_.bubbleExcessPoints;
      a.message += "; the run is oversubscribed and its ideal-hardware replay gives " +
                   formatPercent(worst->bubbleReplayed) +
                   (near ? ", near the formula: the shared cores stretched it, not the schedule "
                           "(run with a core per rank to see the schedule's own bubble)"
                         : ", still above the formula: the schedule and m leave it");
    } else {
      a.message += ": look at the schedule and m (and at ranks waiting on a slow peer)";
    }
    if (r_.layout) attach(a, best(bubbleVariants(*r_.layout)));
    add(std::move(a));
  }

  // The measured mean step against the predictor's step of the same layout
  // (every op at its mean over all ranks: the others' pace).
  std::optional<PredictedGain> withoutStragglers() const {
    if (!even_ || !r_.stepTimeMeanNs || *r_.stepTimeMeanNs <= 0) return std::nullopt;
    PredictedGain g;
    g.measuredBefore = true;
    g.stepNsBefore = *r_.stepTimeMeanNs;
    g.stepNsAfter = even_->stepNs;
    g.tokensPerSBefore = r_.tokensPerS.value_or(0.0);
    g.tokensPerSAfter = even_->tokensPerSecond;
    g.peakMemoryBytesBefore = g.peakMemoryBytesAfter = peakOf(*even_);
    return g;
  }

  // On an oversubscribed run the ranks sharing cores straggle by turns: one
  // piece of advice for them all. Otherwise one per straggler, naming its
  // host when the run spans several.
  void stragglers() {
    if (r_.stragglers.empty()) return;
    std::set<std::string> hosts;
    bool oversubscribed = false;
    for (const RankReport& rank : r_.ranks) {
      hosts.insert(rank.info.host);
      oversubscribed |= rank.info.coresOnHost > 0 && rank.info.ranksOnHost > rank.info.coresOnHost;
    }
    const std::string dim = r_.layout && r_.layout->pp > 1 ? "pp" : "";
    if (oversubscribed) {
      std::string ranks;
      for (const Straggler& s : r_.stragglers) {
        ranks += (ranks.empty() ? "" : ", ") + std::to_string(s.rank);
      }
      Advice a;
      a.rule = "straggler";
      a.dimension = dim;
      a.message = std::string(r_.stragglers.size() > 1 ? "ranks " : "rank ") + ranks +
                  " straggle, and the run is oversubscribed (more ranks than cores): ranks "
                  "sharing cores straggle by turns";
      a.change = "one core per rank (fewer ranks per host, or more hosts)";
      a.predicted = withoutStragglers();
      add(std::move(a));
      return;
    }
    for (const Straggler& s : r_.stragglers) {
      std::string host;
      int32_t stage = -1;
      for (const RankReport& rank : r_.ranks) {
        if (rank.info.rank != s.rank) continue;
        host = rank.info.host;
        stage = rank.info.pp;
      }
      // Where it runs, as far as it is known (an imported rank may know
      // neither its host nor its stage): "(host h, stage 1)", "(host h)", "".
      std::vector<std::string> where;
      if (!host.empty()) where.push_back("host " + host);
      if (stage >= 0) where.push_back("stage " + std::to_string(stage));
      std::string at;
      for (const std::string& w : where) at += (at.empty() ? " (" : ", ") + w;
      if (!at.empty()) at += ")";
      const std::string who = "rank " + std::to_string(s.rank);
      Advice a;
      a.rule = "straggler";
      a.dimension = dim;
      a.message = who + at + " is late (" + s.reason + ") by " + formatMs(s.lateNsMean) +
                  " ms on average in " + std::to_string(s.lateSteps) + " of " +
                  std::to_string(s.steps) + " steps: the others wait for it";
      a.change =
          hosts.size() > 1 && !host.empty()
              ? "move " + who + " off host " + host + " (or find what slows it)"
              : "find what slows " + who + " (other processes on its cores, its data loading)";
      a.predicted = withoutStragglers();
      add(std::move(a));
    }
  }

  void memoryHeadroom() {
    if (!o_.memoryPerRankBytes || !r_.layout || !base_) return;
    auto b = best(memoryVariants(*r_.layout));
    if (!b) return;
    Advice a;
    a.rule = "memory_headroom";
    a.dimension = b->layout.zeroStage != r_.layout->zeroStage ? "zero" : "";
    const std::optional<double> measured = measuredPeakBytes(r_);
    a.message = "memory per rank: predicted peak " + formatBytes(peakOf(*base_)) +
                (measured ? " (measured " + formatBytes(measured) + ")" : std::string()) +
                " of a " + formatBytes(o_.memoryPerRankBytes) + " budget; " +
                layoutChangeText(*r_.layout, b->layout) + " would fit (predicted " +
                formatBytes(peakOf(b->prediction)) + ") and save work";
    attach(a, b);
    add(std::move(a));
  }

  void fewMicroBatches() {
    if (!r_.layout || r_.layout->pp <= 1) return;
    const Layout& l = *r_.layout;
    const int32_t enough = o_.microBatchesPerStage * l.pp;
    if (l.microBatches >= enough) return;
    Advice a;
    a.rule = "few_micro_batches";
    a.dimension = "pp";
    a.message = "m = " + std::to_string(l.microBatches) + " micro-batches for " +
                std::to_string(l.pp) + " stages (fewer than " + std::to_string(enough) +
                "): the formula bubble is " + formatPercent(layout::formulaBubble(l)) + " (" +
                layout::bubbleFormulaText(l) + ")";
    attach(a, best(microBatchVariants(l, o_.microBatchesPerStage)));
    add(std::move(a));
  }

  const RunReport& r_;
  const std::optional<layout::Calibration>& c_;
  const AdviceOptions& o_;
  std::optional<Prediction> base_;  // the run's own layout, predicted
  std::vector<Advice> out_;
};

}  // namespace

std::string Advice::predictedText() const {
  if (!predicted) return "";
  const PredictedGain& g = *predicted;
  char tokens[64];
  std::snprintf(tokens, sizeof tokens, "%.0f -> %.0f", g.tokensPerSBefore, g.tokensPerSAfter);
  std::string out = (g.measuredBefore ? "measured step " : "predicted step ") +
                    formatMs(g.stepNsBefore) + " ms -> " + (g.measuredBefore ? "predicted " : "") +
                    formatMs(g.stepNsAfter) + " ms (" + signedPercent(g.stepChange()) +
                    "), tokens/s " + tokens + " (" + signedPercent(g.gain()) + ")";
  if (std::abs(g.peakMemoryBytesAfter - g.peakMemoryBytesBefore) >
      0.01 * std::max(g.peakMemoryBytesBefore, 1.0)) {
    out += ", peak memory " + formatBytes(g.peakMemoryBytesBefore) + " -> " +
           formatBytes(g.peakMemoryBytesAfter);
  }
  return out;
}

std::string layoutChangeText(const Layout& from, const Layout& to) {
  std::string out;
  auto field = [&](const std::string& name, const std::string& a, const std::string& b) {
    if (a == b) return;
    if (!out.empty()) out += ", ";
    out += name + " " + a + " -> " + b;
  };
  auto n = [](int64_t v) { return std::to_string(v); };
  auto onOff = [](bool v) { return std::string(v ? "on" : "off"); };
  auto list = [](const std::vector<int32_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) {
      if (i > 0) s += ',';
      s += std::to_string(v[i]);
    }
    return v.empty() ? std::string("auto") : s + "]";
  };
  field("dp", n(from.dp), n(to.dp));
  field("tp", n(from.tp), n(to.tp));
  field("pp", n(from.pp), n(to.pp));
  field("schedule", layout::scheduleKindName(from.schedule), layout::scheduleKindName(to.schedule));
  field("v", n(from.virtualChunks), n(to.virtualChunks));
  field("m", n(from.microBatches), n(to.microBatches));
  field("b", n(from.microBatchSize), n(to.microBatchSize));
  field("zero", n(layout::zeroStageNumber(from.zeroStage)),
        n(layout::zeroStageNumber(to.zeroStage)));
  field("recompute", onOff(from.recompute), onOff(to.recompute));
  field("overlap", onOff(from.overlap), onOff(to.overlap));
  // The gradient bucket as the layout sets it: elements, else MiB.
  auto bucket = [](const Layout& l) {
    if (l.bucketElements) return std::to_string(*l.bucketElements) + " elements";
    char mib[32];
    std::snprintf(mib, sizeof mib, "%g MiB", l.bucketMb);
    return std::string(mib);
  };
  field("bucket", bucket(from), bucket(to));
  field("grad_compression", from.gradCompression.toString(), to.gradCompression.toString());
  field("all_reduce", layout::allReduceAlgorithmName(from.allReduce),
        layout::allReduceAlgorithmName(to.allReduce));
  field("stage_layers", list(from.stageLayers), list(to.stageLayers));
  auto sequences = [](const Layout& l) {
    return int64_t{l.dp} * l.microBatches * l.microBatchSize;
  };
  field("global batch", n(sequences(from)), n(sequences(to)));
  return out;
}

std::vector<Advice> adviseRun(const RunReport& report,
                              const std::optional<layout::Calibration>& calibration,
                              const AdviceOptions& options) {
  return Advisor(report, calibration, options).run();
}

}  // namespace bubblescope::analysis
