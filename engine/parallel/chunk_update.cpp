#include "engine/parallel/chunk_update.h"

#include <cmath>

namespace bubblescope::engine {
namespace {

CommTrace scalarTrace(const char* name, int64_t step) {
  CommTrace t;
  t.name = name;
  t.step = static_cast<int32_t>(step);
  return t;
}

}  // namespace

Status finishStep(const TrainerOptions& options, int64_t step, int32_t stage,
                  const std::vector<DataParallel*>& chunks, const StepGroups& groups,
                  tracer::Recorder* recorder, double lossSum, StepResult& result) {
  const bool countReplicated = groups.tp == nullptr || groups.tp->rank() == 0;
  double squares = 0.0;
  for (DataParallel* chunk : chunks) {
    BS_ASSIGN_OR_RETURN(const double chunkSquares, chunk->gradSquaredSum(countReplicated));
    squares += chunkSquares;
  }
  const CommTrace normTrace = scalarTrace("grad_norm", step);
  if (groups.pp != nullptr) {
    BS_RETURN_IF_ERROR(groups.pp->allReduce(std::span<double>(&squares, 1), normTrace));
  }
  if (groups.tp != nullptr && groups.tp->size() > 1) {
    BS_RETURN_IF_ERROR(groups.tp->allReduce(std::span<double>(&squares, 1), normTrace));
  }
  result.gradNorm = std::sqrt(squares);
  result.lr = options.schedule.at(step);
  {
    const TraceContext trace{recorder, static_cast<int32_t>(step), -1, stage, -1};
    tracer::ScopedSpan span(recorder, trace.span(tracer::EventKind::kOptimizer, "optimizer"));
    const bool clip = options.gradClip > 0.0 && result.gradNorm > options.gradClip;
    for (DataParallel* chunk : chunks) {
      if (clip) {
        chunk->scaleGradients(static_cast<float>(options.gradClip / (result.gradNorm + 1e-6)));
      }
      chunk->applyOptimizer(result.lr);
    }
  }
  for (DataParallel* chunk : chunks) BS_RETURN_IF_ERROR(chunk->gatherUpdatedParameters());
  const CommTrace lossTrace = scalarTrace("loss", step);
  if (groups.pp != nullptr) {
    BS_RETURN_IF_ERROR(groups.pp->allReduce(std::span<double>(&lossSum, 1), lossTrace));
  }
  const int32_t n = groups.dp.size();
  if (n > 1) BS_RETURN_IF_ERROR(groups.dp.allReduce(std::span<double>(&lossSum, 1), lossTrace));
  BS_ASSIGN_OR_RETURN(result.loss, meanStepLoss(lossSum, options.microBatches, n, step));
  return Status::ok();
}

Result<NamedValues> chunkParameters(const std::vector<DataParallel*>& chunks, Communicator* tp) {
  NamedValues out;
  std::vector<Parameter*> params;
  for (DataParallel* chunk : chunks) {
    std::vector<float> flat;
    BS_RETURN_IF_ERROR(chunk->gatherParameters(flat));
    for (const FlatEntry& e : chunk->flat().entries()) {
      out.emplace_back(e.param->name,
                       std::vector<float>(flat.begin() + e.range.lo, flat.begin() + e.range.hi));
      params.push_back(e.param);
    }
  }
  if (tp != nullptr) BS_RETURN_IF_ERROR(assembleTpShards(params, out, *tp));
  return out;
}

}  // namespace bubblescope::engine
