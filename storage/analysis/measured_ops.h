// MeasuredOps: a measured run's costs per schedule op, per layer slot and per
// communication, read from its events (the input of the calibration and of
// the ideal-hardware replay, docs/prediction.md).
//
// Contract: per rank, step, micro-batch, chunk and op kind (forward,
// backward, backward_input, backward_weight, recompute, optimizer) the op's
// cost is its op-level span ("forward", "backward", ...; the executor's span
// around the model's pass), or, where the executor records none (tensor
// parallelism, ZeRO-3), the sum of the layers' spans. Costs are wall ns and
// thread-CPU ns (Event::cpuNs; the wall time when a span has none). A layer
// slot's cost sums its spans of one op (tensor-parallel blocks record one
// span per stretch between all-reduces). Chunk -1 (runs that are not
// pipelined) reads as chunk 0.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/result.h"
#include "engine/layout/layout.h"
#include "storage/analysis/pipeline_hops.h"
#include "storage/run_info.h"
#include "storage/trace_reader.h"

namespace bubblescope::analysis {

struct MeasuredCost {
  double wallNs = 0;
  double cpuNs = 0;
};

// (rank, step, micro-batch, chunk, op name); micro-batch and chunk -1 for
// the optimizer.
using OpKey = std::tuple<int32_t, int32_t, int32_t, int32_t, std::string>;

struct LayerSample {
  int32_t rank = 0;
  int32_t step = 0;
  std::string part;  // "embedding", "block", "head"
  std::string op;
  MeasuredCost cost;
};

struct CommSample {
  int32_t rank = 0;
  int32_t step = 0;
  int32_t microBatch = -1;
  std::string dim;         // "dp", "tp", "pp", "zero", "ep"
  std::string collective;  // "allreduce", "reduce_scatter", "all_gather", "p2p", "all_to_all"
  int64_t bytes = 0;
  double wallNs = 0;
};

// One rank's step: its own step record's length and how much of it its
// spans cover (every lane; nested spans counted once).
struct RankStepTime {
  double stepNs = 0;     // the rank's step record, end - start (0: no record)
  double coveredNs = 0;  // |union of the rank's spans tagged with the step|
  // The time in the step outside every span (zeroing gradients, the loss's
  // reduction, step bookkeeping); 0 without a step record.
  double uncoveredNs() const { return stepNs > coveredNs ? stepNs - coveredNs : 0.0; }
};

struct MeasuredOps {
  std::optional<layout::Layout> layout;
  std::vector<storage::RankInfo> ranks;
  int32_t steps = 0;         // highest step + 1
  bool cpuMeasured = false;  // some compute span carried a thread CPU time
  std::map<OpKey, MeasuredCost> ops;
  // The executor's op-level spans alone, and per op key its layers' spans
  // summed (`ops` holds the op span where there is one, else the layers'):
  // an op span's CPU time less its layers' is the thread's work between
  // them (ZeRO 2's bucket copies) without the time it was off its core.
  std::map<OpKey, MeasuredCost> opSpans, layerTotals;
  std::vector<LayerSample> layers;
  std::vector<CommSample> comms;
  // Pipeline receives that waited: from the send's return to the wait's end
  // (pipeline_hops.h).
  std::vector<HopSample> hops;
  std::map<std::pair<int32_t, int32_t>, RankStepTime> rankSteps;  // (rank, step)
  // (rank, step, micro-batch) -> the time, inside the micro-batch's window,
  // outside every span but the executor's op-level ones ("forward",
  // "backward", ...: they wrap the layers' spans and what runs between
  // them). The window of micro-batch i runs from the first start of a span
  // tagged i to the first start of one tagged i + 1 (so the last
  // micro-batch of a step has none). What the rank's thread did there
  // between its layers and collectives: under ZeRO 2/3 moving each
  // micro-batch's gradients into the reduce-scatter bucket and adding the
  // reduced shard (docs/prediction.md, "ZeRO 2/3's gradient buckets").
  std::map<std::tuple<int32_t, int32_t, int32_t>, double> microBatchGapNs;

  // The op's cost, if measured.
  std::optional<MeasuredCost> op(int32_t rank, int32_t step, int32_t microBatch, int32_t chunk,
                                 const std::string& name) const;
};

// Reads every rank's events of `runId` once.
Result<MeasuredOps> measureOps(storage::TraceReader& reader, int64_t runId);

// The steps from `firstStep` on that are not hiccups of the machine
// (typical_steps.h), a step's time its slowest rank's step record.
std::set<int32_t> typicalSteps(const MeasuredOps& m, int32_t firstStep);

// `m` with the samples of the steps in `steps` only (layers, ops, op spans,
// layer totals, comms, hops, rank steps and micro-batch gaps); `steps` (the
// count) unchanged.
MeasuredOps onlySteps(MeasuredOps m, const std::set<int32_t>& steps);

// The schedule op name of an EventKind ("forward", ...; "" for others).
std::string opNameOf(trace_model::EventKind kind);

}  // namespace bubblescope::analysis
