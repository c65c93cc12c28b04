// Host clock of the tracer. One name per clock: HostNs values come from the
// monotonic clock of this host and are only comparable on one host until the
// clock alignment maps them onto rank 0's timeline.
#pragma once

#include <cstdint>
#include <time.h>

namespace bubblescope::tracer {

// Monotonic host time in nanoseconds (CLOCK_MONOTONIC). Thread-safe.
inline int64_t hostNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

}  // namespace bubblescope::tracer
