// TraceSession: the tracer of one rank of an MPI job. It aligns the rank's
// times to the home rank's clock, then ships the rank's spans, step records
// and samples in batches to the home rank, which writes everything into one
// Sink (the trace file's writer) as it comes: times reach the sink already
// aligned. The home rank is rank 0 (a job started by hand: rank 0 trains and
// writes), or, with SessionOptions::lastRankCollects, the job's last rank:
// a collector that `run` places on the launching machine, which records
// nothing itself and only receives and writes (docs/tracer.md, "Where the
// trace is written"). Ranks are numbered as in `world`; the collector has no
// rank in the trace.
//
// Contract:
// - start() and finish() are collective over `world` (collector included);
//   the session talks over its own duplicate, so it never matches the
//   engine's messages. MPI must be initialised with MPI_THREAD_MULTIPLE.
// - One background thread per rank ships a batch every shipIntervalMs and
//   samples every sampleIntervalMs; the training thread only fills the
//   Recorder's ring, so it is never stalled by shipping or writing.
// - On the home rank that thread is the only user of `sink` from start()
//   until finish() returns; only the home rank needs a sink.
// - A collector's finish() returns once every other rank has finished.
// - Clock alignment (docs/tracer.md, "One timeline"): start() measures each
//   rank's offset to the home rank collectively; then, before every batch it
//   ships, a rank on another host than the home rank (one host shares one
//   clock) drains what it recorded, measures its offset again (resyncRounds
//   ping-pongs that the home rank's thread answers) and maps the drained
//   times through its ClockTrack, so every shipped time lies between two
//   measurements and offset and drift are both corrected before the sink.
// - Times given to addStep() come from recorder()->now().
#pragma once

#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "trace_model/sink.h"
#include "tracer/batch_codec.h"
#include "tracer/clock_sync.h"
#include "tracer/gpu_activity.h"
#include "tracer/gpu_event_collector.h"
#include "tracer/nvml_sampler.h"
#include "tracer/process_sampler.h"
#include "tracer/recorder.h"

namespace bubblescope::tracer {

struct SessionOptions {
  bool enabled = true;             // false: spans cost one branch, nothing is shipped
  int64_t shipIntervalMs = 100;    // a span reaches the home rank at most this much after it ends
  int64_t sampleIntervalMs = 100;  // 0: no samples
  int syncRounds = 64;             // ping-pong rounds per rank at start
  int resyncRounds = 16;           // ping-pong rounds before each shipped batch
  size_t recorderCapacity = size_t{1} << 17;
  std::optional<ClockSkew> skewForTesting;
  std::vector<std::pair<std::string, std::function<double()>>> gauges;  // thread-safe reads
  // GPU ranks: the CUPTI collector (not owned; outlives the session). Its
  // activities ship with the rank's batches, on its stream lanes.
  GpuActivitySource* gpu = nullptr;
  // GPU ranks: their CUDA device's PCI bus id and UUID (gpu_identity.h), by
  // which the session finds it in NVML for its samples; empty: no NVML
  // samples (CUDA's index in the placement is never NVML's).
  GpuIdentity gpuIdentity;
  // The last rank of `world` is the collector (the home rank): it writes
  // every other rank's batches and records nothing. Every rank passes the
  // same value.
  bool lastRankCollects = false;
  // Called once, with the first error the session meets (a sink that cannot
  // write: a full disk), from the thread that met it, as it happens rather
  // than at finish(): the collector stops the job with it (collect_command).
  std::function<void(const Status&)> onFirstError;
};

// Where a rank sits, as the engine knows it.
struct RankPlacement {
  int32_t dp = 0;
  int32_t tp = 0;
  int32_t pp = 0;
  std::string device = "cpu";
  int64_t parameters = 0;  // Ψ_rank (trace_model::RankInfo::parameters)
};

class TraceSession {
 public:
  static Result<std::unique_ptr<TraceSession>> start(MPI_Comm world, trace_model::Sink* sink,
                                                     const RankPlacement& placement,
                                                     SessionOptions options);
  ~TraceSession();
  TraceSession(const TraceSession&) = delete;
  TraceSession& operator=(const TraceSession&) = delete;

  Recorder* recorder() { return &recorder_; }
  int32_t rank() const { return rank_; }
  // The rank whose clock is the timeline and whose sink is written.
  int32_t homeRank() const { return home_; }
  void addStep(const trace_model::StepRecord& step);  // thread-safe
  // Samples the run adds itself (the MoE counts of a step), times from
  // recorder()->now(); shipped with the next batch. Thread-safe.
  void addSamples(std::vector<trace_model::Sample> samples);
  // Which parallel dimension's collectives run on a GPU stream (the engine
  // tells once it has created its communicators). Thread-safe.
  void setStreamDimension(uint32_t stream, trace_model::ParallelDim dim);

  // Ships what is left, states each rank's clock uncertainty (the largest of
  // its measurements), and reports the first error any part of the session
  // met; on the home rank also a rank that dropped spans (its ring was full),
  // so that the trace's run is marked failed with the loss.
  Status finish();

 private:
  TraceSession(MPI_Comm comm, int rank, int size, trace_model::Sink* sink, SessionOptions options);
  // Collective: the home rank describes every training rank to the sink
  // (again in finish(), with the final clock uncertainty).
  Status exchangeRankInfo(const RankPlacement& placement);
  void run();
  Batch collectLocal(int64_t nowNs, bool sampleNow);
  void collectGpu(std::vector<trace_model::Event>& out);
  void shipLocal(bool sampleNow);     // drain, align, then write or send
  Status resync();                    // other ranks: measure the offset again
  void align(Batch& batch) const;     // this rank's times -> the home rank's
  void deliver(Batch batch);          // home rank: write
  void answerPing(int32_t fromRank);  // home rank: one resync round
  bool receiveAvailable();            // home rank: true if anything came
  void noteError(const Status& s);

  MPI_Comm comm_;
  int32_t rank_;
  int32_t size_;
  int32_t home_;   // 0, or the collector (size_ - 1)
  bool collects_;  // this rank is the collector: it records nothing
  trace_model::Sink* sink_;
  SessionOptions options_;
  Recorder recorder_;
  ProcessSampler sampler_;
  std::unique_ptr<NvmlSampler> nvml_;  // GPU ranks, when NVML loads
  OffsetEstimate startEstimate_;
  ClockTrack clock_;        // start(), then the shipping thread, then finish()
  int64_t lastPingNs_ = 0;  // home rank: when it last answered a resync round
  bool resyncs_ = false;    // not on the home rank's host (or skewed): measure again
  RankPlacement placement_;

  std::mutex mutex_;  // guards steps_, error_, stop_ signalling
  std::condition_variable wake_;
  std::vector<trace_model::StepRecord> steps_;
  std::vector<trace_model::Sample> samples_;  // from addSamples(), guarded by mutex_
  StreamDims streamDims_;
  std::unique_ptr<GpuEventCollector> gpuEvents_;  // options_.gpu's; shipping thread only
  Status error_;
  std::string lostSpans_;  // home rank: the first rank that dropped spans, said at finish()
  std::atomic<bool> stop_{false};
  std::atomic<bool> abort_{false};
  int32_t doneRanks_ = 0;
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace bubblescope::tracer
