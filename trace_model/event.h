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
#include <type_traits>

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

// How the analysis counts a kind (docs/design.md, "Metrics").
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

// The fields of one span on one rank's lane, declared once: Event's members
// and every mapping of them are generated from this list (the recorder's copy
// of a tracer::SpanInfo, the batch wire format, the stored event block, the
// rows of older trace files), so a new field is one line here.
//
// BUBBLESCOPE_EVENT_FIELDS(KEY, ATTR) calls, in declaration order,
//   KEY(Type, member, initial)
// for the four key fields, which every format codes its own way (the rank:
// implied by a stored block; the name: an index into a batch's strings, a
// strings.id in a file; the start and end: delta coded in a block), and
//   ATTR(Type, member, initial, column, since, bit, span)
// for the attributes, which every format stores as their integer alone:
//   column  the column in the `events` rows of schema v1..v5 files, nullptr
//           for a field added after v5 (such rows read `initial`);
//   since   the first schema version whose rows have that column (rows of
//           older files read `initial`);
//   bit     the field's bit in a stored event block's mask
//           (storage/event_block.h, docs/trace-format.md; bit 0 is the name).
//           Stored in files: never renumber; a new field takes the next bit;
//   span    1 when tracer::SpanInfo carries it (the recorder copies it), 0
//           when the tracer sets it otherwise.
// Types are named from namespace bubblescope (the list expands there).
//
// The members:
//   rank          the rank that recorded the span.
//   lane, kind    where it is drawn and what it did.
//   name          e.g. "forward", "allreduce.bucket3", a kernel name.
//   startNs/endNs endNs >= startNs.
//   step, microBatch, stage, chunk   -1 when they do not apply.
//   dim           the parallel dimension of a collective or transfer.
//   bytes, flops  moved by a collective or transfer / done by a compute span.
//   peer          the other rank of a send or receive.
//   correlationId links a GPU record (kernel, copy, set on a stream lane) to
//                 the host call that launched it (on Lane::kCudaApi): both
//                 carry the same id, unique within one rank (CUPTI's
//                 correlation id). 0 = not linked.
//   cpuNs         CPU time the recording thread spent inside the span
//                 (CLOCK_THREAD_CPUTIME_ID), -1 when not measured (only model
//                 and executor compute spans measure it). Unlike
//                 endNs - startNs it is not stretched when ranks share cores.
// clang-format off
#define BUBBLESCOPE_EVENT_FIELDS(KEY, ATTR)                                              \
  KEY(int32_t, rank, 0)                                                                  \
  ATTR(trace_model::Lane, lane, trace_model::Lane::kCompute, "lane", 1, 2, 1)            \
  ATTR(trace_model::EventKind, kind, trace_model::EventKind::kOther, "kind", 1, 1, 1)    \
  KEY(std::string, name, "")                                                             \
  KEY(int64_t, startNs, 0)                                                               \
  KEY(int64_t, endNs, 0)                                                                 \
  ATTR(int32_t, step, -1, "step", 1, 7, 1)                                               \
  ATTR(int32_t, microBatch, -1, "micro_batch", 1, 3, 1)                                  \
  ATTR(int32_t, stage, -1, "stage", 1, 8, 1)                                             \
  ATTR(int32_t, chunk, -1, "chunk", 1, 9, 1)                                             \
  ATTR(trace_model::ParallelDim, dim, trace_model::ParallelDim::kNone, "dim", 1, 5, 1)   \
  ATTR(int64_t, bytes, 0, "bytes", 1, 4, 1)                                              \
  ATTR(int64_t, flops, 0, "flops", 1, 10, 1)                                             \
  ATTR(int32_t, peer, -1, "peer", 1, 6, 1)                                               \
  ATTR(int64_t, correlationId, 0, "correlation", 2, 11, 0)                               \
  ATTR(int64_t, cpuNs, -1, "cpu_ns", 5, 12, 0)
// clang-format on

// For the mappings: a KEY or ATTR that expands to nothing, and code selected
// by a 0/1 flag of the list (BUBBLESCOPE_IF_##span(...)).
#define BUBBLESCOPE_EVENT_SKIP(...)
#define BUBBLESCOPE_IF_0(...)
#define BUBBLESCOPE_IF_1(...) __VA_ARGS__

// One span on one rank's lane (the members are documented above).
struct Event {
#define BUBBLESCOPE_EVENT_MEMBER(Type, member, initial, ...) Type member = initial;
  BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_EVENT_MEMBER, BUBBLESCOPE_EVENT_MEMBER)
#undef BUBBLESCOPE_EVENT_MEMBER

  bool operator==(const Event&) const = default;
};

// A field's value as the integer that the formats store: an enum's
// underlying value, an integer as it is.
template <class T>
constexpr auto integerOf(T value) {
  if constexpr (std::is_enum_v<T>) {
    return static_cast<std::underlying_type_t<T>>(value);
  } else {
    return value;
  }
}
template <class T>
using IntegerOf = decltype(integerOf(T{}));

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
  // ± bound of the conversion of its GPU timestamps (CUPTI's clock) onto its
  // host clock (tracer::GpuClockMap::errorBoundNs, the largest used); a GPU
  // time on the timeline is within this plus clockUncertaintyNs. -1: no GPU
  // times converted (a CPU rank, or unknown).
  int64_t gpuClockUncertaintyNs = -1;
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
