// GPU activity as the CUPTI collector hands it over, and its conversion into
// the event model. Plain code: built and unit-tested without CUDA.
//
// Launch correlation: each GPU record carries CUPTI's correlation id, and so
// does the host call that launched it (a LaunchCall: cudaLaunchKernel,
// cudaMemcpyAsync, cuLaunchKernelEx as NCCL uses it, ...). Both become
// events with that id in trace_model::Event::correlationId: the launch on the rank's
// trace_model::Lane::kCudaApi, the record on its stream lane. The conversion does not
// pair them (a record usually arrives a batch after its launch): a record
// keeps its id whether or not its launch was recorded, and readers link the
// events of one rank whose ids are equal. A record launched by a call that is
// not traced (cudaGraphLaunch) therefore has an id no launch event carries.
//
// GPU timestamps (CUPTI's clock) reach the run's timeline in two steps: a
// GpuClockMap, fitted from pairs of (CUPTI timestamp, host clock) read back
// to back, maps them onto the rank's host clock; the rank's ClockTrack then
// maps host times onto rank 0's (clock_sync.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "trace_model/event.h"

namespace bubblescope::tracer {

enum class GpuActivityKind { kKernel, kMemcpy, kMemset };

struct GpuActivity {
  GpuActivityKind kind = GpuActivityKind::kKernel;
  uint64_t gpuStartNs = 0;  // CUPTI clock
  uint64_t gpuEndNs = 0;
  uint32_t deviceId = 0;
  uint32_t streamId = 0;
  uint32_t correlationId = 0;  // links to the launching host call
  std::string name;            // kernel name; empty for copies and sets
  uint64_t bytes = 0;          // copies and sets
};

// One host call that launches GPU work, as CUPTI's API callbacks saw it.
// Times are the rank's host clock (hostNowNs) at the call's entry and exit.
struct LaunchCall {
  uint32_t correlationId = 0;  // equals the correlationId of the GPU record it launched
  int64_t startNs = 0;
  int64_t endNs = 0;
  uint32_t threadId = 0;  // OS thread id (gettid) of the caller
  std::string name;       // the API function, e.g. "cudaLaunchKernel"
};

// Whether a runtime or driver API function (CUPTI's callback name, with or
// without a version suffix: "cudaLaunchKernel_v7000", "cuLaunchKernelEx")
// launches a kernel, a copy or a set: the calls the collector traces.
// Graph launches and host functions are excluded.
bool isLaunchApi(std::string_view name);

// One GPU timestamp and the host clock read around it: hostNs is the middle
// of the host reads before and after, readNs their distance, so the GPU
// timestamp was taken within readNs / 2 of hostNs (0: read at once).
struct ClockPair {
  uint64_t gpuNs = 0;
  int64_t hostNs = 0;
  int64_t readNs = 0;
};

// hostNs = hostAtZero + slope * (gpuNs - gpuZero), fitted by least squares.
// errorBoundNs: a bound on |toHost(g) - the host time at GPU time g| at every
// pair it was fitted from, max_i (|toHost(gpu_i) - host_i| + read_i / 2)
// rounded up; between the pairs too when the two clocks' rates are constant
// there (the fit's error is then linear in g, largest at the ends). Times
// mapped from before the first or after the last pair are extrapolated and
// may be off by more.
struct GpuClockMap {
  uint64_t gpuZero = 0;
  double hostAtZero = 0.0;
  double slope = 1.0;
  int64_t errorBoundNs = 0;
  int64_t toHost(uint64_t gpuNs) const {
    const double dt = static_cast<double>(static_cast<int64_t>(gpuNs - gpuZero));
    return static_cast<int64_t>(hostAtZero + slope * dt);
  }
};

// One pair gives a pure offset (slope 1); two or more fit the slope too.
Result<GpuClockMap> fitGpuClockMap(std::span<const ClockPair> pairs);

// The collective an NCCL kernel runs, from its name ("ncclDevKernel_AllReduce_
// Sum_f32_RING_LL" -> kAllReduce; SendRecv, Send -> kSend; Recv -> kRecv);
// kKernel for a kernel that is not NCCL's. The name may be mangled, as CUPTI
// reports C++ kernels ("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL19ncclDevKernelArgs4K"):
// only the function's own name counts, so "_Z10my_nccl_opv" stays a kernel.
trace_model::EventKind kindOfKernel(const std::string& name);

// What the engine knows about its streams: which parallel dimension's
// communicator runs collectives on which stream.
using StreamDims = std::unordered_map<uint32_t, trace_model::ParallelDim>;

// An activity as a trace_model::Event of `rank` on its stream's lane, on the host clock,
// with its correlation id. NCCL kernels and copies count as communication
// (trace_model::categoryOf) with the dimension of their stream.
trace_model::Event toEvent(const GpuActivity& activity, const GpuClockMap& map, int32_t rank,
                           const StreamDims& dims);

// A launch call as a trace_model::Event of `rank`: kind kOther (it counts as neither
// compute nor communication), name = the API function, trace_model::Lane::kCudaApi, its
// host times as they are (already on the host clock), its correlation id.
trace_model::Event toEvent(const LaunchCall& call, int32_t rank);

// Where a rank's GPU activity comes from (the CUPTI collector; a fake in
// tests). Contract: take() and clockPairs() are called from the tracer's
// shipping thread only, except the first clockPairs() (GpuEventCollector's
// constructor, before the shipping thread starts).
class GpuActivitySource {
 public:
  virtual ~GpuActivitySource() = default;
  // Activities completed since the previous call.
  virtual std::vector<GpuActivity> take() = 0;
  // Launch calls that returned since the previous call (none by default: a
  // source that does not see the host calls).
  virtual std::vector<LaunchCall> takeLaunches() { return {}; }
  // (GPU timestamp, host clock) pairs read back to back, for fitGpuClockMap.
  virtual std::vector<ClockPair> clockPairs(int count) = 0;
  // The streamId its records carry for an engine stream (a cudaStream_t),
  // for streamDimsOf() (stream_dims.h); an error by default: a source that
  // cannot tell. Called from the training thread.
  virtual Result<uint32_t> streamIdOf(const void* /*stream*/) {
    return Status::unsupported("this GPU activity source cannot map streams to its ids");
  }
};

}  // namespace bubblescope::tracer
