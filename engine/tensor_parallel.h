// TensorParallelGroup: what a tensor-parallel model needs of its tp group:
// its rank and size, and an in-place sum over the group. The engine core sees
// only this interface; engine/parallel implements it over a Communicator
// (MPI), so the model never depends on MPI.
//
// Contract: every rank of the group calls allReduce() in the same order with
// the same sizes (the model does: two per block in forward, two in backward).
// The call is traced as one communication span named `name` with dimension
// tp, the bytes of `data`, and `where`'s step, micro-batch, stage and chunk.
// Called on the model's thread; the group outlives the models that use it.
#pragma once

#include <cstdint>
#include <span>

#include "common/status.h"
#include "engine/trace_context.h"

namespace bubblescope::engine {

class TensorParallelGroup {
 public:
  virtual ~TensorParallelGroup() = default;
  virtual int32_t rank() const = 0;
  virtual int32_t size() const = 0;
  virtual Status allReduce(std::span<float> data, const char* name, const TraceContext& where) = 0;
  virtual Status allReduce(std::span<double> data, const char* name, const TraceContext& where) = 0;
};

}  // namespace bubblescope::engine
