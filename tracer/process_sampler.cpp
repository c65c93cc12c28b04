#include "tracer/process_sampler.h"

#include <time.h>
#include <unistd.h>

#include <fstream>

#include "tracer/clock.h"

namespace bubblescope::tracer {

int64_t processCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

int64_t residentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t sizePages = 0, residentPages = 0;
  if (!(statm >> sizePages >> residentPages)) return 0;
  return residentPages * sysconf(_SC_PAGESIZE);
}

ProcessSampler::ProcessSampler(int32_t rank) : rank_(rank) {}

void ProcessSampler::addGauge(std::string name, std::function<double()> read) {
  gauges_.push_back({std::move(name), std::move(read)});
}

std::vector<trace_model::Sample> ProcessSampler::sample(int64_t nowNs) {
  std::vector<trace_model::Sample> out;
  const int64_t cpu = processCpuNs();
  const int64_t wall = hostNowNs();
  if (lastWallNs_ >= 0 && wall > lastWallNs_) {
    out.push_back(
        {rank_, "cpu_util", nowNs,
         static_cast<double>(cpu - lastCpuNs_) / static_cast<double>(wall - lastWallNs_)});
  }
  lastCpuNs_ = cpu;
  lastWallNs_ = wall;
  out.push_back({rank_, "rss_bytes", nowNs, static_cast<double>(residentBytes())});
  for (const Gauge& g : gauges_) out.push_back({rank_, g.name, nowNs, g.read()});
  return out;
}

}  // namespace bubblescope::tracer
