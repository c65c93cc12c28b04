// activationBytesPerMicroBatch(): the activation memory one micro-batch
// leaves on a stage chunk, from the engine's kept tensors — what the
// predictor (prediction.h) and the cluster planner (cluster_plan.h) hold in
// flight per stage. Pure.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/layout/layout.h"
#include "planning/calibration.h"

namespace bubblescope::layout {

// Activation bytes one micro-batch leaves on a stage chunk of `layers`
// blocks (with the embedding / head when it holds them), from the engine's
// kept tensors (engine/gpt_activations.h), fp32: per block
// B·T·(5C + 4 + (3C + C + 2F)/t) + B·(NH/t)·T²; head B·T·(C + V + 3); the
// chunk input B·T·C. With recompute a chunk keeps only its input. Elements
// are format.activationBytes each (the engine's fp32 by default); with
// format.recomputeEachLayer and recompute, every layer's input B·T·C is
// kept, and the head's B·T·(C + V/t + 3).
double activationBytesPerMicroBatch(const Layout& layout, int32_t layers, bool embedding,
                                    bool head, const RunFormat& format = {});

// The activations a backward recomputes at once with recompute on (0
// without): the whole chunk's as a run without recompute keeps them, or one
// block's with format.recomputeEachLayer.
double recomputedBytes(const Layout& layout, int32_t layers, bool embedding, bool head,
                       const RunFormat& format = {});

// What a chunk of a stage holds (stage_split.h's split of the layers).
struct ChunkExtent {
  int32_t layers = 0;
  bool embedding = false;
  bool head = false;
};

// The activations a stage holds at its peak: `inFlight` micro-batches of
// its largest chunk's (an upper bound for interleaved stages, whose chunks
// differ), plus the largest of its chunks' recomputedBytes.
double stageActivationBytes(const Layout& layout, const std::vector<ChunkExtent>& chunks,
                            double inFlight, const RunFormat& format = {});

}  // namespace bubblescope::layout
