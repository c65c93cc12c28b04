// LayerHooks: what a parallel runtime does around each layer slot of the
// model: ZeRO-3 gathers a slot's parameters before it runs and frees them
// after; data parallelism launches a gradient bucket once the slots it covers
// have finished their backward.
//
// Contract: GptModelT calls, for every slot s it runs (embedding 0, blocks
// 1..L, head L+1): beforeForward(s) / afterForward(s) around its forward, and
// beforeBackward(s) / afterBackward(s) around its backward (slots in reverse
// order). A slot's parameter values must be readable between before* and
// after*, and its gradients writable between beforeBackward and
// afterBackward. An error stops the pass and is returned by forward() or
// backward(). Called on the model's thread.
//
// A split backward (zero-bubble B and W, GptModelT::backwardInput() and
// backwardWeight()) calls instead, slots in reverse order each time:
// - beforeBackwardInput(s) / afterBackwardInput(s) around the slot's B: the
//   parameter values must be readable; no gradient is written. The
//   embedding has no B (it has no input gradient) and gets no call.
// - beforeBackwardWeight(s) / afterBackwardWeight(s) around its W: the
//   gradients must be writable; W reads no parameter value. A slot's
//   gradients for the micro-batch are complete at afterBackwardWeight(s).
#pragma once

#include <cstdint>

#include "common/status.h"

namespace bubblescope::engine {

class LayerHooks {
 public:
  virtual ~LayerHooks() = default;
  virtual Status beforeForward(int32_t /*slot*/) { return Status::ok(); }
  virtual Status afterForward(int32_t /*slot*/) { return Status::ok(); }
  virtual Status beforeBackward(int32_t /*slot*/) { return Status::ok(); }
  virtual Status afterBackward(int32_t /*slot*/) { return Status::ok(); }
  virtual Status beforeBackwardInput(int32_t /*slot*/) { return Status::ok(); }
  virtual Status afterBackwardInput(int32_t /*slot*/) { return Status::ok(); }
  virtual Status beforeBackwardWeight(int32_t /*slot*/) { return Status::ok(); }
  virtual Status afterBackwardWeight(int32_t /*slot*/) { return Status::ok(); }
};

}  // namespace bubblescope::engine
