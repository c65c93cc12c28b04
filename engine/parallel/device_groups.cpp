#include "engine/parallel/device_groups.h"

namespace bubblescope::engine {
namespace {

// A duplicate of `group`'s MPI communicator (same ranks, same order, same
// dimension, the same emulated link) for the factory to own.
Result<std::unique_ptr<Communicator>> deviceGroupOf(const MpiCommunicator& group,
                                                    bool pointToPoint,
                                                    const DeviceCommFactory& make) {
  BS_ASSIGN_OR_RETURN(auto copy,
                      MpiCommunicator::split(group.comm(), 0, group.rank(), group.dim()));
  const bool paced = group.pacer() != nullptr;
  if (paced) copy->emulateInterNodeLink(group.nodeOfGroupRank(), group.pacer()->link());
  BS_ASSIGN_OR_RETURN(auto made, make(std::move(copy), pointToPoint, /*hostStaged=*/paced));
  if (made == nullptr || made->size() != group.size() || made->rank() != group.rank() ||
      made->dim() != group.dim()) {
    return Status::internal("the device communicator of a " +
                            std::string(trace_model::toString(group.dim())) +
                            " group does not match its group");
  }
  return made;
}

}  // namespace

Result<std::unique_ptr<DeviceGroups>> DeviceGroups::create(MpiGrid& grid, bool pipeline,
                                                           const DeviceCommFactory& make) {
  std::unique_ptr<DeviceGroups> g(new DeviceGroups());
  BS_ASSIGN_OR_RETURN(g->dp_, deviceGroupOf(grid.dp(), false, make));
  BS_ASSIGN_OR_RETURN(g->tp_, deviceGroupOf(grid.tp(), false, make));
  if (pipeline) {
    BS_ASSIGN_OR_RETURN(g->pp_, deviceGroupOf(grid.pp(), true, make));
  }
  if (grid.dpIntraNode() != nullptr && grid.dpInterNode() != nullptr) {  // hierarchical
    BS_ASSIGN_OR_RETURN(g->intra_, deviceGroupOf(*grid.dpIntraNode(), false, make));
    BS_ASSIGN_OR_RETURN(g->inter_, deviceGroupOf(*grid.dpInterNode(), false, make));
  }
  if (grid.expertDp() != nullptr) {  // expert parallelism
    BS_ASSIGN_OR_RETURN(g->expertDp_, deviceGroupOf(*grid.expertDp(), false, make));
  }
  return g;
}

std::vector<const Communicator*> DeviceGroups::all() const {
  std::vector<const Communicator*> out;
  for (const auto* c : {&dp_, &tp_, &pp_, &intra_, &inter_, &expertDp_}) {
    if (*c != nullptr) out.push_back(c->get());
  }
  return out;
}

}  // namespace bubblescope::engine
