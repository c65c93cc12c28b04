// Layout validation (one test per problem, asserting the message), JSON.
#include "engine/layout/layout.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

namespace bubblescope::layout {
namespace {

using nlohmann::json;

// A valid 3D layout: small model (4 layers, 8 heads, hidden 256).
Layout base() {
  Layout l;
  l.model = modelPreset("small").value();
  l.dp = 2;
  l.tp = 2;
  l.pp = 2;
  l.microBatches = 4;
  l.microBatchSize = 2;
  return l;
}

std::string problems(const Layout& l, std::optional<int32_t> world = std::nullopt) {
  return validate(l, world).message();
}

TEST(LayoutValidate, DefaultsAndBaseAreValid) {
  EXPECT_TRUE(validate(Layout{}).isOk()) << problems(Layout{});
  EXPECT_TRUE(validate(base(), 8).isOk()) << problems(base(), 8);
  EXPECT_EQ(Layout{}.model, modelPreset("tiny").value());
}

TEST(LayoutValidate, WorldSizeMustMatch) {
  EXPECT_EQ(problems(base(), 6),
            "invalid layout: world size 6 does not match dp 2 x tp 2 x pp 2 = 8");
}

TEST(LayoutValidate, GlobalBatchMustAgree) {
  Layout l = base();
  l.globalBatch = 32;
  EXPECT_EQ(problems(l),
            "invalid layout: global_batch 32 does not equal micro_batch_size 2 x "
            "micro_batches 4 x dp 2 = 16");
  l.globalBatch = 16;
  EXPECT_TRUE(validate(l).isOk());
}

TEST(ZeroStage, NumbersPredicatesAndGradSync) {
  EXPECT_EQ(zeroStageFromNumber(4).status().message(),
            "zero_stage 4 is unknown (known: 0, 1, 2, 3)");
  EXPECT_FALSE(zeroStageFromNumber(-1).isOk());
  for (int32_t n = 0; n <= 3; ++n) {
    const ZeroStage s = zeroStageFromNumber(n).value();
    EXPECT_EQ(zeroStageNumber(s), n);
    EXPECT_EQ(shardsOptimizer(s), n >= 1) << n;
    EXPECT_EQ(shardsGradients(s), n >= 2) << n;
    EXPECT_EQ(shardsParameters(s), n == 3) << n;
    EXPECT_EQ(gathersUpdatedParameters(s), n == 1 || n == 2) << n;
    EXPECT_EQ(gradSyncFor(s), n == 0 ? GradSync::kAllReduce : GradSync::kReduceScatter) << n;
  }
  EXPECT_EQ(layoutFromJson(json{{"zero_stage", 4}}).status().message(),
            "invalid layout: zero_stage 4 is unknown (known: 0, 1, 2, 3)");
}

TEST(LayoutValidate, InterleavedNeedsMicroBatchesDivisibleByPp) {
  Layout l = base();
  l.schedule = ScheduleKind::kInterleaved;
  l.virtualChunks = 2;
  l.microBatches = 3;
  EXPECT_EQ(problems(l),
            "invalid layout: schedule interleaved needs micro_batches divisible by pp "
            "(Megatron-LM), got micro_batches 3, pp 2");
}

TEST(LayoutValidate, ZeroBubbleNeedsMicroBatchesAtLeastPp) {
  Layout l = base();
  l.schedule = ScheduleKind::kZeroBubbleH1;
  l.microBatches = 1;
  EXPECT_EQ(problems(l),
            "invalid layout: schedule zb-h1 needs micro_batches >= pp, got micro_batches 1, "
            "pp 2");
}

TEST(LayoutValidate, OneFOneBAndGPipeAcceptFewerMicroBatchesThanStages) {
  Layout l = base();
  l.microBatches = 1;
  EXPECT_TRUE(validate(l).isOk());
  l.schedule = ScheduleKind::kGPipe;
  EXPECT_TRUE(validate(l).isOk());
}

TEST(LayoutValidate, FewerLayersThanVirtualStages) {
  Layout l = base();
  l.schedule = ScheduleKind::kInterleaved;
  l.virtualChunks = 3;
  EXPECT_EQ(problems(l),
            "invalid layout: the model has 4 layers, fewer than pp 2 x virtual_chunks 3 = 6");
}

TEST(LayoutValidate, TensorParallelDegreeMustDivideTheSizes) {
  Layout l = base();
  l.tp = 3;
  l.dp = 1;
  EXPECT_EQ(problems(l),
            "invalid layout: heads 8 is not divisible by tp 3; hidden 256 is not divisible "
            "by tp 3; MLP size 1024 is not divisible by tp 3");
  // Heads alone: 12 heads of 64 (hidden 768, MLP 3072) with tp 8.
  l.model = modelPreset("gpt2-124m").value();
  l.tp = 8;
  EXPECT_EQ(problems(l), "invalid layout: heads 12 is not divisible by tp 8");
}

TEST(LayoutValidate, ExpertParallelismNeedsExpertsItDividesAndNoTp) {
  Layout l = base();
  l.tp = 1;
  l.dp = 4;
  l.ep = 2;
  EXPECT_EQ(problems(l), "invalid layout: ep 2 needs a mixture-of-experts model (experts > 0)");
  l.model.experts = 6;
  l.model.topK = 2;
  EXPECT_TRUE(validate(l).isOk()) << problems(l);
  l.ep = 4;
  l.dp = 6;
  l.zeroStage = ZeroStage::kGradients;
  EXPECT_EQ(problems(l),
            "invalid layout: experts 6 is not divisible by ep 4; dp 6 is not divisible by ep 4 "
            "(the experts split over ep ranks of the dp group); ep 4 supports zero_stage 0 or 1, "
            "got 2");
  l = base();  // tp 2
  l.model.experts = 4;
  EXPECT_EQ(problems(l),
            "invalid layout: mixture of experts (experts 4) does not combine with tp 2 (use dp "
            "and ep)");
  l.tp = 1;
  l.ep = 0;
  EXPECT_EQ(problems(l), "invalid layout: ep must be >= 1, got 0");
}

TEST(LayoutJson, EpIsReadAndWrittenOnlyWhenUsed) {
  Layout l = base();
  l.tp = 1;
  EXPECT_FALSE(toJson(l).contains("ep"));
  l.model.experts = 4;
  l.ep = 2;
  const json j = toJson(l);
  EXPECT_EQ(j.at("ep"), 2);
  auto back = layoutFromJson(j);
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(back->ep, 2);
  EXPECT_EQ(back->model.experts, 4);
  EXPECT_EQ(toJson(*back).at("ep"), 2);
}

TEST(LayoutJson, PrecisionIsReadAndWrittenOnlyWhenBf16) {
  Layout l = base();
  EXPECT_FALSE(toJson(l).contains("precision"));
  l.precision = Precision::kBf16;
  const json j = toJson(l);
  EXPECT_EQ(j.at("precision"), "bf16");
  auto back = layoutFromJson(j);
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(back->precision, Precision::kBf16);
  json fp16 = j;
  fp16["precision"] = "fp16";
  auto refused = layoutFromJson(fp16);
  ASSERT_FALSE(refused.isOk());
  EXPECT_NE(refused.status().message().find("unknown precision 'fp16' (known: fp32, bf16)"),
            std::string::npos)
      << refused.status().message();
}

TEST(LayoutValidate, VirtualChunksOnlyWithInterleaved) {
  Layout l = base();
  l.virtualChunks = 2;
  EXPECT_EQ(problems(l), "invalid layout: virtual_chunks 2 needs schedule interleaved, got 1f1b");
  l.virtualChunks = 1;
  l.schedule = ScheduleKind::kInterleaved;
  EXPECT_EQ(problems(l),
            "invalid layout: schedule interleaved needs virtual_chunks >= 2 (with 1 chunk it "
            "is 1f1b)");
}

TEST(LayoutValidate, ExplicitStageSplitMustSumToTheLayers) {
  Layout l = base();
  l.stageLayers = {3, 2};
  EXPECT_EQ(problems(l), "invalid layout: stage_layers sums to 5 but the model has 4 layers");
  l.stageLayers = {4};
  EXPECT_EQ(problems(l),
            "invalid layout: stage_layers has 1 entries, expected pp x virtual_chunks = 2");
  l.stageLayers = {3, 1};
  EXPECT_TRUE(validate(l).isOk());
}

TEST(LayoutValidate, DegreesCountsAndRates) {
  Layout l = base();
  l.dp = 0;
  l.steps = 0;
  l.learningRate = -1;
  l.bucketMb = 0;
  EXPECT_EQ(problems(l),
            "invalid layout: dp must be >= 1, got 0; steps must be >= 1, got 0; "
            "learning_rate must be positive, got -1.000000; bucket_mb must be positive, got "
            "0.000000");
}

TEST(LayoutValidate, HostsOrHostfileNotBoth) {
  Layout l = base();
  l.hosts = {"a:4", "b:4"};
  l.hostfile = "hosts.txt";
  EXPECT_EQ(problems(l), "invalid layout: hosts and hostfile are both given; use one");
}

TEST(LayoutValidate, EveryProblemInOneMessage) {
  Layout l = base();
  l.globalBatch = 7;
  l.tp = 3;
  EXPECT_EQ(problems(l, 8),
            "invalid layout: world size 8 does not match dp 2 x tp 3 x pp 2 = 12; "
            "global_batch 7 does not equal micro_batch_size 2 x micro_batches 4 x dp 2 = 16; "
            "heads 8 is not divisible by tp 3; "
            "hidden 256 is not divisible by tp 3; MLP size 1024 is not divisible by tp 3");
}

TEST(LayoutJson, ParsesEveryKey) {
  const json j = json::parse(R"({
    "comment": "dp2 x tp2 x pp2, ZeRO 1",
    "_comment": "anything",
    "model": {"preset": "small", "layers": 8, "comment": "deeper"},
    "dp": 2, "tp": 2, "pp": 2, "zero_stage": 1,
    "schedule": "interleaved", "virtual_chunks": 2,
    "micro_batches": 4, "micro_batch_size": 2, "global_batch": 16,
    "steps": 5, "seed": 42, "backend": "auto", "overlap": false,
    "bucket_mb": 4.5, "bucket_elements": 1000, "recompute": true,
    "stage_layers": [2, 2, 2, 2], "hosts": "a:4,b:4",
    "learning_rate": 0.001, "data_file": "data/tiny.txt"
  })");
  const Result<Layout> r = layoutFromJson(j, 8);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  const Layout& l = r.value();
  EXPECT_EQ(l.model.numLayers, 8);
  EXPECT_EQ(l.model.preset, "custom");
  EXPECT_EQ(l.model.hidden, 256);
  EXPECT_EQ(l.dp, 2);
  EXPECT_EQ(l.zeroStage, ZeroStage::kOptimizer);
  EXPECT_EQ(l.schedule, ScheduleKind::kInterleaved);
  EXPECT_EQ(l.virtualChunks, 2);
  EXPECT_EQ(l.globalBatch, 16);
  EXPECT_EQ(l.seed, 42u);
  EXPECT_EQ(l.backend, Backend::kAuto);
  EXPECT_FALSE(l.overlap);
  EXPECT_EQ(l.bucketElementCount(4), 1000);
  EXPECT_TRUE(l.recompute);
  EXPECT_EQ(l.stageLayers, (std::vector<int32_t>{2, 2, 2, 2}));
  EXPECT_EQ(l.hosts, (std::vector<std::string>{"a:4", "b:4"}));
  EXPECT_DOUBLE_EQ(l.learningRate, 0.001);
  EXPECT_EQ(l.dataFile, "data/tiny.txt");
  EXPECT_EQ(l.gradSync(), GradSync::kReduceScatter);
  const Schedule s = scheduleFor(l).value();
  EXPECT_EQ(s.chunks, 2);
  EXPECT_EQ(s.zeroStage, ZeroStage::kOptimizer);
  EXPECT_EQ(s.stageOps[0].back().type, OpType::kAllGatherParams);
  EXPECT_EQ(s.stageOps[0][s.stageOps[0].size() - 2].type, OpType::kOptimizerStep);
  EXPECT_EQ(s.stageOps[0][s.stageOps[0].size() - 3].type, OpType::kReduceScatterGrads);
}

TEST(LayoutJson, RoundTrip) {
  Layout l = base();
  l.model.numLayers = 6;
  l.model.preset = "custom";
  l.zeroStage = ZeroStage::kGradients;
  l.schedule = ScheduleKind::kZeroBubbleH1;
  l.globalBatch = 16;
  l.steps = 7;
  l.seed = 99;
  l.backend = Backend::kCuda;
  l.overlap = false;
  l.bucketMb = 1.5;
  l.recompute = true;
  l.stageLayers = {4, 2};
  l.hostfile = "hosts.txt";
  l.learningRate = 0.0123;
  l.dataFile = "corpus.txt";
  const json j = toJson(l);
  EXPECT_FALSE(j["model"].contains("preset"));  // custom sizes stand alone
  const Result<Layout> back = layoutFromJson(j);
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(back.value(), l);
  // And through text.
  EXPECT_EQ(layoutFromString(j.dump(2)).value(), l);
  // Defaults round trip too, with the preset kept.
  EXPECT_EQ(layoutFromJson(toJson(Layout{})).value(), Layout{});
  EXPECT_EQ(toJson(Layout{})["model"]["preset"], "tiny");
}

TEST(ModelConfigJson, ACustomModelRoundTripsThroughItsJson) {
  ModelConfig m = defaultLayoutModel();
  m.experts = 4;
  m.topK = 2;
  m.capacityFactor = 2.0;
  m.preset = "custom";  // as modelConfigFromJson names a changed preset
  auto j = toJson(m);
  ASSERT_EQ(j["preset"], "custom");
  auto back = modelConfigFromJson(j);
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(*back, m);
  EXPECT_FALSE(modelConfigFromJson({{"preset", "nonsense"}}).isOk());
}

TEST(LayoutJson, UnknownKeysAreErrorsWithASuggestion) {
  EXPECT_EQ(layoutFromJson(json{{"micro_batch", 4}}).status().message(),
            "invalid layout: unknown key 'micro_batch' (did you mean 'micro_batches'?)");
  EXPECT_EQ(layoutFromJson(json{{"colour", "red"}}).status().message(),
            "invalid layout: unknown key 'colour'");
  EXPECT_EQ(
      layoutFromJson(json{{"model", {{"preset", "small"}, {"hiden", 64}}}}).status().message(),
      "invalid layout: unknown key 'model.hiden' (did you mean 'model.hidden'?)");
}

TEST(LayoutJson, UnknownNamesAndBadTypesAreReportedWithTheRest) {
  const json j = {{"schedule", "pipedream"},
                  {"backend", "gpu"},
                  {"pp", "4"},
                  {"zero_stage", 7},
                  {"model", "huge"}};
  // pp failed to parse, so no check reads its default; the others still run.
  EXPECT_EQ(layoutFromJson(j, 4).status().message(),
            "invalid layout: unknown backend 'gpu' (known: cpu, cuda, auto); model: unknown "
            "model preset 'huge' (known: tiny, small, gpt2-124m, megatron-1.7b, megatron-3.6b, "
            "megatron-7.5b, megatron-18.4b, megatron-39.1b, megatron-76.1b, megatron-145.6b, "
            "megatron-310.1b, megatron-529.6b, megatron-1t, gpt3-175b); pp must be an integer, got "
            "\"4\"; unknown schedule 'pipedream' (known: gpipe, 1f1b, interleaved, zb-h1); "
            "zero_stage 7 is unknown (known: 0, 1, 2, 3)");
}

TEST(LayoutJson, SeedFromCodeBuiltJsonAndNegativeSeed) {
  EXPECT_EQ(layoutFromJson(json{{"seed", 42}}).value().seed, 42u);
  EXPECT_EQ(layoutFromJson(json{{"seed", -1}}).status().message(),
            "invalid layout: seed: -1 is outside the allowed range 0 to 18446744073709551615");
}

// Every number of a layout is range-checked where it is read: no exception
// (1e400 used to abort with nlohmann's out_of_range.406), no wrapped value
// (seq_len 2147483648 used to read as -2147483648), no dropped duplicate.
TEST(LayoutJson, NumbersOutOfTheirRangeAreOneMessageNamingTheKey) {
  EXPECT_EQ(layoutFromString(R"({"model":"tiny","dp":1e400})").status().message(),
            "dp: 1e400 is outside the allowed range -1.79769e+308 to 1.79769e+308");
  EXPECT_EQ(layoutFromString(R"({"model":"tiny","steps":1e400})").status().message(),
            "steps: 1e400 is outside the allowed range -1.79769e+308 to 1.79769e+308");
  EXPECT_EQ(
      layoutFromString(R"({"model":{"preset":"tiny","seq_len":2147483648}})").status().message(),
      "invalid layout: model.seq_len: 2147483648 is outside the allowed range 1 to "
      "2147483647");
  EXPECT_EQ(layoutFromString(R"({"dp":18446744073709551615})").status().message(),
            "invalid layout: dp: 18446744073709551615 is outside the allowed range -2147483648 "
            "to 2147483647");
  EXPECT_EQ(layoutFromString(R"({"dp":2.5})").status().message(),
            "invalid layout: dp: '2.5' is not a whole number");
  EXPECT_EQ(
      layoutFromString(R"({"model":{"preset":"tiny","capacity_factor":"x"}})").status().message(),
      "invalid layout: model.capacity_factor must be a number, got \"x\"");
}

TEST(LayoutJson, DuplicateKeysAreRefusedNamingTheKey) {
  EXPECT_EQ(layoutFromString(R"({"dp":2,"pp":2,"dp":4})").status().message(),
            "layout: duplicate key 'dp' (a key may be given once per object)");
  EXPECT_EQ(
      layoutFromString(R"({"model":{"preset":"tiny","hidden":32,"hidden":64}})").status().message(),
      "layout: duplicate key 'hidden' (a key may be given once per object)");
  // The same key in two objects is no duplicate.
  EXPECT_TRUE(layoutFromString(R"({"model":{"preset":"tiny","experts":0},"experts_note":0})")
                  .status()
                  .message()
                  .find("duplicate") == std::string::npos);
}

TEST(LayoutJson, ModelAsPresetNameAndValidationOfTheModel) {
  EXPECT_EQ(layoutFromJson(json{{"model", "small"}}).value().model, modelPreset("small").value());
  EXPECT_EQ(
      layoutFromJson(json{{"model", {{"preset", "tiny"}, {"hidden", 30}}}}).status().message(),
      "invalid layout: invalid model: hidden 30 is not divisible by heads 4");
}

TEST(LayoutJson, TextWithCommentsAndFiles) {
  const std::string text = R"(// a pipeline layout
  { "model": "small", "pp": 4, /* four stages */ "micro_batches": 8, "schedule": "gpipe" })";
  const Result<Layout> l = layoutFromString(text);
  ASSERT_TRUE(l.isOk()) << l.status().message();
  EXPECT_EQ(l->pp, 4);
  EXPECT_EQ(l->schedule, ScheduleKind::kGPipe);

  EXPECT_EQ(
      layoutFromString("{\"dp\": }").status().message().rfind("layout is not valid JSON: ", 0), 0u);
  EXPECT_EQ(layoutFromFile("/nonexistent/layout.json").status().message(),
            "cannot open layout file /nonexistent/layout.json");

  const std::string path = ::testing::TempDir() + "layout_test_bad.json";
  std::ofstream(path) << R"({"dp": 2, "tp": 2})";
  EXPECT_EQ(layoutFromFile(path, 2).status().message(),
            path + ": invalid layout: world size 2 does not match dp 2 x tp 2 x pp 1 = 4");
  std::remove(path.c_str());
}

TEST(LayoutBucket, MebibytesOrElements) {
  Layout l;
  l.bucketMb = 25;
  EXPECT_EQ(l.bucketElementCount(4), 25 * 1024 * 1024 / 4);
  l.bucketElements = 123;
  EXPECT_EQ(l.bucketElementCount(4), 123);
}

TEST(LayoutJson, GradCompressionParsesRoundTripsAndNeedsZeroStageZero) {
  const Result<Layout> topk =
      layoutFromJson(json::parse(R"({"dp": 4, "grad_compression": "topk:0.01"})"));
  ASSERT_TRUE(topk.isOk()) << topk.status().message();
  EXPECT_EQ(topk->gradCompression.kind, GradCompression::kTopK);
  EXPECT_EQ(topk->gradCompression.ratio, 0.01);
  EXPECT_EQ(toJson(*topk)["grad_compression"], "topk:0.01");
  EXPECT_EQ(layoutFromJson(toJson(*topk)).value(), *topk);
  EXPECT_EQ(toJson(base())["grad_compression"], "none");
  Layout odd = base();
  odd.gradCompression = {GradCompression::kTopK, 0.1234567890123, 0};  // shortest form reads back
  EXPECT_EQ(layoutFromJson(toJson(odd)).value(), odd);

  const Result<Layout> bad = layoutFromJson(json::parse(R"({"grad_compression": "int4"})"));
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("grad compression 'int4' is unknown"), std::string::npos)
      << bad.status().message();
  const Result<Layout> zero =
      layoutFromJson(json::parse(R"({"dp": 2, "zero_stage": 2, "grad_compression": "fp16"})"));
  ASSERT_FALSE(zero.isOk());
  EXPECT_NE(zero.status().message().find("grad_compression fp16 needs zero_stage 0"),
            std::string::npos)
      << zero.status().message();
}

TEST(LayoutJson, AllReduceAndNodeKeysParseAndRoundTrip) {
  const Result<Layout> l = layoutFromJson(json::parse(
      R"({"dp": 4, "all_reduce": "hierarchical", "ranks_per_node": 2, "inter_node_gbps": 1.5,
          "inter_node_latency_us": 20})"));
  ASSERT_TRUE(l.isOk()) << l.status().message();
  EXPECT_EQ(l->allReduce, AllReduceAlgorithm::kHierarchical);
  EXPECT_EQ(l->ranksPerNode, 2);
  EXPECT_EQ(l->interNodeGbps, 1.5);
  EXPECT_EQ(l->interNodeLatencyUs, 20.0);
  EXPECT_TRUE(l->emulatesInterNodeLink());
  const json j = toJson(*l);
  EXPECT_EQ(j["all_reduce"], "hierarchical");
  EXPECT_EQ(j["ranks_per_node"], 2);
  EXPECT_EQ(j["inter_node_gbps"], 1.5);
  EXPECT_EQ(j["inter_node_latency_us"], 20.0);
  EXPECT_EQ(layoutFromJson(j).value(), *l);
  // Defaults: flat, nodes from the hosts, no emulated link; written out too.
  const json d = toJson(Layout{});
  EXPECT_EQ(d["all_reduce"], "flat");
  EXPECT_EQ(d["ranks_per_node"], 0);
  EXPECT_EQ(d["inter_node_gbps"], 0.0);
  EXPECT_FALSE(Layout{}.emulatesInterNodeLink());
  // Hierarchical without ranks_per_node: the nodes are the hosts.
  EXPECT_TRUE(layoutFromJson(json::parse(R"({"dp": 4, "all_reduce": "hierarchical"})")).isOk());
  // Latency alone is an emulated link too.
  Layout latency;
  latency.dp = 4;
  latency.ranksPerNode = 2;
  latency.interNodeLatencyUs = 50;
  EXPECT_TRUE(latency.emulatesInterNodeLink());
  EXPECT_TRUE(validate(latency).isOk()) << problems(latency);
}

TEST(LayoutValidate, AllReduceAndNodeKeysRefuseWhatCannotRun) {
  auto message = [](const char* text) {
    const Result<Layout> l = layoutFromJson(json::parse(text));
    return l.isOk() ? std::string("ok") : l.status().message();
  };
  EXPECT_EQ(message(R"({"all_reduce": "tree"})"),
            "invalid layout: all-reduce algorithm 'tree' is unknown (known: flat, hierarchical)");
  EXPECT_EQ(message(R"({"all_reduce": 1})"), "invalid layout: all_reduce must be a string, got 1");
  EXPECT_EQ(message(R"({"dp": 4, "ranks_per_node": 3})"),
            "invalid layout: ranks_per_node 3 does not divide the world's 4 ranks (dp 4 x tp 1 x "
            "pp 1)");
  EXPECT_EQ(message(R"({"dp": 2, "tp": 2, "ranks_per_node": 1})"),
            "invalid layout: ranks_per_node 1 is not a multiple of tp x pp = 2 (a node holds "
            "whole tp and pp groups, so only dp crosses nodes)");
  EXPECT_EQ(message(R"({"dp": 2, "tp": 2, "ranks_per_node": 2})"), "ok");
  EXPECT_EQ(message(R"({"dp": 4, "ranks_per_node": -1})"),
            "invalid layout: ranks_per_node must be >= 0 (0: the nodes are the hosts), got -1");
  EXPECT_EQ(message(R"({"dp": 4, "ranks_per_node": 2, "inter_node_gbps": -1})"),
            "invalid layout: inter_node_gbps must be a finite number >= 0, got -1");
  EXPECT_EQ(message(R"({"dp": 4, "inter_node_gbps": 1})"),
            "invalid layout: inter_node_gbps and inter_node_latency_us emulate the link between "
            "emulated nodes: they need ranks_per_node K >= 1");
  EXPECT_EQ(message(R"({"dp": 4, "ranks_per_node": 2, "hosts": ["a:2", "b:2"]})"),
            "invalid layout: ranks_per_node 2 emulates nodes on one machine; with hosts or "
            "hostfile the nodes are the hosts (leave ranks_per_node 0)");
  EXPECT_EQ(message(R"({"dp": 4, "zero_stage": 1, "all_reduce": "hierarchical",
                        "ranks_per_node": 2})"),
            "invalid layout: all_reduce hierarchical needs zero_stage 0 (ZeRO 1-3 reduce-scatter "
            "their buckets), got zero_stage 1");
  EXPECT_EQ(message(R"({"dp": 4, "zero_stage": 2, "ranks_per_node": 2, "inter_node_gbps": 1})"),
            "invalid layout: the emulated inter-node link paces all-reduces only: it needs "
            "zero_stage 0, got zero_stage 2");
  EXPECT_EQ(message(R"({"dp": 4, "all_reduce": "hierarchical", "grad_compression": "int8"})"),
            "invalid layout: all_reduce hierarchical reduces uncompressed buckets, got "
            "grad_compression int8");
  EXPECT_EQ(message(R"({"dp": 4, "ranks_per_node": 2, "inter_node_gbps": 1,
                        "grad_compression": "topk:0.1"})"),
            "invalid layout: the emulated inter-node link paces all-reduces only, and "
            "grad_compression topk:0.1 all-gathers its sets");
  EXPECT_EQ(message(R"({"dp": 4, "ranks_per_node": 2, "inter_node_gbps": 1,
                        "grad_compression": "int8"})"),
            "ok");  // int8's all-reduce is paced like fp32's
  EXPECT_EQ(message(R"({"dp": 4, "ep": 2, "all_reduce": "hierarchical",
                        "model": {"preset": "tiny", "experts": 4}})"),
            "invalid layout: ep 2 does not combine with all_reduce hierarchical or an emulated "
            "inter-node link (the experts' gradients reduce over their own groups)");
}

}  // namespace
}  // namespace bubblescope::layout
