// PipelineHops: a blocked receive's hop from its send, matched by chunk.
#include "storage/analysis/pipeline_hops.h"

#include <gtest/gtest.h>

namespace bubblescope::analysis {
namespace {

using trace_model::Event;
using trace_model::EventKind;

Event span(int32_t rank, EventKind kind, const char* name, int32_t peer, int32_t mb,
           int32_t stage, int32_t chunk, int64_t start, int64_t end) {
  Event e;
  e.rank = rank;
  e.kind = kind;
  e.name = name;
  e.peer = peer;
  e.step = 1;
  e.microBatch = mb;
  e.stage = stage;
  e.chunk = chunk;
  e.startNs = start;
  e.endNs = end;
  e.dim = trace_model::ParallelDim::kPp;
  e.bytes = kind == EventKind::kSend ? 4096 : 0;
  return e;
}

TEST(PipelineHops, ABlockedReceiveIsTimedFromItsOwnChunksSend) {
  // pp 2, two chunks: virtual stages 0 (rank 0 chunk 0), 1 (rank 1 chunk 0),
  // 2 (rank 0 chunk 1), 3 (rank 1 chunk 1).
  PipelineHops hops(2);
  // vs 0 -> vs 1: rank 1 waits in chunk 0 from 50, the send returns at 100,
  // the wait ends at 130.
  hops.add(span(0, EventKind::kSend, "send_activation", 1, 0, 0, 0, 99, 100));
  hops.add(span(1, EventKind::kWait, "wait_activation", 0, 0, 1, 0, 50, 130));
  // vs 1 -> vs 2: received in rank 0's chunk 1, not its chunk 0. A wait of
  // chunk 0 of the same micro-batch must not take this send.
  hops.add(span(1, EventKind::kSend, "send_activation", 0, 0, 1, 0, 199, 200));
  hops.add(span(0, EventKind::kWait, "wait_activation", 1, 0, 0, 0, 10, 400));
  hops.add(span(0, EventKind::kWait, "wait_activation", 1, 0, 0, 1, 150, 260));
  // vs 2 -> vs 1 (a gradient into rank 1's chunk 0), sent before the wait
  // began: the stage was not blocked when it left, no sample.
  hops.add(span(0, EventKind::kSend, "send_grad", 1, 0, 0, 1, 299, 300));
  hops.add(span(1, EventKind::kWait, "wait_grad", 0, 0, 1, 0, 310, 320));
  // Another micro-batch's wait, and a dimension that is not pp: ignored.
  hops.add(span(1, EventKind::kWait, "wait_activation", 0, 1, 1, 0, 50, 500));
  Event dp = span(0, EventKind::kSend, "send_activation", 1, 1, 0, 0, 60, 70);
  dp.dim = trace_model::ParallelDim::kDp;
  hops.add(dp);

  const std::vector<HopSample> got = hops.hops();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].rank, 0);
  EXPECT_DOUBLE_EQ(got[0].hopNs, 60);
  EXPECT_EQ(got[0].bytes, 4096);
  EXPECT_EQ(got[1].rank, 1);
  EXPECT_EQ(got[1].step, 1);
  EXPECT_DOUBLE_EQ(got[1].hopNs, 30);
}

}  // namespace
}  // namespace bubblescope::analysis
