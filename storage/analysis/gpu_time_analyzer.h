// GpuTimeAnalyzer: where a rank's GPU time went, with Holistic Trace
// Analysis's definitions (hta/common/trace.py _filter_irrelevant_gpu_kernels,
// hta/analyzers/breakdown_analysis.py get_temporal_breakdown and
// get_idle_time_breakdown, communication_analysis.py get_comm_comp_overlap),
// so that `report` and HTA agree on the same trace (docs/analysis.md, "GPU
// time"):
//
// - Counted records: the GPU stream records (kernels, collectives, memcpy,
//   memset; GPU annotations and other spans on a stream do not count).
// - The launch cut (HTA filters when the run has at least two ProfilerStep
//   annotations): a record counts only if its launch (the Lane::kCudaApi
//   event of the same correlation id) is in the trace and, without the
//   last step (includeLastStep false), began before the rank's last
//   ProfilerStep started (last_step_cut.h, which the kernel tables share). A record whose launch is not in the trace
//   (launched before the profiler started) does not count; it is reported
//   per stream in launchedBeforeProfile. A record without a correlation id
//   is judged by its own start (HTA treats it as a host row). With the last
//   step, HTA 0.5 means to keep what was launched up to that step's end, but
//   compares the launch's time, shifted to the trace's first event, with
//   the step's unshifted end: on any real trace (timestamps far from 0) that
//   keeps every launched record, and so does this analysis.
// - windowNs: HTA's kernel_time, from the first counted record's start to
//   the last one's end; busy = |∪ counted|, compute = |∪ computation|
//   (trace_model::kernelTypeOf), non-compute = busy − compute, idle =
//   window − busy, comm = |∪ communication|, overlap = |comm ∩ compute|.
// - Idle breakdown per stream: the counted records of a stream in start
//   order; each gap from the previous record's end to the next's start is
//   host wait when the next one's launch began after the previous ended,
//   else kernel wait when shorter than kernelWaitNs, else other.
//
// The rank's ProfilerStep spans are either given (runs whose stored steps
// are the host's step spans) or read from the events (a Kineto import: the
// "ProfilerStep#N" annotations on host-thread lanes).
//
// Contract: add() the rank's events (every lane) in start order, then
// finish(). A record is matched to a launch that started before it (a GPU
// record cannot start before its launch call); one whose launch comes later
// in the stream counts as launched before the profile. Memory: a LaunchTable
// (launch_table.h: 32 bytes per launch) plus a few numbers per stream; the last-step cut is decided as the
// events come (a record launched after every step seen so far is held in a
// second running total until a later step settles it). Not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "storage/analysis/last_step_cut.h"
#include "storage/analysis/launch_table.h"
#include "trace_model/event.h"
#include "trace_model/kernel_type.h"
#include "trace_model/step_window.h"

namespace bubblescope::analysis {

// The records this analysis counts (busy time): a record on a GPU stream
// lane of any kind but kOther (kernels, collectives, memcpy, memset: HTA's
// GPU records). The timeline's idle hatch on GPU lanes uses it too
// (bubbles.h isBusy(lane, kind)).
bool isCountedGpuRecord(trace_model::Lane lane, trace_model::EventKind kind);

// HTA's idle time breakdown of one stream (get_idle_time_breakdown).
struct GpuStreamIdle {
  int32_t stream = 0;
  int64_t hostWaitNs = 0;
  int64_t kernelWaitNs = 0;
  int64_t otherNs = 0;
  int64_t totalNs() const { return hostWaitNs + kernelWaitNs + otherNs; }
};

// GPU work of one stream whose launch is not in the trace.
struct GpuStreamWork {
  int32_t stream = 0;
  int64_t records = 0;
  int64_t ns = 0;  // |∪ records| on the stream
};

struct GpuTime {
  int64_t windowNs = 0;  // HTA's kernel_time: first counted start to last counted end
  int64_t busyNs = 0;
  int64_t computeNs = 0;
  int64_t commNs = 0;
  int64_t overlapNs = 0;
  int32_t steps = 0;  // the ProfilerSteps whose launches count (1 without the cut)
  bool launchCut = false;
  bool includeLastStep = true;
  std::vector<GpuStreamIdle> idle;                   // by stream
  std::vector<GpuStreamWork> launchedBeforeProfile;  // by stream; empty without the cut
  int64_t nonComputeNs() const { return busyNs - computeNs; }
  int64_t idleNs() const { return windowNs - busyNs; }
};

struct GpuTimeOptions {
  // HTA's include_last_profiler_step.
  bool includeLastStep = true;
  // HTA filters by launch only when the run has two or more distinct
  // ProfilerStep names; with fewer, every stream record counts.
  bool launchCut = true;
  // HTA's consecutive_kernel_delay (30, in its microsecond timestamps).
  int64_t kernelWaitNs = 30'000;
};

class GpuTimeAnalyzer {
 public:
  // `profilerSteps`: the rank's ProfilerStep spans when known ahead;
  // nullopt reads them from the "ProfilerStep#N" events as they come.
  explicit GpuTimeAnalyzer(
      GpuTimeOptions options,
      std::optional<std::vector<trace_model::StepWindow>> profilerSteps = std::nullopt);
  void add(const trace_model::Event& event);
  // nullopt when the rank has no GPU records; windowNs 0 when none counted
  // (launchedBeforeProfile may still say what was left out).
  std::optional<GpuTime> finish() const;

 private:
  // |∪ intervals| of intervals added in start order.
  struct RunningUnion {
    int64_t totalNs = 0;
    int64_t startNs = 0;
    int64_t endNs = std::numeric_limits<int64_t>::min();
    void add(int64_t s, int64_t e);
    int64_t value() const;
  };
  struct StreamGaps {
    int32_t stream = 0;
    bool any = false;
    int64_t prevEndNs = 0;
    GpuStreamIdle idle;
  };
  // Everything summed over the counted records.
  struct Totals {
    bool any = false;
    int64_t firstNs = 0;
    int64_t lastNs = 0;
    RunningUnion busy, compute, comm, commOrCompute;
    std::vector<StreamGaps> streams;
    void add(const trace_model::Event& e, int32_t stream, trace_model::KernelType type,
             std::optional<int64_t> launchNs, int64_t kernelWaitNs);
  };
  struct BeforeProfile {
    GpuStreamWork work;
    RunningUnion on;
  };
  GpuTimeOptions options_;
  LastStepCut cut_;
  LaunchTable launches_;
  Totals settled_;                // records the cut keeps whatever follows
  // settled_ plus the records launched after every step seen so far: what
  // counts if another step follows. Only while pending_.
  Totals ifAnotherStep_;
  bool pending_ = false;
  std::vector<BeforeProfile> beforeProfile_;
};

}  // namespace bubblescope::analysis
