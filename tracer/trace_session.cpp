#include "tracer/trace_session.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>

#include "tracer/mpi_clock_sync.h"

namespace bubblescope::tracer {
namespace {

constexpr int kTagBatch = 7201;
constexpr int kTagDone = 7202;
constexpr int kTagSyncPing = 7203;
constexpr int kTagSyncPong = 7204;
// After answering a resync round the home rank polls without sleeping this long, so
// the rank's next round is answered at once (a short round trip is a tight
// bound).
constexpr int64_t kAwakeAfterPingNs = 2LL * 1000000;
constexpr int64_t kFlushIntervalNs = 200LL * 1000000;  // the home rank commits at least this often

// Fixed-size description of a rank, gathered on the home rank.
struct WireRank {
  int64_t pid;
  int64_t offsetNs;
  int64_t uncertaintyNs;
  int64_t gpuUncertaintyNs;  // -1: no GPU times
  int64_t parameters;
  int64_t droppedSpans;  // the rank's ring overflowed: spans lost
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
      home_(options.lastRankCollects ? size - 1 : 0),
      collects_(options.lastRankCollects && rank == size - 1),
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
  const int home = options.lastRankCollects ? size - 1 : 0;
  if (options.lastRankCollects && (size < 2 || !options.enabled)) {
    return Status::invalidArgument(
        "a collected trace session needs tracing on and a rank to trace");
  }
  if (rank == home && options.enabled && sink == nullptr) {
    return Status::invalidArgument("the tracer's home rank " + std::to_string(home) +
                                   " needs a sink to write to");
  }
  MPI_Comm comm;
  MPI_Comm_dup(world, &comm);
  std::unique_ptr<TraceSession> s(new TraceSession(comm, rank, size, sink, std::move(options)));
  s->placement_ = placement;
  if (!s->options_.enabled) return s;
  if (s->options_.gpu != nullptr) {
    s->gpuEvents_ = std::make_unique<GpuEventCollector>(*s->options_.gpu, s->rank_);
  }
  const GpuIdentity& gpu = s->options_.gpuIdentity;
  if (placement.device.rfind("cuda:", 0) == 0 && (!gpu.pciBusId.empty() || !gpu.uuid.empty())) {
    auto nvml = NvmlSampler::open(gpu);
    if (nvml.isOk()) s->nvml_ = std::move(nvml).value();
  }
  BS_ASSIGN_OR_RETURN(s->startEstimate_, measureOffsetTo(comm, home, s->options_.syncRounds,
                                                         [r = &s->recorder_] { return r->now(); }));
  s->clock_.add(s->startEstimate_);
  // Ranks on the home rank's host read its clock (CLOCK_MONOTONIC is per
  // host): the start offset is all there is. Others, and a clock skewed by a
  // test, drift.
  char host[64] = {}, homeHost[64] = {};
  gethostname(host, sizeof host - 1);
  std::memcpy(homeHost, host, sizeof host);
  MPI_Bcast(homeHost, sizeof homeHost, MPI_CHAR, home, comm);
  s->resyncs_ = rank != home && (std::strncmp(host, homeHost, sizeof host) != 0 ||
                                 s->options_.skewForTesting.has_value());
  BS_RETURN_IF_ERROR(s->exchangeRankInfo(placement));
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

void TraceSession::addSamples(std::vector<trace_model::Sample> samples) {
  if (!options_.enabled) return;
  std::lock_guard<std::mutex> lock(mutex_);
  samples_.insert(samples_.end(), std::make_move_iterator(samples.begin()),
                  std::make_move_iterator(samples.end()));
}

void TraceSession::setStreamDimension(uint32_t stream, trace_model::ParallelDim dim) {
  std::lock_guard<std::mutex> lock(mutex_);
  streamDims_[stream] = dim;
}

// Launch calls and GPU records (GpuEventCollector), NCCL kernels tagged
// with the dimension of their stream as the engine said.
void TraceSession::collectGpu(std::vector<trace_model::Event>& out) {
  StreamDims dims;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dims = streamDims_;
  }
  noteError(gpuEvents_->collect(dims, out));
}

void TraceSession::noteError(const Status& s) {
  if (s.isOk()) return;
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    first = error_.isOk();
    if (first) error_ = s;
  }
  if (first && options_.onFirstError) options_.onFirstError(s);
}

Status TraceSession::exchangeRankInfo(const RankPlacement& placement) {
  char host[64] = {};
  gethostname(host, sizeof host - 1);
  WireRank mine{};
  mine.pid = getpid();
  mine.offsetNs = startEstimate_.offsetNs;
  mine.uncertaintyNs = clock_.uncertaintyNs();
  mine.gpuUncertaintyNs = gpuEvents_ ? gpuEvents_->clockUncertaintyNs() : -1;
  mine.dp = placement.dp;
  mine.tp = placement.tp;
  mine.pp = placement.pp;
  mine.parameters = placement.parameters;
  mine.cores = static_cast<int32_t>(sysconf(_SC_NPROCESSORS_ONLN));
  mine.droppedSpans = recorder_.dropped();
  copyTruncated(mine.host, sizeof mine.host, host);
  copyTruncated(mine.device, sizeof mine.device, placement.device);
  std::vector<WireRank> all(rank_ == home_ ? size_ : 0);
  MPI_Gather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, home_, comm_);
  if (rank_ != home_) return Status::ok();

  // The collector is no rank of the run: the trainers are ranks 0..n-1.
  const int32_t trainers = collects_ ? size_ - 1 : size_;
  std::map<std::string, int32_t> ranksPerHost;
  for (int32_t r = 0; r < trainers; ++r) ++ranksPerHost[all[r].host];
  for (int32_t r = 0; r < trainers; ++r) {
    const WireRank& w = all[r];
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
    info.gpuClockUncertaintyNs = w.gpuUncertaintyNs;
    info.coresOnHost = w.cores;
    info.ranksOnHost = ranksPerHost[w.host];
    info.parameters = w.parameters;
    BS_RETURN_IF_ERROR(sink_->describeRank(info));
    // Spans a rank dropped (its ring was full: the collector fell behind,
    // e.g. stopped) are a loss the trace must state, not only the rank.
    if (w.droppedSpans > 0 && lostSpans_.empty()) {
      lostSpans_ = "rank " + std::to_string(r) + " dropped " + std::to_string(w.droppedSpans) +
                   " spans: its tracer's ring was full (the " +
                   (collects_ ? std::string("trace collector") : std::string("home rank")) +
                   " fell behind); the trace misses them";
    }
  }
  return sink_->flush();
}

Batch TraceSession::collectLocal(int64_t nowNs, bool sampleNow) {
  Batch batch;
  recorder_.drainInto(batch.events);
  if (gpuEvents_) collectGpu(batch.events);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    batch.steps.swap(steps_);
    batch.samples.swap(samples_);
  }
  if (sampleNow) {
    auto sampled = sampler_.sample(nowNs);
    batch.samples.insert(batch.samples.end(), sampled.begin(), sampled.end());
    if (nvml_) {
      auto gpu = nvml_->sample(rank_, nowNs);
      batch.samples.insert(batch.samples.end(), gpu.begin(), gpu.end());
    }
  }
  return batch;
}

Status TraceSession::resync() {
  std::vector<PingPong> rounds(std::max(options_.resyncRounds, 1));
  for (PingPong& round : rounds) {
    const char ping = 0;
    round.sendNs = recorder_.now();
    MPI_Send(&ping, 1, MPI_CHAR, home_, kTagSyncPing, comm_);
    if (MPI_Recv(&round.refNs, 1, MPI_INT64_T, home_, kTagSyncPong, comm_, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS) {
      return Status::internal("clock resync: receive from rank " + std::to_string(home_) +
                              " failed on rank " + std::to_string(rank_));
    }
    round.receiveNs = recorder_.now();
  }
  BS_ASSIGN_OR_RETURN(OffsetEstimate estimate, estimateOffset(rounds));
  clock_.add(estimate);
  return Status::ok();
}

void TraceSession::align(Batch& batch) const {
  for (trace_model::Event& e : batch.events) {
    e.startNs = clock_.toReference(e.startNs);
    e.endNs = std::max(e.startNs, clock_.toReference(e.endNs));
  }
  for (trace_model::StepRecord& s : batch.steps) {
    s.startNs = clock_.toReference(s.startNs);
    s.endNs = std::max(s.startNs, clock_.toReference(s.endNs));
  }
  for (trace_model::Sample& s : batch.samples) s.timeNs = clock_.toReference(s.timeNs);
}

void TraceSession::answerPing(int32_t fromRank) {
  char ping = 0;
  MPI_Recv(&ping, 1, MPI_CHAR, fromRank, kTagSyncPing, comm_, MPI_STATUS_IGNORE);
  const int64_t now = recorder_.now();
  MPI_Send(&now, 1, MPI_INT64_T, fromRank, kTagSyncPong, comm_);
  lastPingNs_ = hostNowNs();
}

void TraceSession::deliver(Batch batch) {
  if (!batch.events.empty()) noteError(sink_->appendEvents(batch.events));
  if (!batch.steps.empty()) noteError(sink_->appendSteps(batch.steps));
  if (!batch.samples.empty()) noteError(sink_->appendSamples(batch.samples));
}

bool TraceSession::receiveAvailable() {
  bool any = false;
  while (true) {
    // Only the tracer's own tags: the start sync's ping-pong shares comm_.
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kTagSyncPing, comm_, &flag, &status);
    if (flag) {
      answerPing(status.MPI_SOURCE);
      any = true;
      continue;
    }
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
    deliver(std::move(batch).value());
  }
}

void TraceSession::shipLocal(bool sampleNow) {
  Batch batch = collectLocal(recorder_.now(), sampleNow);
  if (rank_ == home_) {
    align(batch);
    deliver(std::move(batch));
    return;
  }
  if (batch.empty()) return;
  // Measured after draining: every drained time lies between two
  // measurements.
  if (resyncs_) noteError(resync());
  align(batch);
  const auto bytes = encodeBatch(batch);
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, home_, kTagBatch, comm_);
}

void TraceSession::run() {
  using std::chrono::milliseconds;
  const int64_t shipNs = options_.shipIntervalMs * 1000000;
  const int64_t sampleNs = options_.sampleIntervalMs * 1000000;
  int64_t lastShip = 0, lastSample = 0, lastFlush = hostNowNs();
  while (!abort_) {
    const bool stopping = stop_.load();
    const int64_t now = hostNowNs();
    // A collector has nothing of its own to ship: it only keeps its clock.
    if ((stopping && !collects_) || now - lastShip >= shipNs) {
      lastShip = now;
      recheckHostClock();  // keeps the TSC's scale on CLOCK_MONOTONIC (tracer/clock.h)
      if (!collects_) {
        const bool sampleNow = sampleNs > 0 && (now - lastSample >= sampleNs || stopping);
        if (sampleNow) lastSample = now;
        shipLocal(sampleNow);
      }
    }
    if (rank_ != home_) {
      if (stopping) {
        const char done = 1;
        MPI_Send(&done, 1, MPI_BYTE, home_, kTagDone, comm_);
        return;
      }
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_for(lock, milliseconds(options_.shipIntervalMs), [&] { return stop_.load(); });
      continue;
    }
    // Home rank: receive what has come, commit regularly so readers see it.
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
    if (!received && hostNowNs() - lastPingNs_ > kAwakeAfterPingNs) {
      std::this_thread::sleep_for(milliseconds(2));
    }
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
    noteError(exchangeRankInfo(placement_));
    std::lock_guard<std::mutex> lock(mutex_);
    result = error_;
    if (result.isOk() && !lostSpans_.empty()) result = Status::internal(lostSpans_);
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
