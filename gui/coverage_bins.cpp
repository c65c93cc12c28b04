#include "gui/coverage_bins.h"

#include <algorithm>
#include <cmath>

#include "gui/all_to_all_lane.h"
#include "trace_model/kernel_category.h"

namespace bubblescope::gui {

void addCoverage(std::span<float> out, double t0Ns, double columnNs, int64_t startNs,
                 int64_t endNs) {
  if (out.empty() || endNs <= startNs) return;
  const double s = (static_cast<double>(startNs) - t0Ns) / columnNs;
  const double e = (static_cast<double>(endNs) - t0Ns) / columnNs;
  const double n = static_cast<double>(out.size());
  if (e <= 0.0 || s >= n) return;
  const double cs = std::max(s, 0.0);
  const double ce = std::min(e, n);
  const auto first = static_cast<int64_t>(std::floor(cs));
  const auto last = std::min(static_cast<int64_t>(std::ceil(ce)) - 1, int64_t(out.size()) - 1);
  for (int64_t c = first; c <= last; ++c) {
    const double lo = std::max(cs, static_cast<double>(c));
    const double hi = std::min(ce, static_cast<double>(c + 1));
    if (hi > lo) out[c] += static_cast<float>(hi - lo);
  }
}

CoverageOverview::CoverageOverview(int32_t bins) : bins_(std::max(2, bins + (bins & 1))) {}

void CoverageOverview::reset(int64_t originNs, int64_t binNs) {
  originNs_ = originNs;
  binNs_ = std::max<int64_t>(1, binNs);
  events_ = 0;
  coveredNs_.clear();
  last_.series = nullptr;
}

void CoverageOverview::doubleBinWidth() {
  for (auto& [key, kinds] : coveredNs_) {
    for (auto& [kind, series] : kinds) {
      std::vector<float>& bins = series.coveredNs;
      for (int32_t i = 0; i < bins_ / 2; ++i) bins[i] = bins[2 * i] + bins[2 * i + 1];
      std::fill(bins.begin() + bins_ / 2, bins.end(), 0.0f);
      series.dirty = true;
    }
  }
  binNs_ *= 2;
}

int32_t CoverageOverview::codeOf(const Series& s) {
  return static_cast<int32_t>(s.kind) * 64 + (s.kernelCategory + 1);
}

CoverageOverview::Series CoverageOverview::seriesOfCode(int32_t code) {
  return {static_cast<trace_model::EventKind>(code / 64), static_cast<int8_t>(code % 64 - 1)};
}

void CoverageOverview::add(const trace_model::Event& event) {
  Series series{event.kind, -1};
  if (trace_model::isGpuStreamLane(event.lane)) {
    series.kernelCategory =
        static_cast<int8_t>(trace_model::kernelCategoryOf(event.kind, event.name));
  }
  add({event.rank, timelineLaneOf(event)}, series, event.startNs, event.endNs);
}

void CoverageOverview::add(const RowKey& key, const Series& s, int64_t startNs, int64_t endNs) {
  ++events_;
  const int64_t start = std::max(startNs, originNs_);
  const int64_t end = endNs;
  if (end <= start) return;
  while (end > originNs_ + binNs_ * bins_) doubleBinWidth();
  const int32_t code = codeOf(s);
  if (last_.series == nullptr || key != last_.key || code != last_.code) {
    last_.series = &coveredNs_[key][code];
    last_.key = key;
    last_.code = code;
  }
  Bins& series = *last_.series;
  series.dirty = true;
  std::vector<float>& bins = series.coveredNs;
  if (bins.empty()) bins.assign(bins_, 0.0f);
  int64_t b = (start - originNs_) / binNs_;
  for (int64_t t = start; t < end && b < bins_; ++b) {
    const int64_t binEnd = originNs_ + (b + 1) * binNs_;
    const int64_t upTo = std::min(end, binEnd);
    bins[b] += static_cast<float>(upTo - t);
    t = upTo;
  }
}

double CoverageOverview::cumulativeNs(const Bins& s, double tNs) const {
  const double x = (tNs - static_cast<double>(originNs_)) / static_cast<double>(binNs_);
  if (x <= 0.0) return 0.0;
  if (x >= bins_) return s.prefixNs[bins_];
  const auto b = static_cast<int64_t>(x);
  // A bin's coverage is spread evenly over the bin.
  return s.prefixNs[b] + s.coveredNs[b] * (x - static_cast<double>(b));
}

std::vector<float> CoverageOverview::resample(const RowKey& key, const Series& s, double t0Ns,
                                              double t1Ns, int columns) const {
  auto row = coveredNs_.find(key);
  if (row == coveredNs_.end()) return {};
  auto it = row->second.find(codeOf(s));
  if (it == row->second.end()) return {};
  const Bins& series = it->second;
  if (series.dirty) {
    series.prefixNs.assign(bins_ + 1, 0.0);
    for (int32_t b = 0; b < bins_; ++b) {
      series.prefixNs[b + 1] = series.prefixNs[b] + series.coveredNs[b];
    }
    series.dirty = false;
  }
  std::vector<float> out(std::max(columns, 0), 0.0f);
  if (columns <= 0 || t1Ns <= t0Ns) return out;
  const double columnNs = (t1Ns - t0Ns) / columns;
  double before = cumulativeNs(series, t0Ns);
  for (int c = 0; c < columns; ++c) {
    const double after = cumulativeNs(series, t0Ns + (c + 1) * columnNs);
    out[c] = static_cast<float>(std::clamp((after - before) / columnNs, 0.0, 1.0));
    before = after;
  }
  return out;
}

std::vector<CoverageOverview::Series> CoverageOverview::seriesOf(const RowKey& key) const {
  std::vector<Series> series;
  auto row = coveredNs_.find(key);
  if (row == coveredNs_.end()) return series;
  for (const auto& [code, bins] : row->second) series.push_back(seriesOfCode(code));
  return series;
}

std::vector<trace_model::EventKind> CoverageOverview::kindsOf(const RowKey& key) const {
  std::vector<trace_model::EventKind> kinds;
  for (const Series& s : seriesOf(key)) {
    if (kinds.empty() || kinds.back() != s.kind) kinds.push_back(s.kind);
  }
  return kinds;
}

}  // namespace bubblescope::gui
