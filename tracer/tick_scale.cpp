#include "tracer/tick_scale.h"

#include <cmath>
#include <string>

namespace bubblescope::tracer {

TickPair readTickPair(const std::function<int64_t()>& ticks,
                      const std::function<int64_t()>& referenceNs, int tries) {
  TickPair best;
  int64_t bestWidth = -1;
  for (int i = 0; i < tries; ++i) {
    const int64_t before = referenceNs();
    const int64_t t = ticks();
    const int64_t after = referenceNs();
    const int64_t width = after - before;
    if (bestWidth < 0 || width < bestWidth) {
      bestWidth = width;
      best = {t, before + width / 2, (width + 1) / 2};
    }
  }
  return best;
}

namespace {

// ns per tick × 2^32 over [first, second], or an error naming what is wrong.
Result<uint64_t> fitMultiplier(const TickPair& first, const TickPair& second) {
  const int64_t dTicks = second.ticks - first.ticks;
  const int64_t dNs = second.ns - first.ns;
  if (dTicks <= 0 || dNs <= 0) {
    return Status::invalidArgument("tick counter calibration: " + std::to_string(dTicks) +
                                   " ticks in " + std::to_string(dNs) + " ns (both must increase)");
  }
  const long double nsPerTick = static_cast<long double>(dNs) / static_cast<long double>(dTicks);
  if (nsPerTick < 0.01L || nsPerTick > 100.0L) {
    return Status::invalidArgument(
        "tick counter calibration: " + std::to_string(static_cast<double>(nsPerTick)) +
        " ns per tick is not a clock counter's rate");
  }
  return static_cast<uint64_t>(std::llround(nsPerTick * 4294967296.0L));
}

}  // namespace

Result<TickScale> fitTickScale(const TickPair& first, const TickPair& second) {
  BS_ASSIGN_OR_RETURN(const uint64_t multiplier, fitMultiplier(first, second));
  return TickScale{second.ticks, second.ns, multiplier};
}

int64_t deviationNs(const TickScale& scale, const TickPair& now) {
  return scale.toNs(now.ticks) - now.ns;
}

Result<TickScale> retuneTickScale(const TickScale& current, const TickPair& origin,
                                  const TickPair& now) {
  BS_ASSIGN_OR_RETURN(const uint64_t multiplier, fitMultiplier(origin, now));
  return TickScale{now.ticks, current.toNs(now.ticks), multiplier};
}

}  // namespace bubblescope::tracer
