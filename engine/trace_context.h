// TraceContext: where the model's spans go and what they are tagged with.
#pragma once

#include <cstdint>

#include "tracer/recorder.h"

namespace bubblescope::engine {

struct TraceContext {
  tracer::Recorder* recorder = nullptr;  // null: no spans
  int32_t step = -1;
  int32_t microBatch = -1;
  int32_t stage = -1;
  int32_t chunk = -1;
  // The kind of the per-layer spans of forward(): kRecompute when the pass
  // recomputes activations (activation checkpointing).
  trace_model::EventKind forwardKind = trace_model::EventKind::kForward;

  tracer::SpanInfo span(trace_model::EventKind kind, const char* name, int64_t flops = 0) const {
    tracer::SpanInfo info;
    info.kind = kind;
    info.name = name;
    info.step = step;
    info.microBatch = microBatch;
    info.stage = stage;
    info.chunk = chunk;
    info.flops = flops;
    info.threadCpu = true;  // the cost model reads it (docs/prediction.md)
    return info;
  }
};

}  // namespace bubblescope::engine
