#include "tracer/cupti_collector.h"

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <sys/syscall.h>
#include <unistd.h>

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

// Launch calls, recorded by the API callback on the launching thread.
// functionName is a global constant of CUPTI's: kept as a pointer until take.
struct RawLaunch {
  uint32_t correlationId;
  uint32_t threadId;
  int64_t startNs;
  int64_t endNs;
  const char* name;
};
std::mutex gLaunchMutex;
std::vector<RawLaunch>* gLaunches = nullptr;  // guarded by gLaunchMutex
CUpti_SubscriberHandle gSubscriber = nullptr;

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

uint32_t currentThreadId() {
  thread_local const uint32_t id = static_cast<uint32_t>(::syscall(SYS_gettid));
  return id;
}

// Entry: remember the host time in the call's correlation slot. Exit: the
// call is complete; log it. Only the launch functions are enabled (see
// enableLaunchCallbacks), so this runs for nothing else.
void CUPTIAPI onApiCall(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (cb->callbackSite == CUPTI_API_ENTER) {
    *cb->correlationData = static_cast<uint64_t>(hostNowNs());
    return;
  }
  const RawLaunch launch{cb->correlationId, currentThreadId(),
                         static_cast<int64_t>(*cb->correlationData), hostNowNs(), cb->functionName};
  std::lock_guard<std::mutex> lock(gLaunchMutex);
  if (gLaunches) gLaunches->push_back(launch);
}

struct TracedApi {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  const char* name;
};

// The runtime and driver functions that launch kernels, copies and sets:
// isLaunchApi on CUPTI's own names, so new variants (CUDA 13's
// __cudaLaunchKernel) are found without a list kept here. Needs no GPU.
std::vector<TracedApi> launchApis() {
  const struct {
    CUpti_CallbackDomain domain;
    uint32_t size;
  } kDomains[] = {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE},
                  {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE}};
  std::vector<TracedApi> out;
  for (const auto& d : kDomains) {
    for (uint32_t cbid = 1; cbid < d.size; ++cbid) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(d.domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
      if (isLaunchApi(name)) out.push_back({d.domain, cbid, name});
    }
  }
  return out;
}

// Subscribes to launchApis() only.
CUptiResult enableLaunchCallbacks() {
  CUptiResult r = cuptiSubscribe(&gSubscriber, onApiCall, nullptr);
  if (r != CUPTI_SUCCESS) {
    gSubscriber = nullptr;
    return r;
  }
  int enabled = 0;
  for (const TracedApi& api : launchApis()) {
    if (cuptiEnableCallback(1, gSubscriber, api.domain, api.cbid) == CUPTI_SUCCESS) ++enabled;
  }
  if (enabled == 0) {
    cuptiUnsubscribe(gSubscriber);
    gSubscriber = nullptr;
    return CUPTI_ERROR_NOT_SUPPORTED;
  }
  return CUPTI_SUCCESS;
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
  {
    std::lock_guard<std::mutex> lock(gLaunchMutex);
    gLaunches = new std::vector<RawLaunch>();
  }
  CUptiResult r = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted);
  for (size_t i = 0; r == CUPTI_SUCCESS && i < std::size(kKinds); ++i) {
    r = cuptiActivityEnable(kKinds[i]);
  }
  if (r != CUPTI_SUCCESS) {
    for (CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
    std::scoped_lock lock(gMutex, gLaunchMutex);
    delete gCompleted;
    gCompleted = nullptr;
    delete gLaunches;
    gLaunches = nullptr;
    gActive = false;
    return Status::unsupported("CUPTI refused activity tracing: " + cuptiError(r));
  }
  std::unique_ptr<CuptiCollector> collector(new CuptiCollector());
  // Without the callbacks (another tool holds CUPTI's only subscriber slot)
  // the activity records are still collected, unlinked to their launches.
  const CUptiResult launches = enableLaunchCallbacks();
  collector->launchesTraced_ = launches == CUPTI_SUCCESS;
  if (!collector->launchesTraced_) collector->launchError_ = cuptiError(launches);
  return collector;
}

CuptiCollector::~CuptiCollector() {
  if (gSubscriber != nullptr) {
    cuptiUnsubscribe(gSubscriber);
    gSubscriber = nullptr;
  }
  cuptiActivityFlushAll(1);
  for (CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
  std::scoped_lock lock(gMutex, gLaunchMutex);
  delete gCompleted;
  gCompleted = nullptr;
  delete gLaunches;
  gLaunches = nullptr;
  gActive = false;
}

std::vector<GpuActivity> CuptiCollector::take() {
  cuptiActivityFlushAll(1);
  std::vector<GpuActivity> out;
  std::lock_guard<std::mutex> lock(gMutex);
  if (gCompleted) out.swap(*gCompleted);
  return out;
}

std::vector<std::string> CuptiCollector::tracedApis() {
  std::vector<std::string> names;
  for (const TracedApi& api : launchApis()) names.emplace_back(api.name);
  return names;
}

std::vector<LaunchCall> CuptiCollector::takeLaunches() {
  std::vector<RawLaunch> raw;
  {
    std::lock_guard<std::mutex> lock(gLaunchMutex);
    if (gLaunches) raw.swap(*gLaunches);
  }
  std::vector<LaunchCall> out;
  out.reserve(raw.size());
  for (const RawLaunch& r : raw) {
    out.push_back({r.correlationId, r.startNs, r.endNs, r.threadId, r.name ? r.name : "cuda"});
  }
  return out;
}

std::vector<ClockPair> CuptiCollector::clockPairs(int count) {
  std::vector<ClockPair> pairs;
  for (int i = 0; i < count; ++i) {
    uint64_t gpu = 0;
    const int64_t before = hostNowNs();
    if (cuptiGetTimestamp(&gpu) != CUPTI_SUCCESS) break;
    const int64_t after = hostNowNs();
    pairs.push_back({gpu, before + (after - before) / 2, after - before});
  }
  return pairs;
}

int64_t CuptiCollector::droppedRecords() const { return gDropped.load(); }

Result<uint32_t> CuptiCollector::streamIdOf(const void* stream) {
  uint32_t id = 0;
  // Not per-thread default streams: the engine's streams are created ones.
  const CUptiResult rc = cuptiGetStreamIdEx(
      nullptr, static_cast<CUstream>(const_cast<void*>(stream)), /*perThreadStream=*/0, &id);
  if (rc != CUPTI_SUCCESS) return Status::internal("cuptiGetStreamIdEx: " + cuptiError(rc));
  return id;
}

}  // namespace bubblescope::tracer
