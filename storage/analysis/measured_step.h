// measuredStep: one representative step of a run, per pipeline stage, as the
// teaching lab shows it beside the ideal schedule (gui/teaching_lab.h), with
// the median duration of each kind of op and the hosts that ran more ranks
// than they have cores.
//
// Contract: reads the run's steps, ranks and the events of one step only
// (TraceReader::eventsInWindow), so the cost is bounded by one step, not by
// the run. The step is the one of median length (the first step, which warms
// up, is left out when there are others). Errors: a missing run, a run with
// no step records, or what the reader reports.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "planning/simulator.h"
#include "storage/trace_reader.h"
#include "trace_model/event.h"

namespace bubblescope::analysis {

// One compute span of a stage's rank; times from the step's start, in ns.
struct StageSpan {
  trace_model::EventKind kind = trace_model::EventKind::kForward;
  int64_t startNs = 0;
  int64_t endNs = 0;
  int32_t microBatch = -1;
  int32_t chunk = -1;
};

struct MeasuredStage {
  int32_t stage = 0;
  int32_t rank = 0;              // the stage's first rank (the lowest id)
  std::vector<StageSpan> spans;  // its compute spans in the step, in start order
  // Its pipeline bubble in the step: (wait + idle) / step time over its own
  // step window (bubbles.h), as the report measures it.
  double bubble = 0;
};

// Median duration of each kind of span over every rank in the step, in ns;
// 0 when the step has none of that kind.
struct MeasuredOpCosts {
  double forwardNs = 0;         // one chunk's forward of one micro-batch
  double backwardNs = 0;        // a fused backward
  double backwardInputNs = 0;   // zero-bubble B
  double backwardWeightNs = 0;  // zero-bubble W
  double transferNs = 0;        // a pipeline receive's transfer (its wait excluded)
  double optimizerNs = 0;
};

struct MeasuredStep {
  int32_t step = -1;
  int64_t startNs = 0;                // the run-wide window of the step: earliest start
  int64_t durationNs = 0;             // to the latest end over the ranks
  int32_t chunks = 1;                 // model chunks per stage seen in the step's spans
  std::vector<MeasuredStage> stages;  // by pipeline stage
  MeasuredOpCosts costs;
  // One line per host that ran more ranks than it has cores, e.g. "host h0
  // ran 8 ranks on 2 cores" (empty when none or unknown).
  std::vector<std::string> oversubscribed;
};

Result<MeasuredStep> measuredStep(storage::TraceReader& reader, int64_t runId);

// "host h0 ran 8 ranks on 2 cores" for each host whose ranks report more
// ranks than cores (RankInfo::ranksOnHost > coresOnHost > 0), by host name.
std::vector<std::string> oversubscribedHosts(const std::vector<trace_model::RankInfo>& ranks);

// The cost model of the ideal schedule for these measured costs, in ns per
// stage and micro-batch (a chunk op costs 1/chunks of it): t_F = forward ·
// chunks; a fused backward gives t_B = backward · chunks and t_W = 0, a split
// one t_B and t_W from its halves; t_comm = the transfer. The gradient
// collective and the optimizer step are left at 0 (the formulas leave them
// out). t_F falls back to 1 ms when the run has no forward span, t_B to
// t_F when it has no backward span.
layout::CostModel idealCostsOf(const MeasuredOpCosts& costs, int32_t chunks);

}  // namespace bubblescope::analysis
