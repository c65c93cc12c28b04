// CuptiCollector: kernels (concurrent), copies and sets from CUPTI's
// activity API, handed over as GpuActivity records. Built only with CUDA.
//
// Contract: at most one collector per process (CUPTI's activity callbacks
// are process-wide). take() and clockPairs() are thread-safe. CUPTI fills
// buffers on its own threads; take() flushes them first, so everything that
// finished on the GPU before the call is returned.
#pragma once

#include <memory>
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
  // `count` (CUPTI timestamp, host clock) pairs read back to back, for
  // fitGpuClockMap().
  std::vector<ClockPair> clockPairs(int count) override;
  int64_t droppedRecords() const;

 private:
  CuptiCollector() = default;
};

}  // namespace bubblescope::tracer
