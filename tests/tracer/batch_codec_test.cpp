#include "tracer/batch_codec.h"

#include <gtest/gtest.h>

#include <cstring>

namespace bubblescope::tracer {
namespace {

Batch sampleBatch() {
  Batch b;
  for (int i = 0; i < 50; ++i) {
    trace_model::Event e;
    e.rank = 3;
    e.lane = i % 2 ? trace_model::Lane::kCommunication : trace_model::gpuStreamLane(2);
    e.kind = static_cast<trace_model::EventKind>(i % trace_model::kEventKindCount);
    e.name = i % 3 ? "forward" : "allreduce.bucket" + std::to_string(i);
    e.startNs = 1000LL * i;
    e.endNs = 1000LL * i + 999;
    e.step = i / 10;
    e.microBatch = i % 4;
    e.stage = 1;
    e.chunk = i % 2;
    e.dim = trace_model::ParallelDim::kDp;
    e.bytes = 1LL << 33;
    e.flops = -1;
    e.peer = 2;
    e.correlationId = i % 5 ? 0 : (int64_t{1} << 32) + i;  // beyond 32 bits survives too
    e.cpuNs = i % 2 ? -1 : 777 + i;
    b.events.push_back(e);
  }
  b.steps.push_back({3, 7, 4.5, 2048, 10, 20});
  b.samples.push_back({3, "cpu_util", 123, 0.875});
  b.samples.push_back({3, "rss_bytes", 124, 3e9});
  return b;
}

TEST(BatchCodecTest, RoundTripsEveryRecord) {
  const Batch b = sampleBatch();
  auto decoded = decodeBatch(encodeBatch(b));
  ASSERT_TRUE(decoded.isOk()) << decoded.status().message();
  EXPECT_EQ(decoded->events, b.events);
  EXPECT_EQ(decoded->steps, b.steps);
  EXPECT_EQ(decoded->samples, b.samples);
  auto empty = decodeBatch(encodeBatch(Batch{}));
  ASSERT_TRUE(empty.isOk());
  EXPECT_TRUE(empty->empty());
}

// An event's record is the documented fixed layout (batch_codec.cpp): its
// 8-byte fields, then its 4-byte ones, each in Event's order, the name as an
// index into the batch's strings.
TEST(BatchCodecTest, AnEventIsItsDocumentedRecord) {
  struct Record {
    int64_t startNs, endNs, bytes, flops, correlationId, cpuNs;
    int32_t rank, lane, kind, name, step, microBatch, stage, chunk, dim, peer;
  };
  static_assert(sizeof(Record) == 88);
  Batch b;
  trace_model::Event& e = b.events.emplace_back();
  e = {.rank = 5, .lane = trace_model::Lane::kPipeline, .kind = trace_model::EventKind::kRecv,
       .name = "recv", .startNs = 11, .endNs = 22, .step = 3, .microBatch = 4, .stage = 1,
       .chunk = 0, .dim = trace_model::ParallelDim::kPp, .bytes = 1 << 20, .flops = 7,
       .peer = 4, .correlationId = 99, .cpuNs = 6};
  const std::vector<uint8_t> bytes = encodeBatch(b);
  const size_t header = 20, strings = 4 + 4;  // magic and 4 counts; "recv" with its length
  ASSERT_EQ(bytes.size(), header + strings + sizeof(Record));
  Record expected{11, 22, 1 << 20, 7, 99, 6, 5, 2, 11, 0, 3, 4, 1, 0, 3, 4};
  EXPECT_EQ(std::memcmp(bytes.data() + header + strings, &expected, sizeof expected), 0);
}

TEST(BatchCodecTest, RejectsTruncatedAndForeignBytes) {
  auto bytes = encodeBatch(sampleBatch());
  for (size_t cut : {size_t{0}, size_t{3}, bytes.size() / 2, bytes.size() - 1}) {
    auto d = decodeBatch(std::span<const uint8_t>(bytes.data(), cut));
    ASSERT_FALSE(d.isOk()) << cut;
    EXPECT_EQ(d.status().code(), StatusCode::kCorrupt);
  }
  auto longer = bytes;
  longer.push_back(0);
  EXPECT_FALSE(decodeBatch(longer).isOk());
  auto foreign = bytes;
  foreign[0] ^= 0xff;
  EXPECT_FALSE(decodeBatch(foreign).isOk());
}

}  // namespace
}  // namespace bubblescope::tracer
