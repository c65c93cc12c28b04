// PipelineHops: how long after its message left a pipeline stage that was
// blocked in a receive went on (docs/prediction.md, "Waking from a
// receive").
//
// A stage that reaches a receive before its message waits in it (the
// executor's "wait_activation" / "wait_grad" span, EventKind::kWait, dim pp).
// The message leaves when the peer's matching send returns (its
// "send_activation" / "send_grad" span, EventKind::kSend); the stage goes on
// when its wait ends. Between the two lie the transfer and the time the
// waiting rank takes to notice and get a core back: the executor's receive
// polls with short sleeps, and on a busy core a woken thread waits for the
// running one's time slice (0.13-0.21 ms on the 2-core VM with a core per
// rank, 3.5-4.4 ms beside four busy loops). The hop of such a receive is
// wait end - send end, taken only when the send returned inside the wait
// (the stage was blocked when the message left; a message sent before the
// wait began says nothing about waking).
//
// Matching: a send matches a wait when the sender is the wait's peer and
// the send's peer the waiting rank, both carry the same step and
// micro-batch, both move an activation or both a gradient, and the send's
// receiving chunk is the wait's chunk: the next virtual stage's for an
// activation, the previous one's for a gradient, (chunk * p + stage +- 1) / p
// for p stages (schedule_executor.cpp tags its messages so). Chunk -1 (a run
// that is not pipelined) reads as chunk 0. Events of other kinds or
// dimensions, and spans without a step, are ignored.
//
// Memory: one entry per pipeline send and wait of the run. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "trace_model/event.h"

namespace bubblescope::analysis {

struct HopSample {
  int32_t rank = 0;  // the receiving rank
  int32_t step = 0;
  int64_t bytes = 0;  // the send's
  double hopNs = 0;   // wait end - send end
};

class PipelineHops {
 public:
  explicit PipelineHops(int32_t stages) : stages_(stages > 0 ? stages : 1) {}

  void add(const trace_model::Event& e);
  // One sample per wait that a send returned inside, in (rank, step,
  // micro-batch) order.
  std::vector<HopSample> hops() const;

 private:
  // (receiving rank, sending rank, step, micro-batch, activation, receiving chunk)
  using Key = std::tuple<int32_t, int32_t, int32_t, int32_t, bool, int32_t>;
  struct Send {
    int64_t endNs = 0;
    int64_t bytes = 0;
  };
  struct Wait {
    int64_t startNs = 0;
    int64_t endNs = 0;
  };
  int32_t stages_;
  std::map<Key, Send> sends_;
  std::map<Key, Wait> waits_;
};

}  // namespace bubblescope::analysis
