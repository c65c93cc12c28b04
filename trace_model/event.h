// The trace model's events: plain value structs that every module shares
// (the tracer produces them, storage stores them, analysis and the GUI read them).
//
// Contract: the numeric values of every enum below are stored in trace files.
// The enums are append-only: never renumber or reuse a value; add new ones at
// the end. Times are integer nanoseconds on the run's single aligned timeline
// (rank 0's host clock). Integer fields that do not apply hold -1.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace bubblescope::trace_model {

// What a span did. Stored as an integer in `events.kind`.
enum class EventKind : int32_t {
  kForward = 0,
  kBackward = 1,
  kBackwardInput = 2,   // zero-bubble B: gradient with respect to the input
  kBackwardWeight = 3,  // zero-bubble W: gradient with respect to the weights
  kOptimizer = 4,
  kRecompute = 5,
  kAllReduce = 6,
  kReduceScatter = 7,
  kAllGather = 8,
  kBroadcast = 9,
  kSend = 10,
  kRecv = 11,
  kWait = 12,  // blocked on a peer that is not ready (a bubble, not communication)
  kDataLoad = 13,
  kKernel = 14,  // a GPU kernel that is not a collective
  kMemcpy = 15,
  kMemset = 16,
  kOther = 17,
  kAllToAll = 18,
  kReduce = 19,
};
inline constexpr int32_t kEventKindCount = 20;

// How the analysis counts a kind (DESIGN.md, metrics).
enum class EventCategory { kCompute, kCommunication, kWait, kOther };

// The parallel dimension of a collective or transfer. Stored in `events.dim`.
enum class ParallelDim : int32_t {
  kNone = 0,
  kDp = 1,
  kTp = 2,
  kPp = 3,
  kZero = 4,
  kEp = 5,
  kUnknown = 6,  // a collective whose group is not known (an imported trace's unnamed group)
};
inline constexpr int32_t kParallelDimCount = 7;

// A lane is one row of a rank in the timeline. Named host lanes are below
// kGpuStreamBase; GPU stream s of a rank is lane kGpuStreamBase + s.
enum class Lane : int32_t {
  kCompute = 0,
  kCommunication = 1,
  kPipeline = 2,  // sends, receives and waits of the pipeline
  kData = 3,
  kCudaApi = 4,  // host calls that launch GPU work (cudaLaunchKernel, cudaMemcpyAsync, ...)
  // Host threads of an imported trace (their CPU ops and annotations, nested):
  // the i-th thread seen is lane kHostThreadBase + i, the last lane shared by
  // any beyond it (hostThreadLane).
  kHostThreadBase = 5,
  kGpuStreamBase = 16,
};
inline constexpr int32_t kHostThreadLanes = 11;  // lanes 5 .. 15
inline constexpr Lane hostThreadLane(int32_t index) {
  const int32_t i = index < kHostThreadLanes ? index : kHostThreadLanes - 1;
  return static_cast<Lane>(static_cast<int32_t>(Lane::kHostThreadBase) + i);
}
inline constexpr bool isHostThreadLane(Lane lane) {
  const int32_t v = static_cast<int32_t>(lane);
  return v >= static_cast<int32_t>(Lane::kHostThreadBase) &&
         v < static_cast<int32_t>(Lane::kGpuStreamBase);
}
inline constexpr Lane gpuStreamLane(int32_t stream) {
  return static_cast<Lane>(static_cast<int32_t>(Lane::kGpuStreamBase) + stream);
}
inline constexpr bool isGpuStreamLane(Lane lane) {
  return static_cast<int32_t>(lane) >= static_cast<int32_t>(Lane::kGpuStreamBase);
}

// One span on one rank's lane.
struct Event {
  int32_t rank = 0;
  Lane lane = Lane::kCompute;
  EventKind kind = EventKind::kOther;
  std::string name;  // e.g. "forward", "allreduce.bucket3", a kernel name
  int64_t startNs = 0;
  int64_t endNs = 0;  // endNs >= startNs
  int32_t step = -1;
  int32_t microBatch = -1;
  int32_t stage = -1;
  int32_t chunk = -1;
  ParallelDim dim = ParallelDim::kNone;
  int64_t bytes = 0;
  int64_t flops = 0;
  int32_t peer = -1;  // the other rank of a send or receive
  // Links a GPU record (kernel, copy, set on a stream lane) to the host call
  // that launched it (on Lane::kCudaApi): both carry the same id, unique
  // within one rank (CUPTI's correlation id). 0 = not linked.
  int64_t correlationId = 0;
  // CPU time the recording thread spent inside the span (CLOCK_THREAD_CPUTIME_ID),
  // -1 when not measured (only model and executor compute spans measure it).
  // Unlike endNs - startNs it is not stretched when ranks share cores.
  int64_t cpuNs = -1;

  bool operator==(const Event&) const = default;
};

// One training step as one rank saw it. loss is NaN on ranks without a loss.
struct StepRecord {
  int32_t rank = 0;
  int32_t step = 0;
  double loss = 0.0;
  int64_t tokens = 0;
  int64_t startNs = 0;
  int64_t endNs = 0;

  bool operator==(const StepRecord&) const = default;
};

// One point of a per-rank time series ("cpu_util", "rss_bytes", "mem.params").
struct Sample {
  int32_t rank = 0;
  std::string name;
  int64_t timeNs = 0;
  double value = 0.0;

  bool operator==(const Sample&) const = default;
};

// One rank of a run: where it ran, its grid coordinates, and how its clock
// maps onto rank 0's.
struct RankInfo {
  int32_t rank = 0;
  std::string host;
  int64_t pid = 0;
  std::string device = "cpu";  // "cpu" or "cuda:N"
  int32_t dp = 0;
  int32_t tp = 0;
  int32_t pp = 0;
  int64_t clockOffsetNs = 0;       // added to this rank's host times
  int64_t clockUncertaintyNs = 0;  // ± bound of that offset
  int32_t coresOnHost = 0;
  int32_t ranksOnHost = 0;
  int64_t parameters = 0;  // Ψ_rank: parameters this rank trains before ZeRO sharding (0: unknown)

  bool operator==(const RankInfo&) const = default;
};

EventCategory categoryOf(EventKind kind);
std::string_view toString(EventKind kind);
std::string_view toString(ParallelDim dim);
std::string_view toString(Lane lane);  // "gpu" for stream lanes
bool isValid(EventKind kind);
bool isValid(ParallelDim dim);

}  // namespace bubblescope::trace_model
