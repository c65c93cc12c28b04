#include "tracer/recorder.h"

#include <gtest/gtest.h>

#include <thread>

namespace bubblescope::tracer {
namespace {

SpanInfo forward(int32_t mb) {
  SpanInfo info;
  info.kind = trace_model::EventKind::kForward;
  info.name = "forward";
  info.microBatch = mb;
  info.step = 3;
  info.flops = 1000;
  return info;
}

TEST(RecorderTest, DrainsSpansInOrderWithEveryField) {
  Recorder r(5, true, 16);
  SpanInfo send;
  send.kind = trace_model::EventKind::kSend;
  send.lane = trace_model::Lane::kPipeline;
  send.name = "send.act";
  send.dim = trace_model::ParallelDim::kPp;
  send.bytes = 4096;
  send.peer = 6;
  send.stage = 1;
  send.chunk = 0;
  r.record(forward(0), 10, 20);
  r.record(send, 20, 25);
  auto events = r.drain();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].rank, 5);
  EXPECT_EQ(events[0].name, "forward");
  EXPECT_EQ(events[0].microBatch, 0);
  EXPECT_EQ(events[0].step, 3);
  EXPECT_EQ(events[0].flops, 1000);
  EXPECT_EQ(events[0].startNs, 10);
  EXPECT_EQ(events[0].endNs, 20);
  EXPECT_EQ(events[1].kind, trace_model::EventKind::kSend);
  EXPECT_EQ(events[1].lane, trace_model::Lane::kPipeline);
  EXPECT_EQ(events[1].dim, trace_model::ParallelDim::kPp);
  EXPECT_EQ(events[1].bytes, 4096);
  EXPECT_EQ(events[1].peer, 6);
  EXPECT_EQ(events[1].stage, 1);
  EXPECT_TRUE(r.drain().empty());
}

TEST(RecorderTest, FullRingDropsAndCounts) {
  Recorder r(0, true, 4);
  for (int i = 0; i < 7; ++i) r.record(forward(i), i, i + 1);
  EXPECT_EQ(r.dropped(), 3);
  auto events = r.drain();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events.back().microBatch, 3);
  r.record(forward(9), 0, 1);  // room again after draining
  EXPECT_EQ(r.drain().at(0).microBatch, 9);
}

TEST(RecorderTest, DisabledRecordsNothing) {
  Recorder r(0, false);
  { ScopedSpan s(&r, forward(0)); }
  r.end(r.begin(forward(1)));
  EXPECT_EQ(r.pending(), 0u);
  EXPECT_TRUE(r.drain().empty());
  ScopedSpan nullRecorder(nullptr, forward(0));  // allowed
}

TEST(RecorderTest, ScopedAndBeginEndMeasureTheirScope) {
  Recorder r(0, true);
  const int64_t before = hostNowNs();
  {
    ScopedSpan outer(&r, forward(0));
    OpenSpan inner = r.begin(forward(1));
    r.end(inner);
  }
  const int64_t after = hostNowNs();
  auto events = r.drain();
  ASSERT_EQ(events.size(), 2u);
  // Inner ends first; the outer span contains it.
  EXPECT_EQ(events[0].microBatch, 1);
  EXPECT_LE(before, events[1].startNs);
  EXPECT_LE(events[1].startNs, events[0].startNs);
  EXPECT_LE(events[0].endNs, events[1].endNs);
  EXPECT_LE(events[1].endNs, after);
}

TEST(RecorderTest, ScopedSpanMeasuresThreadCpuTimeOnlyWhenAsked) {
  Recorder r(0, true);
  SpanInfo measured = forward(0);
  measured.threadCpu = true;
  volatile double sink = 0;
  {
    ScopedSpan span(&r, measured);
    const int64_t until = threadCpuNowNs() + 2'000'000;  // burn 2 ms of this thread's CPU
    while (threadCpuNowNs() < until) sink = sink + 1.0;
  }
  { ScopedSpan span(&r, forward(1)); }
  auto events = r.drain();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_GE(events[0].cpuNs, 2'000'000);
  // One thread's CPU time, not a process's: about the wall time it ran in
  // (loosely: the two clocks differ in granularity and accounting).
  EXPECT_LE(events[0].cpuNs, 2 * (events[0].endNs - events[0].startNs) + 5'000'000);
  EXPECT_EQ(events[1].cpuNs, -1);
}

TEST(RecorderTest, SkewedClockShiftsRecordedTimes) {
  Recorder r(1, true);
  r.setClockSkewForTesting({.offsetNs = 5000000000LL, .drift = 0.0, .pivotNs = 0});
  // Bracketed by two host reads: true on any machine, however busy.
  const int64_t before = hostNowNs();
  const int64_t skewed = r.now();
  const int64_t after = hostNowNs();
  EXPECT_GE(skewed, before + 5000000000LL);
  EXPECT_LE(skewed, after + 5000000000LL);
}

// One producer and one consumer at once lose and duplicate nothing.
TEST(RecorderTest, ConcurrentProducerAndConsumer) {
  constexpr int kSpans = 200000;
  Recorder r(0, true, 1024);
  std::thread producer([&] {
    for (int i = 0; i < kSpans; ++i) {
      while (r.pending() >= 1024) std::this_thread::yield();
      r.record(forward(i), i, i + 1);
    }
  });
  std::vector<trace_model::Event> got;
  while (got.size() < static_cast<size_t>(kSpans)) r.drainInto(got);
  producer.join();
  EXPECT_EQ(r.dropped(), 0);
  for (int i = 0; i < kSpans; ++i) ASSERT_EQ(got[i].microBatch, i);
}

}  // namespace
}  // namespace bubblescope::tracer
