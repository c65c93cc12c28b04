// Memory copies by kind (memory_copies.h) on hand-made records named as the
// Kineto and Nsight importers and the engine's CUPTI tracer name them.
#include "storage/analysis/memory_copies.h"

#include <gtest/gtest.h>

namespace bubblescope::analysis {
namespace {

using trace_model::EventKind;

trace_model::Event record(EventKind kind, const std::string& name, int64_t start, int64_t end,
                          int64_t bytes) {
  trace_model::Event e;
  e.kind = kind;
  e.lane = trace_model::gpuStreamLane(7);
  e.name = name;
  e.startNs = start;
  e.endNs = end;
  e.bytes = bytes;
  return e;
}

TEST(MemoryCopiesAnalysis, KindFromTheName) {
  EXPECT_EQ(memoryCopyKind(EventKind::kMemcpy, "Memcpy HtoD (Pageable -> Device)"), "HtoD");
  EXPECT_EQ(memoryCopyKind(EventKind::kMemcpy, "Memcpy DtoD"), "DtoD");
  EXPECT_EQ(memoryCopyKind(EventKind::kMemcpy, "memcpy"), "memcpy");
  EXPECT_EQ(memoryCopyKind(EventKind::kMemset, "Memset (Device)"), "memset");
  EXPECT_EQ(memoryCopyKind(EventKind::kKernel, "Memcpy HtoD"), "");
}

TEST(MemoryCopiesAnalysis, CountBytesAndTimeByKind) {
  MemoryCopiesBuilder b;
  b.add(record(EventKind::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 0, 100, 4096));
  b.add(record(EventKind::kMemcpy, "Memcpy HtoD (Pinned -> Device)", 200, 250, 1024));
  b.add(record(EventKind::kMemcpy, "Memcpy DtoH (Device -> Pinned)", 300, 330, 0));
  b.add(record(EventKind::kMemset, "Memset (Device)", 400, 410, 512));
  b.add(record(EventKind::kKernel, "gemm", 500, 900, 0));  // not a copy
  const auto kinds = b.finish();
  ASSERT_EQ(kinds.size(), 3u);  // by name: DtoH, HtoD, memset
  EXPECT_EQ(kinds[0].kind, "DtoH");
  EXPECT_EQ(kinds[0].count, 1);
  EXPECT_FALSE(kinds[0].bytes.has_value());  // no size stored
  EXPECT_EQ(kinds[0].ns, 30);
  EXPECT_EQ(kinds[1].kind, "HtoD");
  EXPECT_EQ(kinds[1].count, 2);
  EXPECT_EQ(kinds[1].bytes, 5120);
  EXPECT_EQ(kinds[1].ns, 150);
  EXPECT_EQ(kinds[2].kind, "memset");
  EXPECT_EQ(kinds[2].bytes, 512);
  EXPECT_EQ(kinds[2].ns, 10);
}

// merge(): as if the other builder's records had been added here.
TEST(MemoryCopiesAnalysis, MergeAddsTheOtherBuildersRecords) {
  MemoryCopiesBuilder a, later;
  a.add(record(EventKind::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 0, 100, 4096));
  later.add(record(EventKind::kMemcpy, "Memcpy HtoD (Pinned -> Device)", 200, 250, 1024));
  later.add(record(EventKind::kMemcpy, "Memcpy DtoH (Device -> Pinned)", 300, 330, 0));
  a.merge(later);
  const auto kinds = a.finish();
  ASSERT_EQ(kinds.size(), 2u);
  EXPECT_EQ(kinds[0].kind, "DtoH");
  EXPECT_EQ(kinds[0].ns, 30);
  EXPECT_EQ(kinds[1].kind, "HtoD");
  EXPECT_EQ(kinds[1].count, 2);
  EXPECT_EQ(kinds[1].bytes, 5120);
  EXPECT_EQ(kinds[1].ns, 150);
}

}  // namespace
}  // namespace bubblescope::analysis
