#include "tracer/cupti_collector.h"

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "tracer/clock.h"

namespace bubblescope::tracer {
namespace {

constexpr size_t kBufferBytes = 8 << 20;
constexpr size_t kAlign = 8;

std::mutex gMutex;
std::vector<GpuActivity>* gCompleted = nullptr;  // guarded by gMutex
std::atomic<int64_t> gDropped{0};
std::atomic<bool> gActive{false};

std::string cuptiError(CUptiResult r) {
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  return text ? text : "unknown CUPTI error";
}

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *maxNumRecords = 0;
}

void collect(const CUpti_Activity* record, std::vector<GpuActivity>& out) {
  GpuActivity a;
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      a = {GpuActivityKind::kKernel, k->start, k->end, k->deviceId, k->streamId, k->correlationId,
           k->name ? k->name : "kernel", 0};
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      a = {GpuActivityKind::kMemcpy, m->start, m->end, m->deviceId, m->streamId, m->correlationId,
           "", m->bytes};
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      a = {GpuActivityKind::kMemset, m->start, m->end, m->deviceId, m->streamId, m->correlationId,
           "", m->bytes};
      break;
    }
    default:
      return;
  }
  out.push_back(std::move(a));
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t validSize) {
  std::vector<GpuActivity> batch;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
    collect(record, batch);
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) {
    gDropped += static_cast<int64_t>(dropped);
  }
  std::free(buffer);
  std::lock_guard<std::mutex> lock(gMutex);
  if (gCompleted) gCompleted->insert(gCompleted->end(), batch.begin(), batch.end());
}

constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};

}  // namespace

Result<std::unique_ptr<CuptiCollector>> CuptiCollector::start() {
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    return Status::unsupported(std::string("CUPTI tracing needs a GPU: ") +
                               (err != cudaSuccess ? cudaGetErrorString(err) : "no device"));
  }
  if (gActive.exchange(true)) {
    return Status::failedPrecondition("a CUPTI collector is already running in this process");
  }
  {
    std::lock_guard<std::mutex> lock(gMutex);
    gCompleted = new std::vector<GpuActivity>();
  }
  CUptiResult r = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted);
  for (size_t i = 0; r == CUPTI_SUCCESS && i < std::size(kKinds); ++i) {
    r = cuptiActivityEnable(kKinds[i]);
  }
  if (r != CUPTI_SUCCESS) {
    gActive = false;
    return Status::unsupported("CUPTI refused activity tracing: " + cuptiError(r));
  }
  return std::unique_ptr<CuptiCollector>(new CuptiCollector());
}

CuptiCollector::~CuptiCollector() {
  cuptiActivityFlushAll(1);
  for (CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
  std::lock_guard<std::mutex> lock(gMutex);
  delete gCompleted;
  gCompleted = nullptr;
  gActive = false;
}

std::vector<GpuActivity> CuptiCollector::take() {
  cuptiActivityFlushAll(1);
  std::vector<GpuActivity> out;
  std::lock_guard<std::mutex> lock(gMutex);
  if (gCompleted) out.swap(*gCompleted);
  return out;
}

std::vector<ClockPair> CuptiCollector::clockPairs(int count) {
  std::vector<ClockPair> pairs;
  for (int i = 0; i < count; ++i) {
    uint64_t gpu = 0;
    const int64_t before = hostNowNs();
    if (cuptiGetTimestamp(&gpu) != CUPTI_SUCCESS) break;
    const int64_t after = hostNowNs();
    pairs.push_back({gpu, before + (after - before) / 2});
  }
  return pairs;
}

int64_t CuptiCollector::droppedRecords() const { return gDropped.load(); }

}  // namespace bubblescope::tracer
