// ProcessGrid: the pure coordinate math of world = dp × pp × tp.
//
// Rank order is Megatron-LM's: tp varies fastest, then pp, then dp, so a
// tensor-parallel group is tp neighbouring ranks (one node), and
//   rank = (dp * ppSize + pp) * tpSize + tp.
// The MPI communicators are built by the runtime from these member lists
// (groupColor() and coordinate in the dimension are the MPI_Comm_split color
// and key). Value type; cheap to copy; pass by reference, never a global.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace bubblescope::layout {

struct GridCoord {
  int32_t dp = 0;
  int32_t pp = 0;
  int32_t tp = 0;

  bool operator==(const GridCoord&) const = default;
};

enum class GridDim : uint8_t { kDp = 0, kPp = 1, kTp = 2 };

class ProcessGrid {
 public:
  // Every degree must be >= 1.
  static Result<ProcessGrid> create(int32_t dp, int32_t pp, int32_t tp) {
    if (dp < 1 || pp < 1 || tp < 1) {
      return Status::invalidArgument("process grid degrees must be >= 1, got dp " +
                                     std::to_string(dp) + ", pp " + std::to_string(pp) + ", tp " +
                                     std::to_string(tp));
    }
    return ProcessGrid(dp, pp, tp);
  }

  int32_t dpSize() const { return dp_; }
  int32_t ppSize() const { return pp_; }
  int32_t tpSize() const { return tp_; }
  int32_t worldSize() const { return dp_ * pp_ * tp_; }
  int32_t size(GridDim dim) const {
    return dim == GridDim::kDp ? dp_ : dim == GridDim::kPp ? pp_ : tp_;
  }

  // Precondition: every coordinate in range.
  int32_t rankOf(const GridCoord& c) const { return (c.dp * pp_ + c.pp) * tp_ + c.tp; }
  // Precondition: 0 <= rank < worldSize().
  GridCoord coordOf(int32_t rank) const {
    return {rank / (pp_ * tp_), (rank / tp_) % pp_, rank % tp_};
  }
  static int32_t coordIn(const GridCoord& c, GridDim dim) {
    return dim == GridDim::kDp ? c.dp : dim == GridDim::kPp ? c.pp : c.tp;
  }

  // The ranks that share every coordinate of `rank` except `dim`, ordered by
  // their coordinate in `dim` (so group[i] has coordinate i). Includes rank.
  std::vector<int32_t> group(int32_t rank, GridDim dim) const {
    GridCoord c = coordOf(rank);
    std::vector<int32_t> members;
    members.reserve(size(dim));
    for (int32_t i = 0; i < size(dim); ++i) {
      GridCoord m = c;
      (dim == GridDim::kDp ? m.dp : dim == GridDim::kPp ? m.pp : m.tp) = i;
      members.push_back(rankOf(m));
    }
    return members;
  }
  std::vector<int32_t> dpGroup(int32_t rank) const { return group(rank, GridDim::kDp); }
  // ppGroup(rank)[s] is the rank of pipeline stage s: the rank an Op's peer
  // stage names (schedule.h).
  std::vector<int32_t> ppGroup(int32_t rank) const { return group(rank, GridDim::kPp); }
  std::vector<int32_t> tpGroup(int32_t rank) const { return group(rank, GridDim::kTp); }

  // Which group of `dim` the rank belongs to, 0 .. worldSize()/size(dim) - 1:
  // equal for exactly the members of one group (an MPI_Comm_split color).
  int32_t groupColor(int32_t rank, GridDim dim) const {
    const GridCoord c = coordOf(rank);
    switch (dim) {
      case GridDim::kDp:
        return c.pp * tp_ + c.tp;
      case GridDim::kPp:
        return c.dp * tp_ + c.tp;
      case GridDim::kTp:
        return c.dp * pp_ + c.pp;
    }
    return 0;
  }

  // Pipeline neighbours of `rank` (same dp and tp), -1 at the ends.
  int32_t prevStageRank(int32_t rank) const {
    GridCoord c = coordOf(rank);
    if (c.pp == 0) return -1;
    --c.pp;
    return rankOf(c);
  }
  int32_t nextStageRank(int32_t rank) const {
    GridCoord c = coordOf(rank);
    if (c.pp == pp_ - 1) return -1;
    ++c.pp;
    return rankOf(c);
  }

 private:
  ProcessGrid(int32_t dp, int32_t pp, int32_t tp) : dp_(dp), pp_(pp), tp_(tp) {}

  int32_t dp_ = 1, pp_ = 1, tp_ = 1;
};

}  // namespace bubblescope::layout
