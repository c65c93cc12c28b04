#include "tracer/clock.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

#ifdef BUBBLESCOPE_HAS_TSC
#include <cpuid.h>
#endif

namespace bubblescope::tracer {
namespace detail {
std::atomic<const TickScale*> tscScale{nullptr};
}  // namespace detail

namespace {

// Every scale ever published, in order; a slot is written once, before it is
// published, so a reader holding an older one never sees it change. Resets
// and retunes (the baseline doubles each time) cannot fill it in practice;
// when they do, the last scale stays.
constexpr int kSlots = 64;

struct State {
  std::mutex mutex;  // the writers: the choice, retunes
  HostClockInfo info;
  TickScale slots[kSlots];
  int used = 0;
  TickPair origin;           // the first calibration read
  int64_t fittedOverNs = 0;  // the baseline of the current scale's rate
  ClockCheck last;
};

State& state() {
  static State s;
  return s;
}

bool wantsMonotonic() {
  const char* env = std::getenv("BUBBLESCOPE_CLOCK");
  return env != nullptr && std::strcmp(env, "monotonic") == 0;
}

bool procCpuinfoSaysStableTsc() {
  std::ifstream in("/proc/cpuinfo");
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  return cpuinfoSaysStableTsc(text.str());
}

void publish(State& s, const TickScale& scale) {
  if (s.used == kSlots) return;
  s.slots[s.used] = scale;
  detail::tscScale.store(&s.slots[s.used], std::memory_order_release);
  ++s.used;
}

#ifdef BUBBLESCOPE_HAS_TSC
TickPair readPair() {
  return readTickPair(detail::readTsc, monotonicNowNs);
}
#endif

// Chooses the source and, for the TSC, calibrates it. Once per process.
void choose() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.info = {ClockSource::kMonotonic, "no TSC (not x86-64)", 0.0};
#ifdef BUBBLESCOPE_HAS_TSC
  if (wantsMonotonic()) {
    s.info.why = "BUBBLESCOPE_CLOCK=monotonic";
    return;
  }
  if (!cpuidSaysInvariantTsc() || !procCpuinfoSaysStableTsc()) {
    s.info.why = "no invariant TSC";
    return;
  }
  s.origin = readPair();
  const timespec pause{0, kCalibrationNs};
  nanosleep(&pause, nullptr);
  const TickPair second = readPair();
  auto scale = fitTickScale(s.origin, second);
  if (!scale.isOk()) {
    s.info.why = "TSC calibration failed";
    return;
  }
  s.info = {ClockSource::kTsc, "invariant TSC", 1.0 / scale->nsPerTick()};
  s.fittedOverNs = second.ns - s.origin.ns;
  publish(s, *scale);
#endif
}

void chooseOnce() {
  static std::once_flag once;
  std::call_once(once, choose);
}

}  // namespace

namespace detail {
int64_t slowNowNs() {
  chooseOnce();
#ifdef BUBBLESCOPE_HAS_TSC
  const TickScale* scale = tscScale.load(std::memory_order_acquire);
  if (scale != nullptr) return scale->toNs(readTsc());
#endif
  return monotonicNowNs();
}
}  // namespace detail

HostClockInfo hostClockInfo() {
  chooseOnce();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.info;
}

const char* clockSourceName(ClockSource source) {
  return source == ClockSource::kTsc ? "tsc" : "clock_gettime";
}

ClockCheck recheckHostClock() {
  chooseOnce();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
#ifdef BUBBLESCOPE_HAS_TSC
  const TickScale* current = detail::tscScale.load(std::memory_order_acquire);
  if (current == nullptr) return s.last;  // CLOCK_MONOTONIC itself: no deviation
  const TickPair now = readPair();
  ClockCheck& c = s.last;
  c.deviationNs = deviationNs(*current, now);
  c.errorNs = now.errorNs;
  const int64_t baseline = now.ns - s.origin.ns;
  if (c.deviationNs > kResetNs || c.deviationNs < -kResetNs) {
    // The counter jumped (a suspended VM, a migrated one): the baseline
    // spans the jump, so keep the rate, re-anchor here and fit anew from here.
    publish(s, TickScale{now.ticks, now.ns, current->multiplier});
    ++c.resets;
    s.origin = now;
    s.fittedOverNs = 0;
  } else if (baseline >= 2 * s.fittedOverNs) {
    auto retuned = retuneTickScale(*current, s.origin, now);
    if (retuned.isOk()) {
      publish(s, *retuned);
      s.fittedOverNs = baseline;
      ++c.retunes;
    }
  }
  c.sinceCalibrationNs = s.fittedOverNs;
  return c;
#else
  return s.last;
#endif
}

bool cpuidSaysInvariantTsc() {
#ifdef BUBBLESCOPE_HAS_TSC
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0x80000000u, nullptr) < 0x80000007u) return false;
  __cpuid(0x80000007u, eax, ebx, ecx, edx);
  return (edx & (1u << 8)) != 0;
#else
  return false;
#endif
}

bool cpuinfoSaysStableTsc(std::string_view text) {
  auto hasFlag = [](std::string_view flags, std::string_view flag) {
    size_t at = 0;
    while ((at = flags.find(flag, at)) != std::string_view::npos) {
      const size_t end = at + flag.size();
      const bool startsWord = at == 0 || flags[at - 1] == ' ' || flags[at - 1] == '\t';
      const bool endsWord = end == flags.size() || flags[end] == ' ' || flags[end] == '\n';
      if (startsWord && endsWord) return true;
      at = end;
    }
    return false;
  };
  size_t line = 0;
  while (line < text.size()) {
    size_t end = text.find('\n', line);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view l = text.substr(line, end - line);
    if (l.substr(0, 5) == "flags") {
      const size_t colon = l.find(':');
      const std::string_view flags = colon == std::string_view::npos ? l : l.substr(colon + 1);
      return hasFlag(flags, "constant_tsc") && hasFlag(flags, "nonstop_tsc");
    }
    line = end + 1;
  }
  return false;
}

}  // namespace bubblescope::tracer
