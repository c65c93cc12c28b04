#include "storage/analysis/launch_table.h"

#include <algorithm>

namespace bubblescope::analysis {
namespace {

bool byCorrelation(const LaunchCall& a, int64_t c) {
  return a.correlation < c;
}

}  // namespace

void LaunchTable::add(const LaunchCall& call) {
  if (calls_.empty() || calls_.back().correlation < call.correlation) {
    calls_.push_back(call);  // ids grow with time: almost always here
    return;
  }
  auto at = std::lower_bound(calls_.begin(), calls_.end(), call.correlation, byCorrelation);
  if (at != calls_.end() && at->correlation == call.correlation) return;  // the first call
  calls_.insert(at, call);
}

const LaunchCall* LaunchTable::find(int64_t correlation) const {
  auto at = std::lower_bound(calls_.begin(), calls_.end(), correlation, byCorrelation);
  if (at == calls_.end() || at->correlation != correlation) return nullptr;
  return &*at;
}

}  // namespace bubblescope::analysis
