// The event block codec (storage/event_block.h): every field round-trips,
// extremes included; blocks close at their size limits; damaged data is an
// error, never a wrong event.
#include "storage/event_block.h"

#include <gtest/gtest.h>

#include <limits>

namespace bubblescope::storage {
namespace {

std::vector<StoredEvent> sampleEvents(int n) {
  std::vector<StoredEvent> events;
  for (int i = 0; i < n; ++i) {
    StoredEvent e;
    e.startNs = 1700000000000000000LL + i * 1000LL;
    e.endNs = e.startNs + (i % 3) * 500;
    e.nameId = 1 + i % 9;
    e.lane = i % 2 ? 16 + i % 4 : 0;
    e.kind = i % 20;
    e.dim = i % 7;
    e.step = i / 100;
    e.microBatch = i % 5 - 1;
    e.stage = i % 4 - 1;
    e.chunk = i % 2 - 1;
    e.peer = i % 3 - 1;
    e.bytes = i % 4 ? 0 : int64_t{1} << (i % 63);
    e.flops = i * 123456789LL;
    e.correlationId = i % 2 ? 0 : 7 + i;
    e.cpuNs = i % 6 == 0 ? -1 : i * 10;
    events.push_back(e);
  }
  return events;
}

std::vector<EventBlock> encodeAll(const std::vector<StoredEvent>& events) {
  std::vector<EventBlock> blocks;
  EXPECT_TRUE(encodeBlocks(events, [&](const EventBlock& b) {
                blocks.push_back(b);
                return Status::ok();
              }).isOk());
  return blocks;
}

TEST(EventBlockTest, EveryFieldRoundTripsAcrossBlocks) {
  const std::vector<StoredEvent> events = sampleEvents(1000);
  const std::vector<EventBlock> blocks = encodeAll(events);
  ASSERT_GT(blocks.size(), 3u);
  std::vector<StoredEvent> decoded;
  int64_t first = 0;
  for (const EventBlock& b : blocks) {
    EXPECT_LE(b.count, kBlockMaxEvents);
    EXPECT_EQ(b.firstStartNs, events[first].startNs);
    int64_t maxEnd = std::numeric_limits<int64_t>::min(), minCorr = 0, maxCorr = 0;
    for (int64_t i = first; i < first + b.count; ++i) {
      maxEnd = std::max(maxEnd, events[i].endNs);
      if (const int64_t c = events[i].correlationId; c != 0) {
        minCorr = minCorr == 0 ? c : std::min(minCorr, c);
        maxCorr = std::max(maxCorr, c);
      }
    }
    EXPECT_EQ(b.maxEndNs, maxEnd);
    EXPECT_EQ(b.minCorrelation, minCorr);
    EXPECT_EQ(b.maxCorrelation, maxCorr);
    ASSERT_TRUE(decodeBlock(b.data, b.firstStartNs, b.count, decoded).isOk());
    first += b.count;
  }
  EXPECT_EQ(decoded, events);
}

// The bytes docs/trace-format.md describes, worked by hand: files written
// before the event's fields were generated from one list must still read.
TEST(EventBlockTest, EncodesTheDocumentedBytes) {
  StoredEvent a;  // differs from the initial values in bits 0-5 and 7
  a.startNs = 1000;
  a.endNs = 1500;
  a.nameId = 3;
  a.kind = 6;
  a.lane = 1;
  a.microBatch = 2;
  a.bytes = 4096;
  a.dim = 1;
  a.step = 0;
  StoredEvent b = a;  // differs from `a` in correlation (bit 11) and cpu_ns (bit 12)
  b.startNs = 1100;
  b.endNs = 1200;
  b.correlationId = 9;
  b.cpuNs = 50;
  const std::vector<EventBlock> blocks = encodeAll({a, b});
  ASSERT_EQ(blocks.size(), 1u);
  const std::vector<uint8_t> expected = {
      0x00, 0xf4, 0x03,  // start - first_start_ns 0; duration 500
      0xbf, 0x01,        // mask 0b1011'1111
      0x06, 0x0c, 0x02, 0x04, 0x80, 0x40, 0x02, 0x00,  // zigzag 3, 6, 1, 2, 4096, 1, 0
      0x64, 0x64,        // start delta 100; duration 100
      0x80, 0x30,        // mask 1 << 11 | 1 << 12
      0x12, 0x64,        // zigzag 9, 50
  };
  EXPECT_EQ(blocks[0].data, expected);
  EXPECT_EQ(blocks[0].minCorrelation, 9);
  EXPECT_EQ(blocks[0].maxCorrelation, 9);
}

TEST(EventBlockTest, ExtremeValuesRoundTrip) {
  StoredEvent low, high;
  low.startNs = std::numeric_limits<int64_t>::min();
  low.endNs = 0;
  low.nameId = std::numeric_limits<int64_t>::max();
  low.bytes = std::numeric_limits<int64_t>::min();
  low.flops = std::numeric_limits<int64_t>::max();
  low.step = std::numeric_limits<int32_t>::min();
  low.peer = std::numeric_limits<int32_t>::max();
  high.startNs = std::numeric_limits<int64_t>::max() - 1;
  high.endNs = std::numeric_limits<int64_t>::max();
  high.cpuNs = std::numeric_limits<int64_t>::min();
  const std::vector<StoredEvent> events = {low, high};
  const std::vector<EventBlock> blocks = encodeAll(events);
  ASSERT_EQ(blocks.size(), 1u);
  std::vector<StoredEvent> decoded;
  ASSERT_TRUE(decodeBlock(blocks[0].data, blocks[0].firstStartNs, 2, decoded).isOk());
  EXPECT_EQ(decoded, events);
}

TEST(EventBlockTest, ABlockClosesAtItsEventLimit) {
  std::vector<StoredEvent> events(kBlockMaxEvents + 1);  // all alike: 3 bytes each
  const std::vector<EventBlock> blocks = encodeAll(events);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].count, kBlockMaxEvents);
  EXPECT_EQ(blocks[0].data.size(), 3u * kBlockMaxEvents);
  EXPECT_EQ(blocks[1].count, 1);
}

TEST(EventBlockTest, DamagedDataIsCorruptNotAWrongEvent) {
  const std::vector<EventBlock> blocks = encodeAll(sampleEvents(50));
  const EventBlock& b = blocks[0];
  std::vector<StoredEvent> out;
  auto truncated = std::vector<uint8_t>(b.data.begin(), b.data.end() - 1);
  EXPECT_EQ(decodeBlock(truncated, b.firstStartNs, b.count, out).code(), StatusCode::kCorrupt);
  auto longer = b.data;
  longer.push_back(0);
  EXPECT_EQ(decodeBlock(longer, b.firstStartNs, b.count, out).code(), StatusCode::kCorrupt);
  EXPECT_EQ(decodeBlock(b.data, b.firstStartNs, b.count + 1, out).code(), StatusCode::kCorrupt);
  const std::vector<uint8_t> badMask = {0, 0, 0xff, 0x7f};  // bits beyond the 13 fields
  EXPECT_EQ(decodeBlock(badMask, 0, 1, out).code(), StatusCode::kCorrupt);
}

}  // namespace
}  // namespace bubblescope::storage
