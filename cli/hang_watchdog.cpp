#include "cli/hang_watchdog.h"

#include <tuple>

#include "cli/heartbeat.h"

namespace bubblescope::cli {

HangWatchdog::HangWatchdog(int worldSize, int64_t timeoutMs, bool watchCollector)
    : timeoutMs_(timeoutMs),
      ranks_(static_cast<size_t>(worldSize > 0 ? worldSize : 0)),
      watchCollector_(watchCollector) {}

bool HangWatchdog::scan(const std::string& line, int64_t nowMs) {
  const auto beat = parseHeartbeat(line);
  if (!beat) return false;
  const int world = static_cast<int>(ranks_.size());
  const bool fromCollector = watchCollector_ && beat->rank == world;
  if (beat->rank < 0 || (beat->rank >= world && !fromCollector)) return true;
  if (!watching_) {
    watching_ = true;
    for (RankState& r : ranks_) r.progressMs = r.heardMs = nowMs;
    collector_.progressMs = collector_.heardMs = nowMs;
  }
  RankState& r = fromCollector ? collector_ : ranks_[static_cast<size_t>(beat->rank)];
  r.heardMs = nowMs;
  if (beat->step != r.step) {
    r.step = beat->step;
    r.progressMs = nowMs;
  }
  return true;
}

std::optional<HangWatchdog::Hang> HangWatchdog::check(int64_t nowMs) const {
  if (!watching_ || timeoutMs_ <= 0) return std::nullopt;
  if (auto rank = checkRanks(nowMs)) return rank;
  if (watchCollector_ && nowMs - collector_.heardMs >= timeoutMs_) {
    return Hang{static_cast<int>(ranks_.size()), nowMs - collector_.heardMs, -1, true};
  }
  return std::nullopt;
}

std::optional<HangWatchdog::Hang> HangWatchdog::checkRanks(int64_t nowMs) const {
  auto stalledMs = [&](size_t i) { return nowMs - ranks_[i].progressMs; };
  size_t longest = 0;
  for (size_t i = 1; i < ranks_.size(); ++i) {
    if (stalledMs(i) > stalledMs(longest)) longest = i;
  }
  if (ranks_.empty() || stalledMs(longest) < timeoutMs_) return std::nullopt;
  // The culprit: silent longest, then the lowest step, then the lowest id.
  size_t worst = 0;
  auto key = [&](size_t i) {
    const RankState& r = ranks_[i];
    const bool silent = nowMs - r.heardMs >= 4 * kHeartbeatMs;
    return std::make_tuple(!silent, silent ? r.heardMs : 0, r.step, i);
  };
  for (size_t i = 1; i < ranks_.size(); ++i) {
    if (key(i) < key(worst)) worst = i;
  }
  // Progress is seen a heartbeat at a time, so the culprit's last step may
  // have been seen up to a heartbeat after a waiting peer's: it is named once
  // it has itself gone the timeout without progress. Should it keep
  // progressing while another rank stays stalled for twice the timeout, the
  // rank stalled longest is named instead.
  if (stalledMs(worst) < timeoutMs_) {
    if (stalledMs(longest) < 2 * timeoutMs_) return std::nullopt;
    worst = longest;
  }
  return Hang{static_cast<int>(worst), stalledMs(worst), ranks_[worst].step};
}

std::string lastProgressText(const std::string& span, int64_t lastStep) {
  if (!span.empty()) return span;
  if (lastStep >= 0) return "after step " + std::to_string(lastStep);
  return "none yet (it reported no completed step)";
}

}  // namespace bubblescope::cli
