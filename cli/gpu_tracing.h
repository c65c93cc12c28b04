// The GPU side of a traced rank, the same for single-process `train --trace`
// and every parallel rank (train_layout.cpp): whether its CUPTI collector
// starts, and which dimension each of its communicators' streams carries.
//
// Contract:
// - tracesGpuActivity(): true for a rank placed on a GPU ("cuda:N", the
//   trace's device of a rank); nothing else starts a collector.
// - startGpuActivity(): the collector (tracer/gpu_collector.h) of such a
//   rank, or null with one note on stderr saying why the trace has host
//   spans only (the run still trains and traces). At most one per process.
// - deviceStreamDims(): the dimension of every stream the groups' device
//   communicators launch on, as the source's stream ids (tracer/stream_dims.h):
//   each group's dim(), except that the dp group and its node groups take
//   `dataParallel`, the dimension their collectives are traced with
//   (engine::dataParallelDim: zero in a ZeRO run), so kernels and host spans
//   agree.
#pragma once

#include <memory>
#include <string_view>

#include "common/result.h"
#include "engine/parallel/device_groups.h"
#include "tracer/gpu_activity.h"

namespace bubblescope::cli {

bool tracesGpuActivity(std::string_view placement);

std::unique_ptr<tracer::GpuActivitySource> startGpuActivity(std::string_view placement, int rank);

Result<tracer::StreamDims> deviceStreamDims(const engine::DeviceGroups& groups,
                                            tracer::GpuActivitySource& source,
                                            trace_model::ParallelDim dataParallel);

}  // namespace bubblescope::cli
