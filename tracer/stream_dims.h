// streamDimsOf(): which parallel dimension each GPU stream's NCCL kernels
// belong to, as CUPTI's stream ids (the streamId of its activity records),
// from the streams the engine's communicators launch on.
//
// Why per stream, not per launch: every NCCL communicator of a rank
// (engine/cuda/nccl_communicator.h) owns its streams, its collective stream
// and one per send/receive link, and launches nothing else on them, so each
// stream belongs to exactly one group and one dimension for the whole run:
// a kernel's stream says its dimension without pairing launches with
// records. A stream two dimensions claim breaks that premise and is an
// error, not a guess.
//
// Contract: `idOf` maps an engine stream handle (a cudaStream_t) to CUPTI's
// stream id (CuptiCollector::streamIdOf; a fake in tests); its first error
// is returned with the stream's dimension as context. A stream listed twice
// for one dimension is one entry. Plain code, built without CUDA.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "common/result.h"
#include "trace_model/event.h"
#include "tracer/gpu_activity.h"

namespace bubblescope::tracer {

struct DeviceStream {
  const void* stream = nullptr;  // the engine's cudaStream_t
  trace_model::ParallelDim dim = trace_model::ParallelDim::kNone;
};

using StreamIdOf = std::function<Result<uint32_t>(const void* stream)>;

Result<StreamDims> streamDimsOf(std::span<const DeviceStream> streams, const StreamIdOf& idOf);

}  // namespace bubblescope::tracer
