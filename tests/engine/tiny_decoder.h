// A decoder small enough for finite differences, random token batches for
// it, and a perturbation of its initial weights: shared by the model tests
// (model_grad_test, split_backward_test).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/gpt_model.h"
#include "engine/rng.h"

namespace bubblescope::engine::testing {

// V 11, T 6, 2 layers of hidden 8, 2 heads, MLP ratio 2.
inline layout::ModelConfig tinyDecoderConfig() {
  layout::ModelConfig c;
  c.preset = "custom";
  c.vocabSize = 11;
  c.seqLen = 6;
  c.numLayers = 2;
  c.hidden = 8;
  c.numHeads = 2;
  c.mlpRatio = 2;
  return c;
}

struct TokenBatch {
  std::vector<int32_t> tokens, targets;  // (B, T)
};

// n = B·T random token ids and targets in [0, vocab).
inline TokenBatch randomTokens(int64_t n, int32_t vocab, uint64_t seed) {
  Rng rng(seed);
  TokenBatch out;
  for (int64_t i = 0; i < n; ++i) {
    out.tokens.push_back(static_cast<int32_t>(rng.below(vocab)));
    out.targets.push_back(static_cast<int32_t>(rng.below(vocab)));
  }
  return out;
}

// Moves every parameter off its initial value (LN weights off 1, biases off
// 0) so that every gradient path carries signal; seeded by name, so every
// layer range that holds a parameter gets the same values.
template <class S>
void perturbParameters(GptModelT<S>& model, uint64_t seed) {
  for (auto* p : model.parameters()) {
    uint64_t h = seed;
    for (char ch : p->name) h = h * 1099511628211ull + static_cast<unsigned char>(ch);
    Rng rng(h);
    for (auto& v : p->value.span()) v = static_cast<S>(0.3 * rng.normal() + v);
  }
}

}  // namespace bubblescope::engine::testing
