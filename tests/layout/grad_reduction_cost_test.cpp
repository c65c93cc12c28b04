// gradReductionCost() and its use by predictLayout(): the bytes each
// compression sends, the ring scaling of the fitted times, the emulated
// inter-node link, hierarchical against flat, and that compression lowers the
// predicted exposed dp communication by its bytes ratio.
#include "planning/grad_reduction_cost.h"

#include <gtest/gtest.h>

#include <cmath>

#include "planning/prediction.h"

namespace bubblescope::layout {
namespace {

constexpr double kN = 1 << 20;  // gradient elements

// Bandwidth only: 1 ns per byte of an all-reduce at group size 2.
Calibration bandwidthOnly(double alphaNs = 0) {
  Calibration c;
  c.model = *modelPreset("small");
  c.links.push_back({"dp", "same_host", "allreduce", 2, alphaNs, 1.0, 2, 1, 1 << 20});
  return c;
}

GradReductionInput input(const std::string& spec, int32_t group) {
  GradReductionInput in;
  in.compression = *parseGradCompression(spec);
  in.group = group;
  in.elements = kN;
  in.tensors = {{1024, 1024}};
  return in;
}

TEST(GradReductionCost, EachCompressionSendsItsBytes) {
  const Calibration c = bandwidthOnly();
  const double none = 2.0 * 3 / 4 * 4 * kN;  // ring all-reduce over 4 ranks
  EXPECT_DOUBLE_EQ(gradReductionCost(input("none", 4), c).sentBytes, none);
  EXPECT_DOUBLE_EQ(gradReductionCost(input("none", 4), c).compressionRatio(), 1.0);
  EXPECT_DOUBLE_EQ(gradReductionCost(input("fp16", 4), c).compressionRatio(), 2.0);
  EXPECT_DOUBLE_EQ(gradReductionCost(input("bf16", 4), c).sentBytes, none / 2);
  // int8: 1024 codes + an fp32 scale per block of 1024.
  EXPECT_DOUBLE_EQ(gradReductionCost(input("int8", 4), c).compressionRatio(), 4096.0 / 1028);
  // Top-K: every rank receives every other rank's k indices and values:
  // n / (N k), not n / (2k).
  const double k = std::ceil(0.01 * kN);
  EXPECT_DOUBLE_EQ(gradReductionCost(input("topk:0.01", 4), c).sentBytes, 3 * 8 * k);
  EXPECT_NEAR(gradReductionCost(input("topk:0.01", 4), c).compressionRatio(), kN / (4 * k), 1e-12);
  // PowerSGD rank 4 of one 1024 x 1024 matrix: P and Q, 4 (1024 + 1024) values.
  EXPECT_DOUBLE_EQ(gradReductionCost(input("powersgd:4", 4), c).compressionRatio(),
                   kN / (4.0 * 2048));
  // A rank too large to save anything leaves the matrix uncompressed.
  EXPECT_DOUBLE_EQ(gradReductionCost(input("powersgd:600", 4), c).compressionRatio(), 1.0);
}

TEST(GradReductionCost, BucketsCutAsTheEngineCutsThem) {
  const Calibration c = bandwidthOnly();
  // int8 and Top-K round up per bucket: 3 buckets of 400,000 elements and
  // one of the rest (248,576), cut from the end of the buffer.
  GradReductionInput in = input("int8", 2);
  in.bucketElements = 400000;
  EXPECT_DOUBLE_EQ(gradReductionCost(in, c).sentBytes,
                   1028.0 * (2 * std::ceil(400000 / 1024.0) + std::ceil(248576 / 1024.0)));
  in.compression = *parseGradCompression("topk:0.001");
  EXPECT_DOUBLE_EQ(gradReductionCost(in, c).sentBytes, 8.0 * (2 * 400 + 249));
  // PowerSGD: four 512 x 512 matrices in buckets of 393,216 from the end:
  // the boundary at 655,360 cuts the third, which goes uncompressed.
  in.compression = *parseGradCompression("powersgd:4");
  in.tensors = {{512, 512}, {512, 512}, {512, 512}, {512, 512}};
  in.bucketElements = 393216;
  EXPECT_DOUBLE_EQ(gradReductionCost(in, c).sentBytes, 4.0 * (2 * 3 * 512 * 4 + 512 * 512));
}

TEST(GradReductionCost, CollectiveTimeFollowsTheBytesAndTheCodecIsCompute) {
  const Calibration c = bandwidthOnly();
  const GradReductionCost none = gradReductionCost(input("none", 2), c);
  EXPECT_DOUBLE_EQ(none.commNs, 4 * kN);  // beta 1 ns/B at the fit's own group size
  EXPECT_DOUBLE_EQ(none.codecNs, 0.0);
  EXPECT_TRUE(none.warnings.empty());
  for (const char* spec : {"fp16", "bf16", "int8", "topk:0.05", "powersgd:2"}) {
    const GradReductionCost cost = gradReductionCost(input(spec, 2), c);
    EXPECT_NEAR(cost.commNs, none.commNs / cost.compressionRatio(), 1e-9 * none.commNs) << spec;
    EXPECT_GT(cost.codecNs, 0.0) << spec;  // the measured constant, said so
    EXPECT_EQ(cost.warnings.size(), 1u) << spec;
  }
  // A calibration's own cost per element wins over the constant, and
  // PowerSGD's interpolates in the rank.
  Calibration own = c;
  own.ops.push_back({kCodecPart, "fp16", 0, 1, 3.0, 3.0, 1});
  own.ops.push_back({kCodecPart, "powersgd", 1, 1, 2.0, 2.0, 1});
  own.ops.push_back({kCodecPart, "powersgd", 3, 1, 6.0, 6.0, 1});
  EXPECT_DOUBLE_EQ(gradReductionCost(input("fp16", 2), own).codecNs, 3.0 * kN);
  EXPECT_DOUBLE_EQ(gradReductionCost(input("powersgd:2", 2), own).codecNs, 4.0 * kN);
  EXPECT_TRUE(gradReductionCost(input("fp16", 2), own).warnings.empty());
}

// The part of a codec's cost measured inside its collectives (the int8
// blocks' sums) is communication: exposed, as a trace's collective span
// shows it; the step's total stays the same. It never exceeds the codec.
TEST(GradReductionCost, PredictTheCodecsWorkInsideTheCollectivesIsCommunication) {
  Calibration c = bandwidthOnly();
  c.ops.push_back({kCodecPart, "int8", 0, 1, 10.0, 10.0, 1});
  const GradReductionCost whole = gradReductionCost(input("int8", 2), c);
  EXPECT_DOUBLE_EQ(whole.codecNs, 10.0 * kN);
  c.ops.push_back({kCodecPart, std::string("int8") + kCodecReduceSuffix, 0, 1, 4.0, 4.0, 1});
  const GradReductionCost split = gradReductionCost(input("int8", 2), c);
  EXPECT_DOUBLE_EQ(split.codecNs, 6.0 * kN);
  EXPECT_DOUBLE_EQ(split.commNs, whole.commNs + 4.0 * kN);
  EXPECT_DOUBLE_EQ(split.totalNs(), whole.totalNs());
  c.ops.back().wallNs = c.ops.back().cpuNs = 25.0;  // more than the codec: capped
  const GradReductionCost capped = gradReductionCost(input("int8", 2), c);
  EXPECT_DOUBLE_EQ(capped.codecNs, 0.0);
  EXPECT_DOUBLE_EQ(capped.totalNs(), whole.totalNs());
}

TEST(GradReductionCost, FitsScaleFromTheirGroupSizeAlongTheRing) {
  const Calibration c = bandwidthOnly(/*alphaNs=*/1000);
  GradReductionInput in = input("none", 4);
  in.bucketElements = static_cast<int64_t>(kN) / 4;  // 4 buckets
  // alpha by 2(p-1) steps (6 against 2), beta by the bus factor (3/2 against 1).
  EXPECT_DOUBLE_EQ(gradReductionCost(in, c).commNs, 4 * 1000 * 3.0 + 1.5 * 4 * kN);
  // No reduce-scatter fit: half an all-reduce at the fit's group size.
  GradReductionInput two = input("topk:1", 2);
  const double k = kN;
  EXPECT_DOUBLE_EQ(gradReductionCost(two, c).commNs, 2 * 500.0 + 0.5 * (4 * k * 2 + 4 * k * 2));
}

TEST(GradReductionCost, HierarchicalCrossesNodesWithOneKthOfTheBytes) {
  Calibration free;  // the transfers themselves cost nothing: only the emulated link
  free.links.push_back({"dp", "same_host", "allreduce", 4, 0, 0, 2, 1, 1});
  GradReductionInput flat = input("none", 4);
  flat.link = {2, 8.0, 0.0};  // K = 2, 8 Gb/s = 1 byte/ns
  GradReductionInput hier = flat;
  hier.algorithm = AllReduceAlgorithm::kHierarchical;
  const GradReductionCost f = gradReductionCost(flat, free);
  const GradReductionCost h = gradReductionCost(hier, free);
  const double bytes = 4 * kN;
  // docs/formulas.md: 2(N-1)/N · n/K over the inter-node link against 2(KN-1)/(KN) · n.
  EXPECT_DOUBLE_EQ(f.interNodeBytes, 2.0 * 3 / 4 * bytes);
  EXPECT_DOUBLE_EQ(h.interNodeBytes, 2.0 * 1 / 2 * bytes / 2);
  // Paced ring steps: flat 2(p-1) chunks of n/p; across 2 nodes 2(N-1) of n/(KN).
  EXPECT_DOUBLE_EQ(f.commNs, 6 * bytes / 4);
  EXPECT_DOUBLE_EQ(h.commNs, 2 * bytes / 4);
  EXPECT_LT(h.commNs, f.commNs);
  EXPECT_DOUBLE_EQ(h.compressionRatio(), f.uncompressedBytes / h.sentBytes);
  // Latency: per crossing ring step and bucket.
  flat.link = {2, 0.0, 10.0};
  flat.bucketElements = static_cast<int64_t>(kN) / 2;
  EXPECT_DOUBLE_EQ(gradReductionCost(flat, free).commNs, 6 * 2 * 10e3);
}

TEST(GradReductionCost, RealHostsCrossOnTheOtherHostFit) {
  Calibration c;
  c.links.push_back({"dp", "same_host", "allreduce", 2, 0, 1.0, 2, 1, 1});
  c.links.push_back({"dp", "other_host", "allreduce", 2, 0, 100.0, 2, 1, 1});
  GradReductionInput flat = input("none", 4);
  flat.link.ranksPerNode = 2;  // two hosts of two, no emulation
  GradReductionInput hier = flat;
  hier.algorithm = AllReduceAlgorithm::kHierarchical;
  const double bytes = 4 * kN;
  EXPECT_DOUBLE_EQ(gradReductionCost(flat, c).commNs, 100.0 * 1.5 * bytes);
  // Intra-node reduce-scatter and all-gather at half the same-host
  // all-reduce, the other-host all-reduce of n/K over 2 nodes.
  EXPECT_DOUBLE_EQ(gradReductionCost(hier, c).commNs, 2 * 0.5 * bytes + 100.0 * bytes / 2);
  Calibration oneHost = bandwidthOnly();
  const GradReductionCost said = gradReductionCost(hier, oneHost);
  ASSERT_EQ(said.warnings.size(), 1u);
  EXPECT_NE(said.warnings[0].find("no other_host allreduce fit"), std::string::npos);
}

Layout dp2(const std::string& spec) {
  Layout l;
  l.model = *modelPreset("small");
  l.dp = 2;
  l.microBatches = 2;
  l.gradCompression = *parseGradCompression(spec);
  return l;
}

Calibration withCompute(Calibration c) {
  for (const char* part : {"block", "embedding", "head"}) {
    c.ops.push_back({part, "forward", 1, 1, 1e6, 1e6, 1});
    c.ops.push_back({part, "backward", 1, 1, 2e6, 2e6, 1});
  }
  c.ops.push_back({"optimizer", "step", 0, 1, 1.0, 1.0, 1});
  return c;
}

TEST(GradReductionCost, CompressionLowersPredictedExposedCommByItsBytesRatio) {
  const Calibration c = withCompute(bandwidthOnly());
  auto none = predictLayout(dp2("none"), c);
  ASSERT_TRUE(none.isOk()) << none.status().message();
  const double noneDp = none->exposedCommNs.at("dp");
  // beta 1 ns/B at group 2: every fp32 gradient byte once.
  EXPECT_DOUBLE_EQ(noneDp, 4.0 * static_cast<double>(dp2("none").model.parameterCount()));
  for (const char* spec : {"fp16", "int8", "topk:0.01", "powersgd:4"}) {
    auto p = predictLayout(dp2(spec), c);
    ASSERT_TRUE(p.isOk()) << p.status().message();
    const double ratio = p->gradReduction.compressionRatio();
    EXPECT_GT(ratio, 1.5) << spec;
    EXPECT_NEAR(p->exposedCommNs.at("dp"), noneDp / ratio, 1e-9 * noneDp) << spec;
    // The step gains the communication saved less the encoding compute.
    EXPECT_NEAR(none->stepNs - p->stepNs,
                noneDp - p->exposedCommNs.at("dp") - p->gradReduction.codecNs, 1e-9 * none->stepNs)
        << spec;
  }
}

TEST(GradReductionCost, PredictAnOverlappedReductionExposesItsLastBucketOrWhatTheBackwardCannotHide) {
  // 100 MB of gradients in 25 MB buckets: K = 4, C = 40 ms.
  // A long backward (100 ms) hides three buckets: the last one's C/K shows.
  EXPECT_DOUBLE_EQ(exposedOverlappedReductionNs(40e6, 100e6, 25e6, 100e6), 10e6);
  // A short one (20 ms) hides 20 · 3/4 = 15 ms of the 40.
  EXPECT_DOUBLE_EQ(exposedOverlappedReductionNs(40e6, 100e6, 25e6, 20e6), 25e6);
  // One bucket: nothing overlaps.
  EXPECT_DOUBLE_EQ(exposedOverlappedReductionNs(40e6, 10e6, 25e6, 100e6), 40e6);
  // A partial last bucket counts as a bucket: 26 MB in 25 MB is K = 2.
  EXPECT_DOUBLE_EQ(exposedOverlappedReductionNs(40e6, 26e6, 25e6, 100e6), 20e6);
}

}  // namespace
}  // namespace bubblescope::layout
