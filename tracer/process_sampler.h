// ProcessSampler: this process's CPU utilisation and resident memory, read
// from /proc, plus gauges the engine registers (allocator bytes by category).
//
// Contract: sample() is called from one thread (the tracer's sampler);
// gauges are called from that thread and must be thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "trace_model/event.h"

namespace bubblescope::tracer {

class ProcessSampler {
 public:
  explicit ProcessSampler(int32_t rank);

  void addGauge(std::string name, std::function<double()> read);

  // Samples at `nowNs`: "cpu_util" (cores busy since the previous call, 1.0
  // = one core), "rss_bytes", and every gauge.
  std::vector<trace_model::Sample> sample(int64_t nowNs);

 private:
  struct Gauge {
    std::string name;
    std::function<double()> read;
  };
  int32_t rank_;
  int64_t lastCpuNs_ = -1;
  int64_t lastWallNs_ = -1;
  std::vector<Gauge> gauges_;
};

// CPU time (user + system) this process has used, in ns.
int64_t processCpuNs();
// Resident set size of this process in bytes (0 if unknown).
int64_t residentBytes();

}  // namespace bubblescope::tracer
