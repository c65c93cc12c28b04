// CuptiCollector: kernels (concurrent), copies and sets from CUPTI's
// activity API, handed over as GpuActivity records, and the host calls that
// launched them from CUPTI's callback API, as LaunchCall records with the
// same correlation ids. Built only with CUDA.
//
// Why callbacks for the launches, not the activity kinds RUNTIME/DRIVER:
// the callbacks are enabled per function, only for the runtime and driver
// functions that launch a kernel, copy or set (tracedApis(): 192 of CUDA
// 13.0's 1,328), so every other CUDA call (cudaGetDevice, cudaEventQuery,
// NCCL's many driver queries) costs nothing, where the RUNTIME and DRIVER
// activity kinds record every call. The callbacks run on the launching
// thread and read the host clock the spans use, so a launch lies inside its
// forward span exactly, with no fitted map in between. They see NCCL's
// cuLaunchKernelEx (driver API) the same way as the runtime's
// cudaLaunchKernel. Each traced call costs two clock reads and one locked
// append (order of 100 ns). A driver call made inside a traced runtime call,
// if CUPTI reports one, is a second launch event nested in the first; the
// GPU record links to whichever of the two ids CUPTI gave it.
//
// Contract: at most one collector per process (CUPTI's activity callbacks
// are process-wide). take(), takeLaunches() and clockPairs() are
// thread-safe. CUPTI fills buffers on its own threads; take() flushes them
// first, so everything that finished on the GPU before the call is returned.
// The launch callbacks need CUPTI's one subscriber slot: when another tool
// holds it, the collector still records GPU activity, launchesTraced() is
// false and launchError() says why.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "tracer/gpu_activity.h"

namespace bubblescope::tracer {

class CuptiCollector final : public GpuActivitySource {
 public:
  // Fails with one message when there is no GPU or CUPTI refuses.
  static Result<std::unique_ptr<CuptiCollector>> start();
  ~CuptiCollector() override;
  CuptiCollector(const CuptiCollector&) = delete;
  CuptiCollector& operator=(const CuptiCollector&) = delete;

  std::vector<GpuActivity> take() override;
  // Launch calls that returned since the previous call.
  std::vector<LaunchCall> takeLaunches() override;
  bool launchesTraced() const { return launchesTraced_; }
  const std::string& launchError() const { return launchError_; }
  // `count` (CUPTI timestamp, host clock) pairs read back to back, for
  // fitGpuClockMap().
  std::vector<ClockPair> clockPairs(int count) override;
  // CUPTI's id of a cudaStream_t (cuptiGetStreamIdEx), the streamId of the
  // records of the work launched on it.
  Result<uint32_t> streamIdOf(const void* stream) override;
  int64_t droppedRecords() const;
  // CUPTI's names of the functions whose calls are traced (needs no GPU).
  static std::vector<std::string> tracedApis();

 private:
  CuptiCollector() = default;
  bool launchesTraced_ = false;
  std::string launchError_;
};

}  // namespace bubblescope::tracer
