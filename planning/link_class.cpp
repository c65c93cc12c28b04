#include "planning/link_class.h"

#include <algorithm>
#include <cstdlib>

#include "engine/layout/grid.h"

namespace bubblescope::layout {

std::vector<int32_t> dimGroup(const Layout& l, int32_t rank, const std::string& dim) {
  auto grid = ProcessGrid::create(l.dp, l.pp, l.tp);
  if (!grid.isOk() || rank < 0 || rank >= grid->worldSize()) return {};
  if (dim == "tp") return grid->tpGroup(rank);
  if (dim == "pp") return grid->ppGroup(rank);
  if (dim == "dp" || dim == "zero") return grid->dpGroup(rank);
  if (dim == "ep") {  // ep neighbouring dp coordinates: ⌊d/ep⌋·ep .. ⌊d/ep⌋·ep + ep − 1
    const int32_t ep = l.ep > 0 ? l.ep : 1;
    const int32_t first = grid->coordOf(rank).dp / ep * ep;
    const std::vector<int32_t> dp = grid->dpGroup(rank);
    std::vector<int32_t> group;
    for (int32_t d = first; d < first + ep && d < static_cast<int32_t>(dp.size()); ++d) {
      group.push_back(dp[d]);
    }
    return group;
  }
  return {};
}

std::string linkClass(const Layout& l, const std::vector<std::string>& hostOfRank, int32_t rank,
                      const std::string& dim) {
  const std::vector<int32_t> group = dimGroup(l, rank, dim);
  const auto hostOf = [&](int32_t r) -> const std::string* {
    return r >= 0 && r < static_cast<int32_t>(hostOfRank.size()) ? &hostOfRank[r] : nullptr;
  };
  for (int32_t r : group) {
    const std::string* mine = hostOf(rank);
    const std::string* theirs = hostOf(r);
    if (mine == nullptr || theirs == nullptr || *mine != *theirs) return kOtherHost;
  }
  return kSameHost;
}

std::string worldLinkClass(const Layout& l, const std::vector<std::string>& hostOfRank,
                           const std::string& dim) {
  for (int64_t r = 0; r < l.worldSize(); ++r) {
    if (linkClass(l, hostOfRank, static_cast<int32_t>(r), dim) == kOtherHost) return kOtherHost;
  }
  return kSameHost;
}

int32_t groupRanksOnHost(const Layout& l, const std::vector<std::string>& hostOfRank, int32_t rank,
                         const std::string& dim) {
  const auto known = [&](int32_t r) {
    return r >= 0 && r < static_cast<int32_t>(hostOfRank.size());
  };
  int32_t n = 0;
  for (int32_t r : dimGroup(l, rank, dim)) {
    if (r == rank || (known(r) && known(rank) && hostOfRank[r] == hostOfRank[rank])) ++n;
  }
  return std::max(1, n);
}

std::vector<std::string> placedHosts(const Layout& l) {
  const auto world = static_cast<size_t>(l.worldSize());
  if (l.hosts.empty()) return std::vector<std::string>(world, "");
  std::vector<std::pair<std::string, int64_t>> slots;
  for (const std::string& h : l.hosts) {
    const size_t colon = h.rfind(':');
    int64_t n = 1;
    if (colon != std::string::npos) n = std::max<int64_t>(1, std::atoll(h.c_str() + colon + 1));
    slots.emplace_back(colon == std::string::npos ? h : h.substr(0, colon), n);
  }
  std::vector<std::string> out;
  while (out.size() < world) {
    for (const auto& [name, n] : slots) {
      for (int64_t i = 0; i < n && out.size() < world; ++i) out.push_back(name);
    }
  }
  return out;
}

}  // namespace bubblescope::layout
