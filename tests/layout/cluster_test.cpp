// The cluster cost model (planning/cluster_cost.h, cluster_plan.h,
// hardware.h): each term against a hand calculation, the profiles and
// presets as data, and the shapes Narayanan et al. (SC21) show.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "planning/cluster_cost.h"
#include "planning/cluster_plan.h"
#include "planning/formulas.h"
#include "planning/hardware.h"
#include "engine/layout/model_config.h"

namespace bubblescope::layout {
namespace {

HardwareProfile a100() { return loadHardware("a100-80g").value(); }

Layout clusterLayout(const std::string& model, int32_t dp, int32_t tp, int32_t pp, int32_t m,
                     int32_t b = 1) {
  Layout l;
  l.model = modelPreset(model).value();
  l.dp = dp;
  l.tp = tp;
  l.pp = pp;
  l.microBatches = m;
  l.microBatchSize = b;
  l.backend = Backend::kCuda;
  l.steps = 1;
  return l;
}

TEST(ClusterHardware, EveryBuiltInProfileLoads) {
  const std::vector<std::string> names = hardwareProfileNames();
  for (const char* want : {"a100-40g", "a100-80g", "h100-sxm", "h200", "b200"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  for (const std::string& n : names) {
    auto h = loadHardware(n);
    ASSERT_TRUE(h.isOk()) << h.status().message();
    EXPECT_EQ(h->name, n);
    EXPECT_GT(h->peakFlops("bf16"), 0) << n;
  }
  const HardwareProfile h = a100();
  EXPECT_DOUBLE_EQ(h.peakFlops("fp16"), 312e12);
  EXPECT_DOUBLE_EQ(h.peakFlops("fp8"), 0.0);  // Ampere has none
  // 8 NICs of 200 Gb/s shared by 8 GPUs: 25 GB/s each.
  EXPECT_DOUBLE_EQ(h.nicBytesPerGpu(), 25e9);
  EXPECT_DOUBLE_EQ(h.memoryBytes(), 80.0 * 1024 * 1024 * 1024);
}

TEST(ClusterHardware, BadProfilesSayEveryProblem) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "name": "x", "device": {"name": "d", "sms": 0, "peak_tflops": {"fp16": -1, "int4": 3},
    "memory_gib": 80, "memory_bandwidth_gbs": 2000},
    "gemm": {"max_efficiency": 1.5, "tiles": [[128]], "kernel_overhead_us": 1},
    "memory_bound_efficiency": 0.8, "network": {"nics": 8, "nic_gbps": 200, "latency_us": 5},
    "collectives": {"nvlink_efficiency": 0.8, "network_efficiency": 0.9}, "colour": 1})");
  auto h = hardwareFromJson(j, "x.json");
  ASSERT_FALSE(h.isOk());
  const std::string msg = h.status().message();
  for (const char* part : {"hardware profile x.json: ", "device.sms must be a positive integer",
                           "device.peak_tflops.fp16 must be a positive number",
                           "device.peak_tflops.int4: unknown dtype",
                           "gemm.max_efficiency must be at most 1", "gemm.tiles must be [M, N]",
                           "node is missing", "unknown key colour"}) {
    EXPECT_NE(msg.find(part), std::string::npos) << part << " in: " << msg;
  }
  auto unknown = loadHardware("a100-81g");
  ASSERT_FALSE(unknown.isOk());
  EXPECT_NE(unknown.status().message().find("a100-40g, a100-80g"), std::string::npos)
      << unknown.status().message();
}

TEST(ClusterHardware, AProfileFileLoadsAndBadJsonIsNamed) {
  const std::string path = ::testing::TempDir() + "/cluster_profile.json";
  {
    std::ofstream out(path);
    out << "{ not json";
  }
  auto bad = loadHardware(path);
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().message(), "hardware profile " + path + ": not valid JSON");
  {
    std::ofstream out(path);
    nlohmann::json j = nlohmann::json::parse(R"({"name": "mine",
      "device": {"name": "d", "sms": 100, "peak_tflops": {"bf16": 100},
                 "memory_gib": 24, "memory_bandwidth_gbs": 1000},
      "gemm": {"max_efficiency": 0.5, "tiles": [[128, 128]], "kernel_overhead_us": 0},
      "memory_bound_efficiency": 0.5,
      "node": {"name": "n", "gpus": 4, "nvlink_gbs": 100, "nvlink_latency_us": 0},
      "network": {"nics": 1, "nic_gbps": 100, "latency_us": 0},
      "collectives": {"nvlink_efficiency": 1, "network_efficiency": 1}})");
    out << j.dump();
  }
  auto mine = loadHardware(path);
  ASSERT_TRUE(mine.isOk()) << mine.status().message();
  EXPECT_EQ(mine->gpusPerNode, 4);
  EXPECT_DOUBLE_EQ(mine->nicBytesPerGpu(), 100e9 / 8 / 4);
}

TEST(ClusterModels, TableOnePresetsAreTheEnginesShapeOfThePapersModels) {
  struct Row {
    const char* name;
    int32_t heads, hidden, layers;
    double billions;  // Table 1's parameter count
  };
  const Row rows[] = {{"megatron-1.7b", 24, 2304, 24, 1.7},     {"megatron-3.6b", 32, 3072, 30, 3.6},
                      {"megatron-7.5b", 32, 4096, 36, 7.5},     {"megatron-18.4b", 48, 6144, 40, 18.4},
                      {"megatron-39.1b", 64, 8192, 48, 39.1},   {"megatron-76.1b", 80, 10240, 60, 76.1},
                      {"megatron-145.6b", 96, 12288, 80, 145.6}, {"megatron-310.1b", 128, 16384, 96, 310.1},
                      {"megatron-529.6b", 128, 20480, 105, 529.6}, {"megatron-1t", 160, 25600, 128, 1008.0}};
  for (const Row& r : rows) {
    const ModelConfig c = modelPreset(r.name).value();
    EXPECT_EQ(c.preset, r.name);
    EXPECT_EQ(c.numHeads, r.heads);
    EXPECT_EQ(c.hidden, r.hidden);
    EXPECT_EQ(c.numLayers, r.layers);
    EXPECT_EQ(c.vocabSize, 51200);
    EXPECT_EQ(c.seqLen, 2048);
    // The paper's P = 12lh²(1 + 13/(12h) + (V+s)/(12lh)) ties the output
    // to the embedding; the engine's decoder has its own head (V·h) and
    // final norm (2h): exactly that many more.
    const double l = c.numLayers, h = c.hidden, v = c.vocabSize, s = c.seqLen;
    const double paper = 12 * l * h * h * (1 + 13 / (12 * h) + (v + s) / (12 * l * h));
    EXPECT_NEAR(static_cast<double>(c.parameterCount()), paper + v * h + 2 * h, 1.0) << r.name;
    // Table 1 rounds to 0.1 B (1.65 is printed 1.7).
    EXPECT_NEAR(paper / 1e9, r.billions, std::max(0.05, 0.01 * r.billions)) << r.name;
  }
  const ModelConfig gpt3 = modelPreset("gpt3-175b").value();
  EXPECT_EQ(gpt3.numLayers, 96);
  EXPECT_EQ(gpt3.hidden, 12288);
  const std::vector<std::string> names = modelPresetNames();
  EXPECT_EQ(names.front(), "tiny");
  EXPECT_EQ(names.back(), "gpt3-175b");
}

TEST(ClusterCost, GemmTimeIsTheRooflineOverTheBestTileUtilization) {
  const HardwareProfile h = a100();
  const ClusterSettings s;
  // 4096³: 256x128 tiles 16·32 = 512 in ⌈512/108⌉ = 5 waves; 128x128 tiles
  // 1024 in 10 waves; both use 512/540 of the launched work.
  const double u = 512.0 / 540.0;
  const double flops = 2.0 * 4096 * 4096 * 4096;
  EXPECT_NEAR(gemmNs(h, s, {4096, 4096, 4096}), 4000 + flops / (312e12 * 0.7 * u) * 1e9, 1e-6);
  // 100 x 100 x 100: one tile of either size, one wave of 108 SMs: tiny
  // utilization; compute 2e6 / (312e12·0.7·u) with u = 1e4 / (108·128·128)
  // against 6e4 bytes / (2039·0.8 bytes/ns): compute-bound.
  const double small = 1e4 / (108.0 * 128 * 128);
  EXPECT_NEAR(gemmNs(h, s, {100, 100, 100}), 4000 + 2e6 / (312e12 * 0.7 * small) * 1e9, 1e-6);
  // An outer product (k = 8) is memory-bound: bytes 2·(8192·8·2 + 8192²)
  // at 2039·0.8 bytes/ns against 2·8192²·8 FLOPs at 218 TFLOP/s.
  const double bytes = 2.0 * (8192.0 * 8 * 2 + 8192.0 * 8192);
  EXPECT_NEAR(gemmNs(h, s, {8192, 8192, 8}), 4000 + bytes / (2039 * 0.8), 1e-6);
  // The global efficiency replaces the profile's.
  ClusterSettings half;
  half.gemmEfficiency = 0.35;
  EXPECT_NEAR(gemmNs(h, half, {4096, 4096, 4096}) - 4000,
              2 * (gemmNs(h, s, {4096, 4096, 4096}) - 4000), 1e-6);
  EXPECT_NEAR(memoryBoundNs(h, 1e9, 3), 3 * 4000 + 1e9 / (2039 * 0.8), 1e-6);
}

TEST(ClusterCost, BlockFlopsAreMegatronsAndTheOpsAddTheirParts) {
  const HardwareProfile h = a100();
  const ClusterSettings s;
  const ModelConfig m = modelPreset("megatron-18.4b").value();
  const double b = 2, seq = 2048, hid = 6144, t = 8, a = 48;
  const PartOpNs p = clusterBlockNs(m, h, s, 2, 8);
  // 24·b·s·h²/t + 4·b·s²·h/t (Narayanan et al. §5.1, one forward).
  EXPECT_NEAR(p.flops, (24 * b * seq * hid * hid + 4 * b * seq * seq * hid) / t, 1.0);
  const double T = b * seq, f = 4 * hid, d = hid / a, batch = b * a / t;
  double fwd = 0;
  for (GemmShape g : std::vector<GemmShape>{{T, 3 * hid / t, hid},
                                            {T, hid, hid / t},
                                            {T, f / t, hid},
                                            {T, hid, f / t},
                                            {seq, seq, d, batch},
                                            {seq, d, seq, batch}}) {
    fwd += gemmNs(h, s, g);
  }
  const double elements = T * (11 * hid + 10 * hid / t + 4.5 * (a / t) * seq);
  EXPECT_NEAR(p.forward, fwd + memoryBoundNs(h, 2 * elements, 9), 1e-3);
  double w = 0;
  for (GemmShape g : std::vector<GemmShape>{
           {hid, 3 * hid / t, T}, {hid / t, hid, T}, {hid, f / t, T}, {f / t, hid, T}}) {
    w += gemmNs(h, s, g);
  }
  EXPECT_NEAR(p.backwardWeight, w, 1e-3);
  EXPECT_GT(p.backwardInput, p.forward);  // two attention products each, twice the elementwise
}

TEST(ClusterCost, LinkFitsAreRingsOverNvlinkAndTheNodesNics) {
  const HardwareProfile h = a100();
  auto fit = [](const std::vector<LinkFit>& fits, const std::string& dim, const std::string& link,
                const std::string& collective) {
    for (const LinkFit& f : fits) {
      if (f.dim == dim && f.link == link && f.collective == collective) return f;
    }
    ADD_FAILURE() << dim << " " << link << " " << collective;
    return LinkFit{};
  };
  // tp 8 x dp 4 (32 GPUs, 4 nodes): one dp rank of each group per node.
  Layout l = clusterLayout("megatron-18.4b", 4, 8, 1, 4);
  l.hosts = clusterHosts(l.worldSize(), 8);
  ASSERT_EQ(l.hosts.size(), 4u);
  EXPECT_EQ(l.hosts[3], "node3:8");
  std::vector<LinkFit> fits = clusterLinkFits(l, h);
  const LinkFit tp = fit(fits, "tp", "same_host", "allreduce");
  EXPECT_DOUBLE_EQ(tp.alphaNs, 2 * 7 * 1000.0);
  EXPECT_NEAR(tp.betaNsPerByte, 14.0 / 8 / (0.8 * 300e9) * 1e9, 1e-15);
  const LinkFit dp = fit(fits, "dp", "other_host", "allreduce");
  EXPECT_EQ(dp.groupSize, 4);
  EXPECT_DOUBLE_EQ(dp.alphaNs, 2 * 3 * 5000.0);
  EXPECT_NEAR(dp.betaNsPerByte, 6.0 / 4 / (0.9 * 25e9) * 1e9, 1e-15);  // one NIC
  const LinkFit gather = fit(fits, "zero", "other_host", "all_gather");
  EXPECT_NEAR(gather.betaNsPerByte, 3.0 / 4 / (0.9 * 25e9) * 1e9, 1e-15);
  // tp 1 x dp 32: 8 dp ranks per node share its 8 NICs.
  Layout wide = clusterLayout("megatron-1.7b", 32, 1, 1, 16);
  wide.hosts = clusterHosts(32, 8);
  fits = clusterLinkFits(wide, h);
  EXPECT_NEAR(fit(fits, "dp", "other_host", "allreduce").betaNsPerByte,
              62.0 / 32 / (0.9 * 25e9 * 8) * 1e9, 1e-15);
  // pp across nodes with tp 8: each tp rank sends 1/8 over its NIC, then
  // an NVLink all-gather.
  Layout pipe = clusterLayout("megatron-39.1b", 1, 8, 2, 8);
  pipe.hosts = clusterHosts(16, 8);
  fits = clusterLinkFits(pipe, h);
  const LinkFit p2p = fit(fits, "pp", "other_host", "p2p");
  EXPECT_DOUBLE_EQ(p2p.alphaNs, 5000.0);
  EXPECT_NEAR(p2p.betaNsPerByte, 1e9 / (8 * 0.9 * 25e9) + 7.0 / 8 * 1e9 / (0.8 * 300e9), 1e-15);
}

TEST(ClusterCost, OneGpuStepIsTheSumOfItsOps) {
  const HardwareProfile h = a100();
  const ClusterSettings s;
  Layout l = clusterLayout("megatron-1.7b", 1, 1, 1, 2, 2);
  auto p = predictCluster(l, h, s);
  ASSERT_TRUE(p.isOk()) << p.status().message();
  const ModelConfig& m = l.model;
  const PartOpNs block = clusterBlockNs(m, h, s, 2, 1);
  const PartOpNs emb = clusterEmbeddingNs(m, h, 2, 1);
  const PartOpNs head = clusterHeadNs(m, h, s, 2, 1);
  auto all = [](const PartOpNs& x) { return x.forward + x.backwardInput + x.backwardWeight; };
  const double perMb = m.numLayers * all(block) + all(emb) + all(head);
  const double adam = m.parameterCount() * 30.0 / (2039 * 0.8);
  EXPECT_NEAR(p->stepNs, 2 * perMb + adam, 1e-6 * p->stepNs);
  EXPECT_TRUE(p->warnings.empty()) << p->warnings.front();
  // Memory: 16 bytes a parameter (fp16 weights and gradients, fp32 master
  // and moments) + the engine's kept activations of 2 micro-batches at
  // 2 bytes (1F1B on one stage holds one; the simulator counts its peak).
  const double states = 16.0 * m.parameterCount();
  EXPECT_GE(p->memoryBytes[0], states);
  EXPECT_NEAR(p->memoryBytes[0] - states, p->activationBytes[0], 1.0);
}

TEST(ClusterCost, RecomputeKeepsEachLayersInputAndRecomputesOneLayer) {
  const HardwareProfile h = a100();
  Layout l = clusterLayout("megatron-1.7b", 1, 1, 1, 1, 1);
  l.recompute = true;
  auto p = predictCluster(l, h, ClusterSettings{});
  ASSERT_TRUE(p.isOk()) << p.status().message();
  const ModelConfig& m = l.model;
  const double bsh = 2048.0 * 2304;
  // Kept: 24 layer inputs + the head's b·s·(h + V + 3), 2 bytes each; plus
  // one layer's full activations during its backward (the engine's kept
  // tensors of one block: b·s·(5h + 4 + 4h + 2F) + b·a·s² + the input).
  const double kept = 2 * (24 * bsh + 2048.0 * (2304 + 51200 + 3));
  const double oneLayer =
      2 * (bsh + 2048.0 * (5 * 2304 + 4 + 4 * 2304 + 2 * 4 * 2304) + 24.0 * 2048 * 2048);
  EXPECT_NEAR(p->activationBytes[0], kept + oneLayer, 1.0);
  Layout off = l;
  off.recompute = false;
  auto q = predictCluster(off, h, ClusterSettings{});
  const PartOpNs block = clusterBlockNs(m, h, ClusterSettings{}, 1, 1);
  // Recompute adds one forward of every layer (not of the embedding and head).
  EXPECT_NEAR(p->stepNs - q->stepNs, 24 * block.forward, 1e-6 * p->stepNs);
}

TEST(ClusterCost, TensorParallelAllReducesAreCountedOnNvlink) {
  const HardwareProfile h = a100();
  Layout l = clusterLayout("megatron-18.4b", 1, 8, 1, 1, 1);
  auto p = predictCluster(l, h, ClusterSettings{});
  ASSERT_TRUE(p.isOk()) << p.status().message();
  // 4 all-reduces a layer (2 forward, 2 backward) of b·s·h fp16 over 8 ranks.
  const double bytes = 2.0 * 2048 * 6144;
  const double one = 2 * 7 * 1000.0 + 14.0 / 8 / (0.8 * 300e9) * 1e9 * bytes;
  EXPECT_NEAR(p->exposedCommNs.at("tp"), 40 * 4 * one, 1e-6 * p->exposedCommNs.at("tp"));
}

TEST(ClusterCost, DataParallelAllReduceOverlapsTheLastBackward) {
  const HardwareProfile h = a100();
  const ClusterSettings s;
  Layout l = clusterLayout("megatron-1.7b", 32, 1, 1, 1, 1);
  l.overlap = false;
  auto whole = predictCluster(l, h, s);
  ASSERT_TRUE(whole.isOk()) << whole.status().message();
  const double c = whole->exposedCommNs.at("dp");
  // Cross-check C: 2-byte gradients of every parameter in ⌈bytes / 25 MiB⌉
  // buckets over 32 ranks, 8 a node: 62 ring steps of 5 us a bucket, bus
  // bandwidth min(0.8·300, 0.9·25·8) GB/s.
  const double bytes = 2.0 * l.model.parameterCount();
  const double k = std::ceil(bytes / (25.0 * 1024 * 1024));
  EXPECT_NEAR(c, k * 62 * 5000 + 62.0 / 32 * bytes / 180e9 * 1e9, 1e-6 * c);
  l.overlap = true;
  auto hidden = predictCluster(l, h, s);
  ASSERT_TRUE(hidden.isOk());
  const PartOpNs block = clusterBlockNs(l.model, h, s, 1, 1);
  const PartOpNs emb = clusterEmbeddingNs(l.model, h, 1, 1);
  const PartOpNs head = clusterHeadNs(l.model, h, s, 1, 1);
  auto back = [](const PartOpNs& x) { return x.backwardInput + x.backwardWeight; };
  const double tb = l.model.numLayers * back(block) + back(emb) + back(head);
  const double exposed = std::max(c / k, c - tb * (k - 1) / k);
  EXPECT_NEAR(hidden->exposedCommNs.at("dp"), exposed, 1e-6 * c);
  EXPECT_NEAR(whole->stepNs - hidden->stepNs, c - exposed, 1e-6 * c);
  EXPECT_LT(exposed, c);
}

TEST(ClusterCost, MegatronFlopsFormula) {
  const ModelConfig m = modelPreset("megatron-1.7b").value();
  const double B = 512, s = 2048, l = 24, h = 2304, v = 51200;
  EXPECT_DOUBLE_EQ(megatronIterationFlops(m, 512),
                   96 * B * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h)));
  // With recompute, TFLOP/s per GPU is that over step · GPUs.
  Layout lay = clusterLayout("megatron-1.7b", 32, 1, 1, 16);
  lay.recompute = true;
  EXPECT_NEAR(clusterTflopsPerGpu(lay, 1e9), megatronIterationFlops(m, 512) / 32 / 1e12, 1e-9);
  // MFU counts the model's FLOPs only: 72 instead of 96, V/(12lh).
  const double model = 72 * B * s * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
  EXPECT_NEAR(clusterMfu(lay, 1e9, 312e12), model / 32 / 312e12, 1e-12);
}

TEST(ClusterShapes, ZeroThreeWithoutModelParallelismLosesThroughputAsGpusGrow) {
  // Narayanan et al. Fig. 10: 175B, global batch 1536 fixed; ZeRO-3 with
  // dp only gathers every parameter for each micro-batch on every GPU,
  // while each GPU's share of the batch halves as the GPUs double. The
  // planner's best ZeRO-3 layout without model parallelism at each size:
  ClusterPlanRequest r;
  r.hardware = a100();
  r.model = modelPreset("gpt3-175b").value();
  r.globalBatch = 1536;
  r.tp = 1;
  r.pp = 1;
  r.zeroStages = {ZeroStage::kParameters};
  r.top = 1;
  double previous = 0;
  for (int32_t gpus : {384, 768, 1536}) {
    r.gpus = gpus;
    auto plan = planCluster(r);
    ASSERT_TRUE(plan.isOk()) << plan.status().message();
    const double tflops = plan->best.front().tflopsPerGpu;
    if (previous > 0) {
      EXPECT_LT(tflops, 0.9 * previous) << gpus << " GPUs";
    }
    previous = tflops;
  }
}

TEST(ClusterShapes, InterleavingBeatsOneFOneBAtSmallBatch) {
  // Narayanan et al. Fig. 12: 175B on 96 GPUs (tp 8, pp 12): at a small
  // batch the interleaved schedule's smaller bubble wins.
  const HardwareProfile h = a100();
  Layout plain = clusterLayout("gpt3-175b", 1, 8, 12, 12, 1);
  plain.recompute = true;
  Layout inter = plain;
  inter.schedule = ScheduleKind::kInterleaved;
  inter.virtualChunks = 2;
  auto a = predictCluster(plain, h, ClusterSettings{});
  auto b = predictCluster(inter, h, ClusterSettings{});
  ASSERT_TRUE(a.isOk()) << a.status().message();
  ASSERT_TRUE(b.isOk()) << b.status().message();
  EXPECT_LT(b->stepNs, 0.95 * a->stepNs);
}

TEST(ClusterPlan, RanksLayoutsThatFitAndRefusesWithTheNumbers) {
  ClusterPlanRequest r;
  r.hardware = a100();
  r.model = modelPreset("megatron-18.4b").value();
  r.gpus = 64;
  r.globalBatch = 256;
  auto plan = planCluster(r);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  ASSERT_FALSE(plan->best.empty());
  EXPECT_LE(plan->simulatedCount, r.simulated);
  for (size_t i = 0; i < plan->best.size(); ++i) {
    const ClusterCandidate& c = plan->best[i];
    EXPECT_LE(c.peakMemoryBytes, r.hardware.memoryBytes());
    EXPECT_EQ(c.layout.worldSize(), 64);
    EXPECT_GT(c.tflopsPerGpu, 0);
    EXPECT_LT(c.mfu, 1.0);
    if (i > 0) {
      EXPECT_GE(c.prediction.stepNs, plan->best[i - 1].prediction.stepNs);
    }
  }
  // The 1T model does not fit 8 GPUs of 40 GiB.
  r.hardware = loadHardware("a100-40g").value();
  r.model = modelPreset("megatron-1t").value();
  r.gpus = 8;
  r.globalBatch = 8;
  auto none = planCluster(r);
  ASSERT_FALSE(none.isOk());
  EXPECT_NE(none.status().message().find("no layout fits the memory"), std::string::npos)
      << none.status().message();
  EXPECT_NE(none.status().message().find("40 GiB"), std::string::npos);
  // One layer and one head: only dp, and dp 2 does not divide 7.
  r.model = modelPreset("tiny").value();
  r.model.numLayers = 1;
  r.model.numHeads = 1;
  r.gpus = 2;
  r.globalBatch = 7;
  r.hardware = a100();
  auto odd = planCluster(r);
  ASSERT_FALSE(odd.isOk());
  EXPECT_NE(odd.status().message().find("not divisible by dp"), std::string::npos)
      << odd.status().message();
}

TEST(ClusterPlan, AnswersForThousandsOfGpusWithinTheSimulatedBudget) {
  ClusterPlanRequest r;
  r.hardware = a100();
  r.model = modelPreset("megatron-1t").value();
  r.gpus = 3072;
  r.globalBatch = 3072;
  r.simulated = 6;
  auto plan = planCluster(r);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  EXPECT_EQ(plan->simulatedCount, 6);
  EXPECT_GT(plan->considered, plan->simulatedCount);
  EXPECT_GT(plan->best.front().tflopsPerGpu, 50);
}

}  // namespace
}  // namespace bubblescope::layout
