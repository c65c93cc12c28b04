#include "engine/parallel/mpi_grid.h"

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

void MpiGrid::setRecorder(tracer::Recorder* recorder) {
  for (auto* c : {world_.get(), dp_.get(), pp_.get(), tp_.get(), ep_.get(), expertDp_.get()}) {
    if (c != nullptr) c->setRecorder(recorder);
  }
}

}  // namespace bubblescope::engine
