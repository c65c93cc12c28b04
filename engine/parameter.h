// ParameterT<S>: one named, separately addressable weight tensor of the model
// with its gradient and how it is initialised.
//
// Names follow GPT-2's ("wte.weight", "h.3.attn.qkv.weight", "ln_f.bias") so
// tensor parallelism can split a parameter, pipeline parallelism can hand a
// layer's parameters to a stage and ZeRO can shard them, all by name.
// Under tensor parallelism a parameter holds its tp rank's slice (`shard`,
// tensor_shard.h) of the full tensor (`fullShape`); the name stays the full
// tensor's.
#pragma once

#include <string>
#include <vector>

#include "engine/rng.h"
#include "engine/tensor.h"
#include "engine/tensor_shard.h"

namespace bubblescope::engine {

enum class InitKind { kZeros, kOnes, kNormal };

template <class S>
struct ParameterT {
  std::string name;
  TensorT<S> value;          // the weight: shardShape(fullShape, shard)
  TensorT<S> grad;           // same shape; backward kernels add into it
  Shape fullShape;           // the unsliced tensor's shape
  TensorShard shard;         // which slice this rank holds (replicated: all of it)
  bool weightDecay = false;  // AdamW decays matrices and embeddings, not biases or norms
  // A mixture-of-experts expert's: split over the ep group and reduced over
  // the expert-data-parallel group (the router and the rest: over dp).
  bool expert = false;
  InitKind init = InitKind::kZeros;
  double initStd = 0.0;  // for kNormal

  ParameterT() = default;
  ParameterT(std::string n, Shape shape, InitKind kind, double std, bool decay,
             Allocator* allocator, TensorShard slice = {})
      : name(std::move(n)),
        value(shardShape(shape, slice), MemoryCategory::kParameters, allocator),
        grad(shardShape(shape, slice), MemoryCategory::kGradients, allocator),
        fullShape(shape),
        shard(slice),
        weightDecay(decay),
        init(kind),
        initStd(std) {}

  // Deterministic initialisation: the values depend only on (seed, name) and
  // the full shape, never on which other parameters a rank holds; a shard
  // gets exactly its slice of the full tensor's values.
  void initialize(uint64_t seed) {
    S* v = value.data();
    switch (init) {
      case InitKind::kZeros:
        value.zero();
        break;
      case InitKind::kOnes:
        for (int64_t i = 0; i < value.numel(); ++i) v[i] = S(1);
        break;
      case InitKind::kNormal: {
        Rng rng(mixSeed(seed, hashName(name)));
        if (!shard.sharded()) {
          for (int64_t i = 0; i < value.numel(); ++i) v[i] = static_cast<S>(initStd * rng.normal());
          break;
        }
        std::vector<S> full(static_cast<size_t>(shapeNumel(fullShape)));
        for (S& x : full) x = static_cast<S>(initStd * rng.normal());
        copyShardFromFull(full.data(), fullShape, shard, v);
        break;
      }
    }
  }
};

using Parameter = ParameterT<float>;

}  // namespace bubblescope::engine
