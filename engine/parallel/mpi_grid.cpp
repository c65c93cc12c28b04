#include "engine/parallel/mpi_grid.h"

#include <algorithm>
#include <string>

namespace bubblescope::engine {

Result<std::unique_ptr<MpiGrid>> MpiGrid::create(MPI_Comm world, int32_t dp, int32_t pp, int32_t tp,
                                                 int32_t ep) {
  BS_ASSIGN_OR_RETURN(layout::ProcessGrid grid, layout::ProcessGrid::create(dp, pp, tp));
  if (ep < 1 || dp % ep != 0) {
    return Status::invalidArgument("ep " + std::to_string(ep) + " must be >= 1 and divide dp " +
                                   std::to_string(dp));
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  if (size != grid.worldSize()) {
    return Status::invalidArgument("world size " + std::to_string(size) + " does not match dp " +
                                   std::to_string(dp) + " x tp " + std::to_string(tp) + " x pp " +
                                   std::to_string(pp) + " = " + std::to_string(grid.worldSize()));
  }
  std::unique_ptr<MpiGrid> g(new MpiGrid(grid, rank));
  using layout::GridDim;
  using trace_model::ParallelDim;
  const layout::GridCoord c = grid.coordOf(rank);
  // Every split is collective over `world`: all ranks run them in this order.
  BS_ASSIGN_OR_RETURN(g->world_, MpiCommunicator::split(world, 0, rank, ParallelDim::kNone));
  BS_ASSIGN_OR_RETURN(g->dp_, MpiCommunicator::split(world, grid.groupColor(rank, GridDim::kDp),
                                                     c.dp, ParallelDim::kDp));
  BS_ASSIGN_OR_RETURN(g->pp_, MpiCommunicator::split(world, grid.groupColor(rank, GridDim::kPp),
                                                     c.pp, ParallelDim::kPp));
  BS_ASSIGN_OR_RETURN(g->tp_, MpiCommunicator::split(world, grid.groupColor(rank, GridDim::kTp),
                                                     c.tp, ParallelDim::kTp));
  if (ep > 1) {  // collective over each dp group
    BS_ASSIGN_OR_RETURN(
        g->ep_, MpiCommunicator::split(g->dp_->comm(), c.dp / ep, c.dp % ep, ParallelDim::kEp));
    BS_ASSIGN_OR_RETURN(g->expertDp_, MpiCommunicator::split(g->dp_->comm(), c.dp % ep, c.dp / ep,
                                                             ParallelDim::kDp));
  }
  return g;
}

NodeSetup nodeSetupFor(const layout::Layout& l) {
  NodeSetup s;
  s.hierarchical = l.allReduce == layout::AllReduceAlgorithm::kHierarchical;
  s.ranksPerNode = l.ranksPerNode;
  s.link = {l.interNodeGbps, l.interNodeLatencyUs};
  return s;
}

Result<std::unique_ptr<MpiGrid>> MpiGrid::create(MPI_Comm world, const layout::Layout& layout) {
  BS_ASSIGN_OR_RETURN(auto g, create(world, layout.dp, layout.pp, layout.tp, layout.ep));
  const NodeSetup nodes = nodeSetupFor(layout);
  if (nodes.needsNodes()) BS_RETURN_IF_ERROR(g->splitDpIntoNodes(world, nodes));
  return g;
}

Status MpiGrid::splitDpIntoNodes(MPI_Comm world, const NodeSetup& setup) {
  const int32_t k = setup.ranksPerNode;
  const int64_t group = int64_t{grid_.tpSize()} * grid_.ppSize();
  if (k < 0 || (k > 0 && (grid_.worldSize() % k != 0 || k % group != 0))) {
    return Status::invalidArgument(
        "ranks per node " + std::to_string(k) + " must divide the world's " +
        std::to_string(grid_.worldSize()) +
        " ranks and be a multiple of tp x pp = " + std::to_string(group));
  }
  if (setup.link.paced() && k == 0) {
    return Status::invalidArgument(
        "an emulated inter-node link needs emulated nodes (ranks per node)");
  }
  int32_t nodeId = rank_ / std::max(k, 1);
  if (k == 0) {
    BS_ASSIGN_OR_RETURN(nodeId, sharedMemoryNodeId(world));
  }
  BS_ASSIGN_OR_RETURN(nodes_, splitByNodeId(dp_->comm(), nodeId, trace_model::ParallelDim::kDp));
  hierarchical_ = setup.hierarchical;
  if (setup.link.paced()) {  // the all-reduce whose messages cross nodes
    if (hierarchical_) {
      std::vector<int32_t> oneRankPerNode(nodes_.interNode->size());
      for (size_t i = 0; i < oneRankPerNode.size(); ++i)
        oneRankPerNode[i] = static_cast<int32_t>(i);
      nodes_.interNode->emulateInterNodeLink(std::move(oneRankPerNode), setup.link);
    } else {
      dp_->emulateInterNodeLink(nodes_.nodeOfGroupRank, setup.link);
    }
  }
  return Status::ok();
}

void MpiGrid::setRecorder(tracer::Recorder* recorder) {
  for (auto* c : {world_.get(), dp_.get(), pp_.get(), tp_.get(), ep_.get(), expertDp_.get(),
                  nodes_.intraNode.get(), nodes_.interNode.get()}) {
    if (c != nullptr) c->setRecorder(recorder);
  }
}

}  // namespace bubblescope::engine
