// startGpuCollector(): the GPU activity source of a rank that trains on a
// GPU: the CUPTI collector (cupti_collector.h: kernels, copies and sets per
// stream, and the launches that made them) in a build with CUDA; in a build
// without, an error saying so. The trace session ships its records on the
// rank's GPU stream lanes (SessionOptions::gpu, trace_session.h).
//
// Contract: at most one per process (CUPTI's activity callbacks are
// process-wide); start it after the rank's CUDA device is current and keep
// it alive longer than the session that reads it. Errors are values: no GPU,
// CUPTI refusing, no CUDA in this build.
#pragma once

#include <memory>

#include "common/result.h"
#include "tracer/gpu_activity.h"

namespace bubblescope::tracer {

Result<std::unique_ptr<GpuActivitySource>> startGpuCollector();

}  // namespace bubblescope::tracer
