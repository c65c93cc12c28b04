// CommTensorParallel: the model's TensorParallelGroup (engine/tensor_parallel.h)
// over a Communicator: every all-reduce is the communicator's, traced with
// dimension tp, the caller's name and the model's step, micro-batch, stage
// and chunk.
//
// Contract: `tp` must outlive this object and the models that use it; the
// training thread only.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/backend.h"
#include "engine/parallel/communicator.h"
#include "engine/parameter.h"
#include "engine/tensor_parallel.h"

namespace bubblescope::engine {

// How a model's collective appears in the trace: `name`, dimension `dim`,
// and `where`'s step, micro-batch, stage and chunk.
inline CommTrace commTraceAt(const char* name, const TraceContext& where,
                             trace_model::ParallelDim dim) {
  CommTrace t;
  t.name = name;
  t.step = where.step;
  t.microBatch = where.microBatch;
  t.stage = where.stage;
  t.chunk = where.chunk;
  t.dim = dim;
  return t;
}

class CommTensorParallel final : public TensorParallelGroup {
 public:
  explicit CommTensorParallel(Communicator& tp) : tp_(tp) {}
  int32_t rank() const override { return tp_.rank(); }
  int32_t size() const override { return tp_.size(); }
  Status allReduce(std::span<float> data, const char* name, const TraceContext& where) override {
    return tp_.allReduce(data, traceOf(name, where));
  }
  Status allReduce(std::span<double> data, const char* name, const TraceContext& where) override {
    return tp_.allReduce(data, traceOf(name, where));
  }
  Communicator& communicator() { return tp_; }

 private:
  static CommTrace traceOf(const char* name, const TraceContext& where) {
    return commTraceAt(name, where, trace_model::ParallelDim::kTp);
  }
  Communicator& tp_;
};

// name -> values of a model's parameters as a rank holds them (its tp slices).
using NamedValues = std::vector<std::pair<std::string, std::vector<float>>>;

// Replaces every tp slice in `values` (parameters `params`, same order) by
// the full tensor, assembled from every tp rank's slice (collective over tp;
// a no-op at tp size 1). `backend` (null: host memory) is the rank's when
// `tp` moves its device buffers (host_values_transfer.h).
Status assembleTpShards(const std::vector<Parameter*>& params, NamedValues& values,
                        Communicator& tp, Backend* backend = nullptr);

}  // namespace bubblescope::engine
