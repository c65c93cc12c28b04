// LinkClass: which link a parallel dimension's collectives cross, "same_host"
// or "other_host" (docs/prediction.md, "Calibration"): the link class of a
// calibration's alpha-beta fits (calibration.h, LinkFit::link).
//
// A group of dimension dim ("dp", "zero", "tp", "pp", "ep") of a rank is the
// ranks its collectives of that dimension run over (grid.h: tp, pp, dp
// groups; "zero" is the dp group; an ep group is ep neighbouring dp
// coordinates, docs/parallel.md). The group's link is "other_host" when its
// ranks are on more than one host, else "same_host".
// Pure; ranks in Megatron order (grid.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/layout/layout.h"

namespace bubblescope::layout {

inline constexpr const char* kSameHost = "same_host";
inline constexpr const char* kOtherHost = "other_host";
// Not a wire: a group inside one host whose ranks time-share its cores (more
// ranks than cores, core_sharing.h). Fitted from calibrate's shared-cores
// run; predictLayout costs such a group's collectives with it.
inline constexpr const char* kSharedCores = "shared_cores";

// The ranks of `rank`'s group of `dim`, itself included. Empty for an
// unknown dim or a rank outside the world.
std::vector<int32_t> dimGroup(const Layout& layout, int32_t rank, const std::string& dim);

// The link of `rank`'s group of `dim`, with hostOfRank[r] the host of rank r
// (a rank without an entry counts as on its own unknown host: other_host).
std::string linkClass(const Layout& layout, const std::vector<std::string>& hostOfRank,
                      int32_t rank, const std::string& dim);

// The link of `dim` over the whole world: other_host when any group of it
// spans hosts.
std::string worldLinkClass(const Layout& layout, const std::vector<std::string>& hostOfRank,
                           const std::string& dim);

// How many ranks of `rank`'s group of `dim` share its host (>= 1; the whole
// group when every rank is on one host).
int32_t groupRanksOnHost(const Layout& layout, const std::vector<std::string>& hostOfRank,
                         int32_t rank, const std::string& dim);

// The host of each rank as mpirun places a layout's ranks on its hosts
// (`layout.hosts`, "name" or "name:slots"; a name alone is one slot): in
// order, filling each host's slots before the next, starting over at the
// first host when the world is larger than the slots. No hosts (this
// machine, or a hostfile not read here): every rank on "" (one host).
std::vector<std::string> placedHosts(const Layout& layout);

}  // namespace bubblescope::layout
