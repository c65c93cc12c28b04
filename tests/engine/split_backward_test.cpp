// The zero-bubble split of the model's backward: backwardInput() ("B") then
// backwardWeight() ("W") computes exactly what backward() computes, for the
// whole model and for pipeline ranges, with its own spans, hooks and
// activation buffers.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/gpt_model.h"
#include "engine/rng.h"
#include "tests/engine/grad_check.h"
#include "tests/engine/tiny_decoder.h"

namespace bubblescope::engine {
namespace {

using testing::perturbParameters;
using testing::randomTokens;
using Tokens = testing::TokenBatch;

layout::ModelConfig splitConfig() {
  return testing::tinyDecoderConfig();
}

template <class S>
std::unique_ptr<GptModelT<S>> makeModel(Allocator& allocator, LayerRange range = {}) {
  auto model = std::move(GptModelT<S>::create(splitConfig(), &allocator, range).value());
  model->initialize(5);
  perturbParameters(*model, 6);
  model->zeroGrad();
  return model;
}

template <class S>
void expectSameGradients(GptModelT<S>& expected, GptModelT<S>& actual) {
  for (auto* p : actual.parameters()) {
    auto* q = expected.findParameter(p->name);
    ASSERT_NE(q, nullptr) << p->name;
    for (int64_t i = 0; i < p->grad.numel(); ++i) {
      ASSERT_EQ(p->grad.data()[i], q->grad.data()[i]) << p->name << "[" << i << "]";
    }
  }
}

// Two micro-batches accumulated, in zero-bubble order: B0 B1 W0 W1 against
// backward(0) backward(1).
TEST(SplitBackwardTest, InputThenWeightEqualsBackwardBitForBit) {
  Allocator allocator;
  auto fused = makeModel<float>(allocator);
  auto split = makeModel<float>(allocator);
  const int64_t B = 2, T = 5;
  std::vector<Tokens> mbs = {randomTokens(B * T, 11, 1), randomTokens(B * T, 11, 2)};
  std::vector<std::unique_ptr<Activations>> actsF, actsS;
  for (const Tokens& mb : mbs) {
    actsF.push_back(std::move(fused->newActivations(B, T).value()));
    actsS.push_back(std::move(split->newActivations(B, T).value()));
    const double lf = fused->forward(*actsF.back(), {mb.tokens, {}, mb.targets}).value();
    const double ls = split->forward(*actsS.back(), {mb.tokens, {}, mb.targets}).value();
    EXPECT_EQ(lf, ls);
    ASSERT_TRUE(fused->backward(*actsF.back(), {}, 0.5).isOk());
  }
  for (auto& a : actsS) ASSERT_TRUE(split->backwardInput(*a, {}, 0.5).isOk());
  for (auto* p : split->parameters()) {  // B writes no parameter gradient
    for (float g : p->grad.span()) ASSERT_EQ(g, 0.0f) << p->name;
  }
  for (auto& a : actsS) ASSERT_TRUE(split->backwardWeight(*a).isOk());
  expectSameGradients(*fused, *split);
  double norm = 0.0;
  for (auto* p : split->parameters()) {
    for (float g : p->grad.span()) norm += static_cast<double>(g) * g;
  }
  EXPECT_GT(norm, 1e-6);  // the comparison is not between zeros
}

// Pipeline ranges {embedding}, {h.0, h.1}, {head}: B passes the input
// gradient to the previous range, W runs afterwards; both the gradients
// passed between ranges and the parameter gradients match the fused run.
TEST(SplitBackwardTest, RangesPassTheSameInputGradients) {
  Allocator allocator;
  auto full = makeModel<float>(allocator);
  std::vector<LayerRange> ranges = {{0, 1}, {1, 3}, {3, -1}};
  std::vector<std::unique_ptr<GptModel>> fusedStages, splitStages;
  for (const LayerRange& r : ranges) {
    fusedStages.push_back(makeModel<float>(allocator, r));
    splitStages.push_back(makeModel<float>(allocator, r));
  }
  const int64_t B = 2, T = 6;
  const Tokens mb = randomTokens(B * T, 11, 3);
  auto actsFull = std::move(full->newActivations(B, T).value());
  const double lossFull = full->forward(*actsFull, {mb.tokens, {}, mb.targets}).value();
  ASSERT_TRUE(full->backward(*actsFull, {}).isOk());

  auto run = [&](std::vector<std::unique_ptr<GptModel>>& stages, bool splitBackward) {
    std::vector<std::unique_ptr<Activations>> acts;
    double loss = 0.0;
    for (size_t s = 0; s < stages.size(); ++s) {
      acts.push_back(std::move(stages[s]->newActivations(B, T).value()));
      StageInput in;
      if (s == 0) in.tokens = mb.tokens;
      if (s > 0) in.activation = acts[s - 1]->output().span();
      if (s + 1 == stages.size()) in.targets = mb.targets;
      loss = stages[s]->forward(*acts[s], in).value();
    }
    for (size_t s = stages.size(); s-- > 0;) {
      std::span<const float> grad;
      if (s + 1 < stages.size()) grad = acts[s + 1]->inputGrad.span();
      if (splitBackward) {
        EXPECT_TRUE(stages[s]->backwardInput(*acts[s], grad).isOk());
      } else {
        EXPECT_TRUE(stages[s]->backward(*acts[s], grad).isOk());
      }
    }
    if (splitBackward) {
      for (size_t s = 0; s < stages.size(); ++s) {
        EXPECT_TRUE(stages[s]->backwardWeight(*acts[s]).isOk());
      }
    }
    return std::make_pair(loss, std::move(acts));
  };
  auto [lossF, actsF] = run(fusedStages, false);
  auto [lossS, actsS] = run(splitStages, true);
  EXPECT_EQ(lossF, lossFull);
  EXPECT_EQ(lossS, lossFull);
  for (size_t s = 1; s < ranges.size(); ++s) {
    EXPECT_EQ(
        std::vector<float>(actsS[s]->inputGrad.span().begin(), actsS[s]->inputGrad.span().end()),
        std::vector<float>(actsF[s]->inputGrad.span().begin(), actsF[s]->inputGrad.span().end()))
        << "input gradient of range " << s;
  }
  for (auto& stage : splitStages) expectSameGradients(*full, *stage);
  for (auto& stage : fusedStages) expectSameGradients(*full, *stage);
}

TEST(SplitBackwardTest, MatchesFiniteDifferences) {
  Allocator allocator;
  auto model = makeModel<double>(allocator);
  auto& m = *model;
  const int64_t B = 2, T = 5;
  const Tokens mb = randomTokens(B * T, 11, 9);
  auto acts = std::move(m.newActivations(B, T).value());
  StageInputT<double> input{mb.tokens, {}, mb.targets};
  const double lossScale = 0.5;
  auto loss = [&] { return lossScale * m.forward(*acts, input).value(); };
  loss();
  ASSERT_TRUE(m.backwardInput(*acts, {}, lossScale).isOk());
  ASSERT_TRUE(m.backwardWeight(*acts).isOk());
  for (auto* p : m.parameters()) {
    const size_t n = p->name == "wpe.weight" ? static_cast<size_t>(T * 8) : p->value.numel();
    testing::expectGradientsMatch(p->name, loss, p->value.data(), p->grad.data(), n);
  }
}

TEST(SplitBackwardTest, RefusesReuseWhileWeightGradientsArePending) {
  Allocator allocator;
  auto model = makeModel<float>(allocator);
  const Tokens mb = randomTokens(4, 11, 4);
  auto acts = std::move(model->newActivations(1, 4).value());
  const StageInput in{mb.tokens, {}, mb.targets};
  ASSERT_TRUE(model->forward(*acts, in).isOk());
  const Status noB = model->backwardWeight(*acts);
  EXPECT_FALSE(noB.isOk());
  EXPECT_NE(noB.message().find("without a backwardInput"), std::string::npos) << noB.toString();
  ASSERT_TRUE(model->backwardInput(*acts, {}).isOk());
  const auto again = model->forward(*acts, in);
  ASSERT_FALSE(again.isOk());
  EXPECT_NE(again.status().message().find("still pending"), std::string::npos);
  EXPECT_FALSE(model->backward(*acts, {}).isOk());
  EXPECT_FALSE(model->backwardInput(*acts, {}).isOk());
  ASSERT_TRUE(model->backwardWeight(*acts).isOk());
  EXPECT_TRUE(model->forward(*acts, in).isOk());  // free again
}

// The buffers B keeps for W exist only once a split backward ran, and count
// as activations: per block 7C + F floats a token, plus the head's and the
// embedding's C.
TEST(SplitBackwardTest, KeepBuffersAreAllocatedOnlyWhenSplitting) {
  Allocator allocator;
  auto model = makeModel<float>(allocator);
  const int64_t B = 2, T = 4, C = 8, F = 16, L = 2;
  const Tokens mb = randomTokens(B * T, 11, 5);
  auto acts = std::move(model->newActivations(B, T).value());
  const StageInput in{mb.tokens, {}, mb.targets};
  const int64_t before = allocator.currentBytes(MemoryCategory::kActivations);
  ASSERT_TRUE(model->forward(*acts, in).isOk());
  ASSERT_TRUE(model->backward(*acts, {}).isOk());
  EXPECT_EQ(allocator.currentBytes(MemoryCategory::kActivations), before);
  ASSERT_TRUE(model->forward(*acts, in).isOk());
  ASSERT_TRUE(model->backwardInput(*acts, {}).isOk());
  const int64_t keepBytes = 4 * B * T * (L * (7 * C + F) + 2 * C);
  EXPECT_EQ(allocator.currentBytes(MemoryCategory::kActivations), before + keepBytes);
  ASSERT_TRUE(model->backwardWeight(*acts).isOk());
  ASSERT_TRUE(model->forward(*acts, in).isOk());
  ASSERT_TRUE(model->backwardInput(*acts, {}).isOk());  // reused, not allocated again
  EXPECT_EQ(allocator.currentBytes(MemoryCategory::kActivations), before + keepBytes);
  ASSERT_TRUE(model->backwardWeight(*acts).isOk());
}

// B and W trace one span per layer each, and call their own hooks (slots in
// reverse order; the embedding has no B).
TEST(SplitBackwardTest, SpansAndHooksPerLayer) {
  struct Log final : LayerHooks {
    std::vector<std::string> calls;
    Status beforeBackwardInput(int32_t s) override { return note("B<", s); }
    Status afterBackwardInput(int32_t s) override { return note("B>", s); }
    Status beforeBackwardWeight(int32_t s) override { return note("W<", s); }
    Status afterBackwardWeight(int32_t s) override { return note("W>", s); }
    Status beforeBackward(int32_t s) override { return note("F<", s); }
    Status note(const char* what, int32_t s) {
      calls.push_back(what + std::to_string(s));
      return Status::ok();
    }
  } log;
  Allocator allocator;
  auto model = makeModel<float>(allocator);
  model->setHooks(&log);
  const Tokens mb = randomTokens(4, 11, 6);
  auto acts = std::move(model->newActivations(1, 4).value());
  ASSERT_TRUE(model->forward(*acts, {mb.tokens, {}, mb.targets}).isOk());
  tracer::Recorder recorder(0, true);
  const TraceContext trace{&recorder, 7, 3, 0, 0};
  ASSERT_TRUE(model->backwardInput(*acts, {}, 1.0, trace).isOk());
  ASSERT_TRUE(model->backwardWeight(*acts, trace).isOk());
  model->setHooks(nullptr);
  EXPECT_EQ(log.calls, (std::vector<std::string>{"B<3", "B>3", "B<2", "B>2", "B<1", "B>1", "W<3",
                                                 "W>3", "W<2", "W>2", "W<1", "W>1", "W<0", "W>0"}));
  std::vector<std::string> spans;
  for (const trace_model::Event& e : recorder.drain()) {
    EXPECT_EQ(e.step, 7);
    EXPECT_EQ(e.microBatch, 3);
    const char* kind = e.kind == trace_model::EventKind::kBackwardInput    ? "B:"
                       : e.kind == trace_model::EventKind::kBackwardWeight ? "W:"
                                                                           : "?:";
    spans.push_back(kind + e.name);
    if (e.name != "embedding") {
      EXPECT_GT(e.flops, 0) << e.name;
    }
  }
  EXPECT_EQ(spans, (std::vector<std::string>{"B:head", "B:h.1", "B:h.0", "W:head", "W:h.1", "W:h.0",
                                             "W:embedding"}));
}

}  // namespace
}  // namespace bubblescope::engine
