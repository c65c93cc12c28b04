// KernelBreakdown (kernel_breakdown.h) on hand-made durations: sums by HTA
// type, per-name count/total/mean/min/max/p50/p95, order by total, and the
// spread of a kernel over ranks.
#include "storage/analysis/kernel_breakdown.h"

#include <gtest/gtest.h>

namespace bubblescope::analysis {
namespace {

using trace_model::KernelType;

constexpr trace_model::Lane kStream = trace_model::gpuStreamLane(7);

KernelBreakdown sample() {
  KernelBreakdownBuilder b;
  // gemm: 20 records of 10, 20, ..., 200 ns (the i-th at i µs): total 2100, p95 = 19th = 190, p50 =
  // 10th = 100.
  for (int64_t i = 1; i <= 20; ++i) {
    b.add("gemm", KernelType::kComputation, i * 1000, i * 1000 + i * 10, kStream);
  }
  b.add("ncclKernel_AllReduce", KernelType::kCommunication, 0, 1000, kStream);
  b.add("ncclKernel_AllReduce", KernelType::kCommunication, 0, 500, kStream);
  b.add("Memcpy HtoD (Pageable -> Device)", KernelType::kMemory, 0, 300, kStream);
  b.add("SyncBatchNorm", KernelType::kOther, 0, 50, kStream);
  b.add("softmax", KernelType::kComputation, 0, 1500, kStream);  // ties with the all-reduce's 1500
  EXPECT_FALSE(b.empty());
  return b.finish();
}

TEST(KernelBreakdownAnalysis, SumsByTypeAndName) {
  const KernelBreakdown k = sample();
  EXPECT_EQ(k.ns(KernelType::kComputation), 2100 + 1500);
  EXPECT_EQ(k.ns(KernelType::kCommunication), 1500);
  EXPECT_EQ(k.ns(KernelType::kMemory), 300);
  EXPECT_EQ(k.ns(KernelType::kOther), 50);
  EXPECT_EQ(k.totalNs(), 3600 + 1500 + 300 + 50);
  EXPECT_EQ(k.countByType[static_cast<size_t>(KernelType::kComputation)], 21);

  ASSERT_EQ(k.kernels.size(), 5u);
  // By total descending; the tie (1500) by name: "nccl..." < "softmax".
  EXPECT_EQ(k.kernels[0].name, "gemm");
  EXPECT_EQ(k.kernels[1].name, "ncclKernel_AllReduce");
  EXPECT_EQ(k.kernels[2].name, "softmax");
  EXPECT_EQ(k.kernels[3].name, "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(k.kernels[4].name, "SyncBatchNorm");

  const KernelStats& gemm = k.kernels[0];
  EXPECT_EQ(gemm.type, KernelType::kComputation);
  EXPECT_EQ(gemm.count, 20);
  EXPECT_EQ(gemm.totalNs, 2100);
  EXPECT_DOUBLE_EQ(gemm.meanNs(), 105.0);
  EXPECT_EQ(gemm.minNs, 10);
  EXPECT_EQ(gemm.maxNs, 200);
  EXPECT_EQ(gemm.p50Ns, 100);
  EXPECT_EQ(gemm.p95Ns, 190);
  EXPECT_EQ(gemm.longestStartNs, 20000);  // the 200 ns record
  EXPECT_EQ(gemm.longestLane, kStream);
  const KernelStats& nccl = k.kernels[1];
  EXPECT_EQ(nccl.count, 2);
  EXPECT_EQ(nccl.p50Ns, 500);   // ceil(1) = 1st
  EXPECT_EQ(nccl.p95Ns, 1000);  // ceil(1.9) = 2nd
}

TEST(KernelBreakdownAnalysis, TopKernelsLeaveOutMemoryAndStopAtN) {
  const KernelBreakdown k = sample();
  auto top = topKernels(k, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[2]->name, "softmax");
  auto all = topKernels(k, -1);
  ASSERT_EQ(all.size(), 4u);  // every one but the memcpy
  EXPECT_EQ(all[3]->name, "SyncBatchNorm");
  EXPECT_TRUE(topKernels(k, 0).empty());
}

TEST(KernelBreakdownAnalysis, SpreadOverTheRanksThatRanTheKernel) {
  KernelBreakdownBuilder a, b, c;
  a.add("gemm", KernelType::kComputation, 0, 100, kStream);
  b.add("gemm", KernelType::kComputation, 0, 100, kStream);
  b.add("gemm", KernelType::kComputation, 0, 200, kStream);  // rank 1 straggles: 300
  c.add("gemm", KernelType::kComputation, 0, 200, kStream);
  c.add("only_here", KernelType::kComputation, 0, 7, kStream);
  const KernelBreakdown ka = a.finish(), kb = b.finish(), kc = c.finish();
  const auto spreads = kernelSpreads({{0, &ka}, {1, &kb}, {2, &kc}});
  const KernelSpread& g = spreads.at("gemm");
  EXPECT_EQ(g.ranks, 3);
  EXPECT_EQ(g.minTotalNs, 100);
  EXPECT_EQ(g.minRank, 0);
  EXPECT_EQ(g.maxTotalNs, 300);
  EXPECT_EQ(g.maxRank, 1);
  EXPECT_DOUBLE_EQ(g.meanTotalNs, 200.0);  // (100 + 300 + 200) / 3
  EXPECT_DOUBLE_EQ(g.maxOverMean(), 1.5);
  const KernelSpread& o = spreads.at("only_here");
  EXPECT_EQ(o.ranks, 1);
  EXPECT_EQ(o.minRank, 2);
  EXPECT_DOUBLE_EQ(o.maxOverMean(), 1.0);
}

// merge(): a name met in both keeps the first builder's type and, on a tie,
// its longest record; its durations are both builders'.
TEST(KernelBreakdownAnalysis, MergeKeepsTheEarlierTypeAndLongestOnATie) {
  KernelBreakdownBuilder a, later;
  a.add("gemm", KernelType::kComputation, 0, 100, kStream);
  later.add("gemm", KernelType::kOther, 500, 600, trace_model::gpuStreamLane(9));
  later.add("gemm", KernelType::kOther, 700, 750, kStream);
  later.add("softmax", KernelType::kComputation, 800, 810, kStream);
  a.merge(std::move(later));
  EXPECT_TRUE(later.empty());
  const KernelBreakdown k = a.finish();
  ASSERT_EQ(k.kernels.size(), 2u);
  EXPECT_EQ(k.kernels[0].name, "gemm");
  EXPECT_EQ(k.kernels[0].type, KernelType::kComputation);
  EXPECT_EQ(k.kernels[0].count, 3);
  EXPECT_EQ(k.kernels[0].totalNs, 250);
  EXPECT_EQ(k.kernels[0].longestStartNs, 0) << "the tie (100 ns) keeps the earlier record";
  EXPECT_EQ(k.ns(KernelType::kComputation), 260);
}

}  // namespace
}  // namespace bubblescope::analysis
