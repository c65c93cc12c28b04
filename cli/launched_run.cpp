#include "cli/launched_run.h"

namespace bubblescope::cli {

Result<LaunchedRun> LaunchedRun::begin(const std::string& tracePath, const storage::RunInfo& info) {
  BS_ASSIGN_OR_RETURN(auto writer, storage::TraceWriter::open(tracePath));
  BS_ASSIGN_OR_RETURN(const int64_t id, writer->beginRun(info));
  // Rank 0 writes the run from here; this writer only ends it, if need be.
  BS_RETURN_IF_ERROR(writer->detachRun());
  return LaunchedRun(std::move(writer), id,
                     storage::SpaceReserve::make(tracePath + ".reserve", kReserveBytes));
}

bool LaunchedRun::end(storage::RunStatus status, const std::string& message) {
  if (writer_->endDetachedRun(id_, status, message).isOk()) return true;
  if (!reserve_.held()) return false;
  // The disk may be full (the job's writes filled it): the reserve's space
  // makes room for this last write.
  reserve_.release();
  return writer_->endDetachedRun(id_, status, message).isOk();
}

}  // namespace bubblescope::cli
