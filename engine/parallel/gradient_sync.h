// GradientSync: where one model chunk's gradients and optimizer state live,
// and what the schedule's gradient collective and OptimizerStep ops do to
// them. Two kinds: DataParallel (a dp group, buckets, ZeRO 0-3; any device)
// and LocalGradients (one process: the model's own gradients and an AdamW on
// its Backend, any device).
//
// Per step (the ScheduleExecutor calls these in this order, as its op list
// says): zeroGradients(); per forward or B pass: beginPass(); per backward or
// W: beginMicroBatch() (`last`: the chunk's last of the step), then the
// model's pass, during which the layer hooks launch each gradient bucket as
// its last slot's gradients become final; each gradient collective op of the
// chunk (once per step at ZeRO 0/1, once per micro-batch at ZeRO 2/3):
// completeGradients(); the OptimizerStep op: localGradSquares() of every
// chunk (the executor's "grad_norm" compute span), then reduceGradSquares()
// of each (summed by the caller over chunks, pp and tp), scaleGradients()
// when clipping,
// applyOptimizer(); the AllGatherParams op (ZeRO 1/2):
// gatherUpdatedParameters().
//
// Contract: the training thread only; calls that say "collective" are made
// in the same order on every rank of the chunk's dp group.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "engine/layout/zero_stage.h"
#include "engine/parallel/tp_group.h"  // NamedValues
#include "engine/parameter.h"

namespace bubblescope::engine {

// A rank's sums of squares of its gradients before they are reduced: one
// per group that may hold them sharded (the dense parameters' dp group; a
// mixture of experts' expert-data group).
struct GradSquares {
  double shared = 0.0;
  double experts = 0.0;
};

class GradientSync {
 public:
  virtual ~GradientSync() = default;

  virtual void zeroGradients() = 0;
  // Tags the collectives of the next forward or B pass (ZeRO-3 gathers).
  virtual void beginPass(int32_t step, int32_t microBatch) = 0;
  // Before a backward or W; `last`: the chunk's last backward (or W) of the
  // step, after which its gradients are complete.
  virtual void beginMicroBatch(int32_t step, int32_t microBatch, bool last) = 0;
  // The schedule's AllReduceGrads / ReduceScatterGrads op of this chunk:
  // after its last backward (ZeRO 0/1), or after each micro-batch's backward
  // (ZeRO 2/3, which then adds the reduced micro-batch into the shard).
  // Launches what is not launched yet and waits for every reduction; then
  // this rank's gradients (or its shard) hold the group's sums (collective).
  virtual Status completeGradients() = 0;
  // Decides which collectives the op list must hold (schedule.h); kNone for
  // a process alone.
  virtual layout::ZeroStage zeroStage() const = 0;
  // True when forward and backward passes block on collectives inside (ZeRO-3
  // gathers): no op-level compute span may enclose them.
  virtual bool blocksInPasses() const = 0;

  // Sums of squares of this rank's synchronised gradients (or its shard), in
  // double: local compute, no communication, so the caller's compute span
  // holds no wait. Under tensor parallelism replicated parameters count only
  // where `countReplicated`.
  virtual Result<GradSquares> localGradSquares(bool countReplicated) = 0;
  // The chunk's sum of squares from this rank's local sums: reduced over the
  // group where gradients are sharded (collective), else their sum.
  virtual Result<double> reduceGradSquares(GradSquares local) = 0;
  virtual void scaleGradients(float factor) = 0;
  // One AdamW update at learning rate lr; ends with the device synchronised.
  virtual Status applyOptimizer(double lr) = 0;
  // The AllGatherParams op (ZeRO 1/2): all-gathers the updated shards
  // (collective); nothing otherwise.
  virtual Status gatherUpdatedParameters() = 0;

  // Elements of the chunk's parameters this rank trains (its tp slices).
  virtual int64_t parameterCount() const = 0;
  // Appends every parameter of the chunk by name with its full (un-ZeRO'd)
  // values, and the Parameter it belongs to (collective under ZeRO-3).
  virtual Status appendParameters(NamedValues& out, std::vector<Parameter*>& params) = 0;
  // Appends every parameter's AdamW moments by name, full (un-ZeRO'd) values
  // in the order of appendParameters(), to `m` and `v`, and says how many
  // updates the optimizer applied (collective when the state is sharded).
  virtual Status appendOptimizerState(NamedValues& m, NamedValues& v, int64_t& steps) = 0;
};

}  // namespace bubblescope::engine
