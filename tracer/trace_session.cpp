#include "tracer/trace_session.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

#include "tracer/mpi_clock_sync.h"

namespace bubblescope::tracer {
namespace {

constexpr int kTagBatch = 7201;
constexpr int kTagDone = 7202;
constexpr int64_t kFlushIntervalNs = 200LL * 1000000;  // rank 0 commits at least this often

// Fixed-size description of a rank, gathered on rank 0.
struct WireRank {
  int64_t pid;
  int64_t offsetNs;
  int64_t uncertaintyNs;
  int64_t pivotNs;
  double drift;
  int64_t parameters;
  int32_t dp, tp, pp, cores;
  char host[64];
  char device[32];
};

void copyTruncated(char* dst, size_t size, const std::string& src) {
  std::memset(dst, 0, size);
  std::memcpy(dst, src.data(), std::min(size - 1, src.size()));
}

}  // namespace

TraceSession::TraceSession(MPI_Comm comm, int rank, int size, trace_model::Sink* sink,
                           SessionOptions options)
    : comm_(comm),
      rank_(rank),
      size_(size),
      sink_(sink),
      options_(std::move(options)),
      recorder_(rank, options_.enabled, options_.recorderCapacity),
      sampler_(rank) {
  if (options_.skewForTesting) recorder_.setClockSkewForTesting(*options_.skewForTesting);
  for (auto& [name, read] : options_.gauges) sampler_.addGauge(name, read);
}

Result<std::unique_ptr<TraceSession>> TraceSession::start(MPI_Comm world, trace_model::Sink* sink,
                                                          const RankPlacement& placement,
                                                          SessionOptions options) {
  int provided = 0;
  MPI_Query_thread(&provided);
  if (options.enabled && provided < MPI_THREAD_MULTIPLE) {
    return Status::failedPrecondition(
        "the tracer needs MPI initialised with MPI_THREAD_MULTIPLE (it ships from a thread)");
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  if (rank == 0 && options.enabled && sink == nullptr) {
    return Status::invalidArgument("the tracer's rank 0 needs a sink to write to");
  }
  MPI_Comm comm;
  MPI_Comm_dup(world, &comm);
  std::unique_ptr<TraceSession> s(new TraceSession(comm, rank, size, sink, std::move(options)));
  s->placement_ = placement;
  if (!s->options_.enabled) return s;
  if (placement.device.rfind("cuda:", 0) == 0) {
    auto nvml = NvmlSampler::open(std::atoi(placement.device.c_str() + 5));
    if (nvml.isOk()) s->nvml_ = std::move(nvml).value();
  }
  BS_ASSIGN_OR_RETURN(s->startEstimate_,
                      measureOffsetToRankZero(comm, s->options_.syncRounds,
                                              [r = &s->recorder_] { return r->now(); }));
  s->model_ = fitClockModel(s->startEstimate_);
  BS_RETURN_IF_ERROR(s->exchangeRankInfo(placement, false));
  s->thread_ = std::thread([p = s.get()] { p->run(); });
  return s;
}

TraceSession::~TraceSession() {
  if (thread_.joinable()) {
    abort_ = true;
    stop_ = true;
    wake_.notify_all();
    thread_.join();
  }
  if (!finished_) MPI_Comm_free(&comm_);
}

void TraceSession::addStep(const trace_model::StepRecord& step) {
  if (!options_.enabled) return;
  std::lock_guard<std::mutex> lock(mutex_);
  steps_.push_back(step);
}

void TraceSession::setStreamDimension(uint32_t stream, trace_model::ParallelDim dim) {
  std::lock_guard<std::mutex> lock(mutex_);
  streamDims_[stream] = dim;
}

// Launch calls (already on the host clock) and GPU records on the rank's
// host clock: the map is refitted on every batch from the first pairs (a
// long baseline for the rate) and the latest ones. A launch and its record
// may ship in different batches: they are linked by their correlation id.
void TraceSession::collectGpu(std::vector<trace_model::Event>& out) {
  for (const LaunchCall& call : options_.gpu->takeLaunches()) out.push_back(toEvent(call, rank_));
  std::vector<GpuActivity> activities = options_.gpu->take();
  if (activities.empty()) return;
  constexpr size_t kFirst = 8, kMax = 64;
  for (const ClockPair& p : options_.gpu->clockPairs(4)) gpuClockPairs_.push_back(p);
  if (gpuClockPairs_.size() > kMax) {
    gpuClockPairs_.erase(gpuClockPairs_.begin() + kFirst,
                         gpuClockPairs_.end() - static_cast<std::ptrdiff_t>(kMax - kFirst));
  }
  auto map = fitGpuClockMap(gpuClockPairs_);
  if (!map.isOk()) {
    noteError(map.status().withContext("rank " + std::to_string(rank_)));
    return;
  }
  StreamDims dims;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dims = streamDims_;
  }
  for (const GpuActivity& a : activities) out.push_back(toEvent(a, *map, rank_, dims));
}

void TraceSession::noteError(const Status& s) {
  if (s.isOk()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_.isOk()) error_ = s;
}

Status TraceSession::exchangeRankInfo(const RankPlacement& placement, bool final) {
  char host[64] = {};
  gethostname(host, sizeof host - 1);
  WireRank mine{};
  mine.pid = getpid();
  mine.offsetNs = model_.offsetNs;
  mine.uncertaintyNs = model_.uncertaintyNs;
  mine.pivotNs = model_.pivotNs;
  mine.drift = model_.drift;
  mine.dp = placement.dp;
  mine.tp = placement.tp;
  mine.pp = placement.pp;
  mine.parameters = placement.parameters;
  mine.cores = static_cast<int32_t>(sysconf(_SC_NPROCESSORS_ONLN));
  copyTruncated(mine.host, sizeof mine.host, host);
  copyTruncated(mine.device, sizeof mine.device, placement.device);
  std::vector<WireRank> all(rank_ == 0 ? size_ : 0);
  MPI_Gather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, 0, comm_);
  if (rank_ != 0) return Status::ok();

  std::map<std::string, int32_t> ranksPerHost;
  for (const WireRank& w : all) ++ranksPerHost[w.host];
  models_.resize(size_);
  int64_t runStart = 0;
  for (int32_t r = 0; r < size_; ++r) {
    const WireRank& w = all[r];
    models_[r] = {w.pivotNs, w.offsetNs, final ? w.drift : 0.0, w.uncertaintyNs};
    if (r == 0) runStart = w.pivotNs;
    trace_model::RankInfo info;
    info.rank = r;
    info.host = w.host;
    info.pid = w.pid;
    info.device = w.device;
    info.dp = w.dp;
    info.tp = w.tp;
    info.pp = w.pp;
    info.clockOffsetNs = w.offsetNs;
    info.clockUncertaintyNs = w.uncertaintyNs;
    info.coresOnHost = w.cores;
    info.ranksOnHost = ranksPerHost[w.host];
    info.parameters = w.parameters;
    if (final && r != 0 && w.drift != 0.0) {
      // Events were stored with the start offset only. Correcting the drift
      // rewrites the rank's rows, so it is done only when the drift moves
      // times by more than the offset is known anyway; otherwise the drift
      // left in is added to the stated uncertainty, which stays a bound.
      const double runNs = static_cast<double>(recorder_.now() - runStart);
      const double driftNs = std::fabs(w.drift) * runNs;
      if (driftNs > static_cast<double>(w.uncertaintyNs)) {
        BS_RETURN_IF_ERROR(sink_->applyClockDrift(r, w.pivotNs + w.offsetNs, w.drift));
      } else {
        info.clockUncertaintyNs += static_cast<int64_t>(std::ceil(driftNs));
      }
    }
    BS_RETURN_IF_ERROR(sink_->describeRank(info));
  }
  return sink_->flush();
}

Batch TraceSession::collectLocal(int64_t nowNs, bool sampleNow) {
  Batch batch;
  recorder_.drainInto(batch.events);
  if (options_.gpu != nullptr) collectGpu(batch.events);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    batch.steps.swap(steps_);
  }
  if (sampleNow) {
    batch.samples = sampler_.sample(nowNs);
    if (nvml_) {
      auto gpu = nvml_->sample(rank_, nowNs);
      batch.samples.insert(batch.samples.end(), gpu.begin(), gpu.end());
    }
  }
  return batch;
}

void TraceSession::deliver(int32_t fromRank, Batch batch) {
  if (fromRank < 0 || fromRank >= size_) return;
  const ClockModel& m = models_[fromRank];
  for (trace_model::Event& e : batch.events) {
    e.startNs = m.toReference(e.startNs);
    e.endNs = std::max(e.startNs, m.toReference(e.endNs));
  }
  for (trace_model::StepRecord& s : batch.steps) {
    s.startNs = m.toReference(s.startNs);
    s.endNs = m.toReference(s.endNs);
  }
  for (trace_model::Sample& s : batch.samples) s.timeNs = m.toReference(s.timeNs);
  if (!batch.events.empty()) noteError(sink_->appendEvents(batch.events));
  if (!batch.steps.empty()) noteError(sink_->appendSteps(batch.steps));
  if (!batch.samples.empty()) noteError(sink_->appendSamples(batch.samples));
}

bool TraceSession::receiveAvailable() {
  bool any = false;
  while (true) {
    // Only the tracer's own tags: the clock sync's ping-pong shares comm_.
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kTagBatch, comm_, &flag, &status);
    if (!flag) MPI_Iprobe(MPI_ANY_SOURCE, kTagDone, comm_, &flag, &status);
    if (!flag) return any;
    any = true;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    std::vector<uint8_t> bytes(count);
    MPI_Recv(bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, comm_,
             MPI_STATUS_IGNORE);
    if (status.MPI_TAG == kTagDone) {
      ++doneRanks_;
      continue;
    }
    auto batch = decodeBatch(bytes);
    if (!batch.isOk()) {
      noteError(batch.status().withContext("batch from rank " + std::to_string(status.MPI_SOURCE)));
      continue;
    }
    deliver(status.MPI_SOURCE, std::move(batch).value());
  }
}

void TraceSession::run() {
  using std::chrono::milliseconds;
  const int64_t shipNs = options_.shipIntervalMs * 1000000;
  const int64_t sampleNs = options_.sampleIntervalMs * 1000000;
  int64_t lastShip = 0, lastSample = 0, lastFlush = hostNowNs();
  while (!abort_) {
    const bool stopping = stop_.load();
    const int64_t now = hostNowNs();
    if (stopping || now - lastShip >= shipNs) {
      const bool sampleNow = sampleNs > 0 && (now - lastSample >= sampleNs || stopping);
      if (sampleNow) lastSample = now;
      Batch batch = collectLocal(recorder_.now(), sampleNow);
      lastShip = now;
      recheckHostClock();  // keeps the TSC's scale on CLOCK_MONOTONIC (tracer/clock.h)
      if (rank_ == 0) {
        deliver(0, std::move(batch));
      } else if (!batch.empty()) {
        const auto bytes = encodeBatch(batch);
        MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, kTagBatch, comm_);
        ++batchesShipped_;
      }
    }
    if (rank_ != 0) {
      if (stopping) {
        const char done = 1;
        MPI_Send(&done, 1, MPI_BYTE, 0, kTagDone, comm_);
        return;
      }
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_for(lock, milliseconds(options_.shipIntervalMs), [&] { return stop_.load(); });
      continue;
    }
    // Rank 0: receive what has come, commit regularly so readers see it.
    const bool received = receiveAvailable();
    if (hostNowNs() - lastFlush >= kFlushIntervalNs) {
      noteError(sink_->flush());
      lastFlush = hostNowNs();
    }
    if (stopping && doneRanks_ == size_ - 1) {
      receiveAvailable();
      noteError(sink_->flush());
      return;
    }
    if (!received) std::this_thread::sleep_for(milliseconds(2));
  }
}

Status TraceSession::finish() {
  if (finished_) return Status::failedPrecondition("the trace session is already finished");
  finished_ = true;
  Status result;
  if (options_.enabled) {
    stop_ = true;
    wake_.notify_all();
    thread_.join();
    auto end =
        measureOffsetToRankZero(comm_, options_.syncRounds, [r = &recorder_] { return r->now(); });
    if (end.isOk()) {
      model_ = fitClockModel(startEstimate_, *end);
    } else {
      noteError(end.status());
    }
    noteError(exchangeRankInfo(placement_, true));
    std::lock_guard<std::mutex> lock(mutex_);
    result = error_;
    if (recorder_.dropped() > 0 && result.isOk()) {
      result = Status::internal("rank " + std::to_string(rank_) + " dropped " +
                                std::to_string(recorder_.dropped()) +
                                " spans: the tracer's ring was full");
    }
  }
  MPI_Comm_free(&comm_);
  return result;
}

}  // namespace bubblescope::tracer
