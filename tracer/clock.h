// Host clock of the tracer. One name per clock: HostNs values are
// nanoseconds of this host's monotonic time and are only comparable on one
// host until the clock alignment maps them onto rank 0's timeline.
//
// Source: on x86-64 with an invariant TSC (cpuid 0x80000007 EDX bit 8, and
// the kernel's constant_tsc and nonstop_tsc flags in /proc/cpuinfo) a read
// is one rdtsc scaled to ns (tracer/tick_scale.h), calibrated against
// CLOCK_MONOTONIC over kCalibrationNs on the first read in the process and
// re-checked by recheckHostClock(); elsewhere, or with the environment
// variable BUBBLESCOPE_CLOCK=monotonic, it is clock_gettime(CLOCK_MONOTONIC).
// Either way the values are CLOCK_MONOTONIC's nanoseconds, to within the
// deviation recheckHostClock() reports (docs/tracer.md states the bound).
//
// Contract: hostNowNs() is thread-safe and never decreases on one thread.
// The first call in a process takes about kCalibrationNs.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>
#include <string_view>

#include "tracer/tick_scale.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#define BUBBLESCOPE_HAS_TSC 1
#endif

namespace bubblescope::tracer {

constexpr int64_t kCalibrationNs = 2'000'000;

// CPU time of the calling thread in nanoseconds (CLOCK_THREAD_CPUTIME_ID):
// what a span's cpuNs is measured with. Thread-safe.
inline int64_t threadCpuNowNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// CLOCK_MONOTONIC in nanoseconds: the reference. Thread-safe.
inline int64_t monotonicNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

namespace detail {
// The TSC's current scale: null until the first read chose the source, and
// for good on the CLOCK_MONOTONIC path. A published scale is never
// modified (a retune publishes a new one).
extern std::atomic<const TickScale*> tscScale;
// The first read (chooses and calibrates), and every read on the fallback.
int64_t slowNowNs();
#ifdef BUBBLESCOPE_HAS_TSC
inline int64_t readTsc() {
  return static_cast<int64_t>(__rdtsc());
}
#endif
}  // namespace detail

// Monotonic host time in nanoseconds. Thread-safe.
inline int64_t hostNowNs() {
#ifdef BUBBLESCOPE_HAS_TSC
  const TickScale* scale = detail::tscScale.load(std::memory_order_acquire);
  if (scale != nullptr) [[likely]]
    return scale->toNs(detail::readTsc());
#endif
  return detail::slowNowNs();
}

enum class ClockSource { kTsc, kMonotonic };

struct HostClockInfo {
  ClockSource source = ClockSource::kMonotonic;
  const char* why = "";     // why this source ("invariant TSC", "no invariant TSC", ...)
  double ticksPerNs = 0.0;  // the TSC's rate as calibrated (GHz); 0 on the fallback
};
// The chosen source (chooses it if no read has yet).
HostClockInfo hostClockInfo();
const char* clockSourceName(ClockSource source);  // "tsc", "clock_gettime"

// One comparison of the host clock with CLOCK_MONOTONIC.
struct ClockCheck {
  int64_t deviationNs = 0;         // host clock − CLOCK_MONOTONIC, before any retune
  int64_t errorNs = 0;             // read noise of that figure (half a bracket)
  int64_t sinceCalibrationNs = 0;  // the baseline the rate is now fitted over
  int32_t retunes = 0;             // rate refits so far (each keeps time continuous)
  int32_t resets = 0;              // re-anchorings after a deviation over kResetNs (a jump)
};
constexpr int64_t kResetNs = 1'000'000;
// Measures the deviation now. On the TSC path, when the baseline since the
// first calibration read has doubled since the last fit, refits the rate
// over it, continuous at this instant (the deviation stays as an offset and
// stops growing); beyond kResetNs it re-anchors on CLOCK_MONOTONIC instead.
// Thread-safe; a few microseconds. The tracer's shipping thread calls it
// every shipping interval.
ClockCheck recheckHostClock();

// The pieces of the source decision, for tests.
bool cpuidSaysInvariantTsc();                      // cpuid 0x80000007 EDX bit 8
bool cpuinfoSaysStableTsc(std::string_view text);  // a flags line with constant_tsc and nonstop_tsc

}  // namespace bubblescope::tracer
