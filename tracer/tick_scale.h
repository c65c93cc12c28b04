// TickScale: the maths of a tick counter read as nanoseconds (the host
// clock's TSC path, tracer/clock.h), apart from any real counter so tests can
// drive it with fake tick and reference sources.
//
// Contract:
// - A TickScale maps ticks to ns linearly: ns = baseNs + (ticks - baseTicks)
//   × nsPerTick, with nsPerTick held as a 32.32 fixed-point multiplier
//   (rounded to 2^-32 ns per tick: within 0.2 ns a second at 1 GHz). Monotonic in
//   ticks; valid for tick distances up to 2^63 / multiplier (centuries).
// - A TickPair is a tick read bracketed by two reads of the reference
//   (CLOCK_MONOTONIC): the reference at the tick read was `ns`, within
//   ±errorNs (half the bracket).
// - fitTickScale() fits the line through two pairs; retuneTickScale() makes
//   a new scale with the rate of a longer baseline that agrees with the old
//   one at a given tick (no jump, so spans straddling it stay ordered): the
//   deviation from the reference at that tick stays as a constant offset
//   and stops growing with the old rate's error.
#pragma once

#include <cstdint>
#include <functional>

#include "common/result.h"

namespace bubblescope::tracer {

struct TickScale {
  static constexpr int kShift = 32;
  int64_t baseTicks = 0;
  int64_t baseNs = 0;
  uint64_t multiplier = 0;  // ns per tick × 2^kShift

  int64_t toNs(int64_t ticks) const {
    const __int128 scaled = static_cast<__int128>(ticks - baseTicks) * multiplier;
    return baseNs + static_cast<int64_t>(scaled >> kShift);
  }
  double nsPerTick() const { return static_cast<double>(multiplier) / 4294967296.0; }
};

struct TickPair {
  int64_t ticks = 0;
  int64_t ns = 0;       // the reference clock at `ticks`
  int64_t errorNs = 0;  // half the width of the bracket around the tick read
};

// The pair with the narrowest bracket of `tries` reads (ref, ticks, ref).
TickPair readTickPair(const std::function<int64_t()>& ticks,
                      const std::function<int64_t()>& referenceNs, int tries = 16);

// The scale through `first` and `second` (second later in both clocks),
// anchored at `second`. Errors: ticks or reference not increasing, or a rate
// outside [0.01, 100] ns per tick (not a clock counter).
Result<TickScale> fitTickScale(const TickPair& first, const TickPair& second);

// How far `scale` is from the reference at `now`: deviationNs = scale's ns −
// reference ns. Beyond ±now.errorNs it is real, not read noise.
int64_t deviationNs(const TickScale& scale, const TickPair& now);

// A scale equal to `current` at now.ticks with the rate fitted over
// [origin, now] (errors as fitTickScale's).
Result<TickScale> retuneTickScale(const TickScale& current, const TickPair& origin,
                                  const TickPair& now);

}  // namespace bubblescope::tracer
