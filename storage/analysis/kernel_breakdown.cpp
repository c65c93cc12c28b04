#include "storage/analysis/kernel_breakdown.h"

#include <algorithm>

#include "storage/analysis/percentile.h"

namespace bubblescope::analysis {

int64_t KernelBreakdown::totalNs() const {
  int64_t sum = 0;
  for (int64_t ns : nsByType) sum += ns;
  return sum;
}

void KernelBreakdownBuilder::add(std::string_view name, trace_model::KernelType type,
                                 int64_t startNs, int64_t endNs, trace_model::Lane lane) {
  auto it = byName_.find(name);
  if (it == byName_.end()) it = byName_.emplace(std::string(name), Durations{type, {}}).first;
  Durations& d = it->second;
  const int64_t ns = endNs - startNs;
  d.ns.push_back(ns);
  if (ns > d.longestNs) d.longestNs = ns, d.longestStartNs = startNs, d.longestLane = lane;
}

void KernelBreakdownBuilder::merge(KernelBreakdownBuilder&& later) {
  for (auto& [name, d] : later.byName_) {
    auto [it, fresh] = byName_.try_emplace(name, Durations{d.type, {}});
    Durations& into = it->second;
    if (fresh) {
      into = std::move(d);
      continue;
    }
    into.ns.insert(into.ns.end(), d.ns.begin(), d.ns.end());
    if (d.longestNs > into.longestNs) {
      into.longestNs = d.longestNs;
      into.longestStartNs = d.longestStartNs;
      into.longestLane = d.longestLane;
    }
  }
  later.byName_.clear();
}

KernelBreakdown KernelBreakdownBuilder::finish() {
  KernelBreakdown b;
  for (auto& [name, d] : byName_) {
    std::sort(d.ns.begin(), d.ns.end());
    KernelStats s;
    s.name = name;
    s.type = d.type;
    s.count = static_cast<int64_t>(d.ns.size());
    for (int64_t ns : d.ns) s.totalNs += ns;
    s.minNs = d.ns.front();
    s.maxNs = d.ns.back();
    s.p50Ns = percentileOf(d.ns, 50);
    s.p95Ns = percentileOf(d.ns, 95);
    s.longestStartNs = d.longestStartNs;
    s.longestLane = d.longestLane;
    b.nsByType[static_cast<size_t>(d.type)] += s.totalNs;
    b.countByType[static_cast<size_t>(d.type)] += s.count;
    b.kernels.push_back(std::move(s));
    std::vector<int64_t>().swap(d.ns);
  }
  byName_.clear();
  // byName_ was in name order and the sort is stable: ties stay by name.
  std::stable_sort(
      b.kernels.begin(), b.kernels.end(),
      [](const KernelStats& x, const KernelStats& y) { return x.totalNs > y.totalNs; });
  return b;
}

std::vector<const KernelStats*> topKernels(const KernelBreakdown& b, int32_t top) {
  std::vector<const KernelStats*> out;
  for (const KernelStats& k : b.kernels) {
    if (top >= 0 && static_cast<int32_t>(out.size()) >= top) break;
    if (k.type != trace_model::KernelType::kMemory) out.push_back(&k);
  }
  return out;
}

std::map<std::string, KernelSpread, std::less<>> kernelSpreads(
    const std::vector<std::pair<int32_t, const KernelBreakdown*>>& ranks) {
  std::map<std::string, KernelSpread, std::less<>> out;
  std::map<std::string, double, std::less<>> sums;
  for (const auto& [rank, b] : ranks) {
    for (const KernelStats& k : b->kernels) {
      auto [it, fresh] = out.try_emplace(k.name);
      KernelSpread& s = it->second;
      if (fresh || k.totalNs < s.minTotalNs) s.minTotalNs = k.totalNs, s.minRank = rank;
      if (fresh || k.totalNs > s.maxTotalNs) s.maxTotalNs = k.totalNs, s.maxRank = rank;
      ++s.ranks;
      sums[k.name] += static_cast<double>(k.totalNs);
    }
  }
  for (auto& [name, s] : out) s.meanTotalNs = sums[name] / s.ranks;
  return out;
}

}  // namespace bubblescope::analysis
