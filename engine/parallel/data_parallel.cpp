#include "engine/parallel/data_parallel.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "engine/parallel/hierarchical_all_reduce.h"
#include "engine/parallel/scalar_all_reduce.h"

namespace bubblescope::engine {
namespace {

std::span<float> slice(Tensor& t, int64_t offset, int64_t size) {
  return {t.data() + offset, static_cast<size_t>(size)};
}

}  // namespace

Result<std::unique_ptr<DataParallel>> DataParallel::create(GptModel& model, Allocator& allocator,
                                                           Communicator& dp,
                                                           const DataParallelOptions& options) {
  if (options.bucketElements < 1) {
    return Status::invalidArgument("gradient buckets must hold at least one element");
  }
  BS_RETURN_IF_ERROR(options.optimizer.validate());
  std::unique_ptr<DataParallel> d(new DataParallel(model, allocator, dp, options));
  BS_RETURN_IF_ERROR(d->setUp());
  model.setHooks(d.get());
  return d;
}

DataParallel::DataParallel(GptModel& model, Allocator& allocator, Communicator& dp,
                           const DataParallelOptions& options)
    : model_(model),
      allocator_(allocator),
      backend_(*model.backend()),
      dp_(dp),
      options_(options),
      flat_(model, options.group),
      shards_(flat_.total(), dp.size()) {}

DataParallel::~DataParallel() {
  for (size_t i = 0; i < buckets_.size(); ++i) {  // buffers must outlive the worker's use
    Bucket& b = buckets_[i];
    if (b.handle.valid()) (void)dp_.wait(b.handle);
    if (!reductions_.empty() && b.launched && !b.done) {
      (void)reductions_[i]->finish(reductionBuffer(b));
    }
  }
  model_.setHooks(nullptr);
}

Status DataParallel::setUp() {
  const bool shardedParams = layout::shardsParameters(options_.zeroStage);
  const bool shardedGrads = layout::shardsGradients(options_.zeroStage);
  const int64_t total = flat_.total();
  shard_ = !layout::shardsOptimizer(options_.zeroStage) ? FlatRange{0, total}
                                                        : shards_.shard(dp_.rank());
  // Parameters: the full buffer, or (stage 3) this rank's shard of it.
  params_ =
      Tensor({shardedParams ? shard_.size() : total}, MemoryCategory::kParameters, &allocator_);
  const int64_t paramBase = shardedParams ? shard_.lo : 0;
  for (const FlatEntry& e : flat_.entries()) {
    Parameter& p = *e.param;
    const FlatRange keep = shardedParams ? e.range.intersect(shard_) : e.range;
    if (!keep.empty()) {
      backend_.copy(params_.data() + (keep.lo - paramBase), p.value.data() + (keep.lo - e.range.lo),
                    static_cast<size_t>(keep.size()) * sizeof(float));
    }
  }
  // The copies out of the model's own tensors are queued: finish them before
  // those tensors go (the views below replace them).
  BS_RETURN_IF_ERROR(backend_.synchronize());
  for (const FlatEntry& e : flat_.entries()) {
    Parameter& p = *e.param;
    Shape shape = p.value.shape();
    p.value =
        Tensor::view(shape, shardedParams ? nullptr : params_.data() + e.range.lo, device());
  }
  // Gradients: the full buffer (stages 0, 1) or the shard (stages 2, 3).
  grads_ = Tensor({!shardedGrads ? total : shard_.size()}, MemoryCategory::kGradients, &allocator_);
  for (const FlatEntry& e : flat_.entries()) {
    Shape shape = e.param->grad.shape();
    e.param->grad =
        Tensor::view(shape, !shardedGrads ? grads_.data() + e.range.lo : nullptr, device());
  }
  adamM_ = Tensor({shard_.size()}, MemoryCategory::kOptimizerState, &allocator_);
  adamV_ = Tensor({shard_.size()}, MemoryCategory::kOptimizerState, &allocator_);
  for (const FlatRange& r : planBuckets(total, options_.bucketElements)) {
    Bucket b;
    b.range = r;
    b.piece = r.intersect(shard_);
    buckets_.push_back(std::move(b));
  }
  return setUpCompression();
}

Status DataParallel::setUpCompression() {
  if (options_.intraNode != nullptr && options_.interNode != nullptr) {
    if (options_.zeroStage != layout::ZeroStage::kNone || options_.compression.compresses()) {
      return Status::invalidArgument(
          "a hierarchical all-reduce needs ZeRO stage 0 and no grad compression");
    }
    for (size_t i = 0; i < buckets_.size(); ++i) {
      reductions_.push_back(
          std::make_unique<HierarchicalAllReduce>(*options_.intraNode, *options_.interNode,
                                                  device() != Device::kHost ? &allocator_ : nullptr));
    }
    return Status::ok();
  }
  if (!options_.compression.compresses()) return Status::ok();
  if (options_.zeroStage != layout::ZeroStage::kNone) {
    return Status::invalidArgument("grad compression " + options_.compression.toString() +
                                   " needs ZeRO stage 0, got " +
                                   std::to_string(layout::zeroStageNumber(options_.zeroStage)));
  }
  Communicator* codecGroup = &dp_;
  if (stagesReductions()) {
    if (options_.hostDp == nullptr || options_.hostDp->size() != dp_.size() ||
        options_.hostDp->rank() != dp_.rank()) {
      return Status::invalidArgument("grad compression " + options_.compression.toString() +
                                     " on " + backend_.description() +
                                     " needs a host communicator of the dp group");
    }
    codecGroup = options_.hostDp;
  }
  for (const Bucket& b : buckets_) {
    std::vector<GradMatrix> matrices;  // the matrix-shaped gradients wholly inside the bucket
    for (const auto& [e, piece] : flat_.overlapping(b.range)) {
      const Shape& shape = e->param->value.shape();
      if (piece == e->range && shape.size() == 2) {
        matrices.push_back({e->range.lo - b.range.lo, shape[0], shape[1]});
      }
    }
    BS_ASSIGN_OR_RETURN(auto reduction, makeBucketReduction(options_.compression, *codecGroup,
                                                            b.range.size(), std::move(matrices)));
    reductions_.push_back(std::move(reduction));
  }
  return Status::ok();
}

float* DataParallel::shardGrads() {
  return !layout::shardsGradients(options_.zeroStage) ? grads_.data() + shard_.lo : grads_.data();
}

trace_model::ParallelDim dataParallelDim(layout::ZeroStage stage) {
  return !layout::shardsOptimizer(stage) ? trace_model::ParallelDim::kDp
                                         : trace_model::ParallelDim::kZero;
}

trace_model::ParallelDim DataParallel::syncDim() const {
  return dataParallelDim(options_.zeroStage);
}

namespace {

// The names of the expert parameters' collectives (static strings: spans
// keep the pointer).
const char* expertName(std::string_view name) {
  static constexpr const char* kNames[] = {"expert_grad_all_reduce",   "expert_grad_reduce_scatter",
                                           "expert_param_all_gather",  "expert_grad_norm",
                                           "expert_adam_m_all_gather", "expert_adam_v_all_gather"};
  for (const char* n : kNames) {
    if (std::string_view(n).substr(7) == name) return n;
  }
  return "expert_collective";
}

}  // namespace

CommTrace DataParallel::trace(const char* name) const {
  CommTrace t;
  t.name = options_.group == ParameterGroup::kExperts ? expertName(name) : name;
  t.step = step_;
  t.microBatch = microBatch_;
  t.dim = syncDim();
  return t;
}

void DataParallel::zeroGradients() {
  backend_.zero(grads_);
}

void DataParallel::beginMicroBatch(int32_t step, int32_t microBatch, bool last) {
  step_ = step;
  microBatch_ = microBatch;
  lastMicroBatch_ = last;
}

void DataParallel::beginPass(int32_t step, int32_t microBatch) {
  step_ = step;
  microBatch_ = microBatch;
}

// ---- Hooks ----------------------------------------------------------------

Status DataParallel::beforeForward(int32_t slot) {
  return layout::shardsParameters(options_.zeroStage) ? gatherSlot(slot) : Status::ok();
}

Status DataParallel::afterForward(int32_t slot) {
  if (layout::shardsParameters(options_.zeroStage)) releaseSlot(slot);
  return Status::ok();
}

Status DataParallel::beforeBackward(int32_t slot) {
  if (layout::shardsParameters(options_.zeroStage)) BS_RETURN_IF_ERROR(gatherSlot(slot));
  return openSlotGradients(slot);
}

Status DataParallel::afterBackward(int32_t slot) {
  BS_RETURN_IF_ERROR(finishSlotGradients(slot));
  if (layout::shardsParameters(options_.zeroStage)) releaseSlot(slot);
  return Status::ok();
}

Status DataParallel::beforeBackwardInput(int32_t slot) {
  return layout::shardsParameters(options_.zeroStage) ? gatherSlot(slot) : Status::ok();
}

Status DataParallel::afterBackwardInput(int32_t slot) {
  if (layout::shardsParameters(options_.zeroStage)) releaseSlot(slot);
  return Status::ok();
}

Status DataParallel::beforeBackwardWeight(int32_t slot) {
  return openSlotGradients(slot);
}

Status DataParallel::afterBackwardWeight(int32_t slot) {
  return finishSlotGradients(slot);
}

Status DataParallel::openSlotGradients(int32_t slot) {
  if (layout::shardsGradients(options_.zeroStage) && !flat_.slotRange(slot).empty()) {
    const FlatRange range = flat_.slotRange(slot);
    slotGrads_ = Tensor({range.size()}, MemoryCategory::kGradients, &allocator_);
    for (const auto& [e, piece] : flat_.overlapping(range)) {
      Shape shape = e->param->grad.shape();
      e->param->grad =
          Tensor::view(shape, slotGrads_.data() + (e->range.lo - range.lo), device());
    }
  }
  return Status::ok();
}

Status DataParallel::finishSlotGradients(int32_t slot) {
  const FlatRange range = flat_.slotRange(slot);
  if (range.empty()) return Status::ok();  // none of the slot's parameters is ours
  if (layout::shardsGradients(options_.zeroStage)) {
    // Move this slot's gradients into the buckets they belong to, one bucket
    // at a time so at most kMaxBucketsInFlight full buckets exist at once.
    for (size_t i = 0; i < buckets_.size(); ++i) {
      Bucket& b = buckets_[i];
      const FlatRange overlap = b.range.intersect(range);
      if (overlap.empty()) continue;
      if (b.send.empty())
        b.send = Tensor({b.range.size()}, MemoryCategory::kGradients, &allocator_);
      backend_.copy(b.send.data() + (overlap.lo - b.range.lo),
                    slotGrads_.data() + (overlap.lo - range.lo),
                    static_cast<size_t>(overlap.size()) * sizeof(float));
      b.filled += overlap.size();
      b.ready = b.filled == b.range.size();
      if (b.ready && options_.overlap) BS_RETURN_IF_ERROR(launchReadyBuckets());
    }
    for (const auto& [e, piece] : flat_.overlapping(range)) {
      Shape shape = e->param->grad.shape();
      e->param->grad = Tensor::view(shape, nullptr, device());
    }
    slotGrads_ = Tensor();
  } else if (lastMicroBatch_) {
    // Backward runs the slots from the last to the first: every bucket that
    // starts inside this slot or after it has its final gradients now.
    for (Bucket& b : buckets_) b.ready = b.ready || b.range.lo >= range.lo;
    if (options_.overlap) BS_RETURN_IF_ERROR(launchReadyBuckets());
  }
  return Status::ok();
}

Status DataParallel::launchReadyBuckets() {
  for (size_t i = 0; i < buckets_.size(); ++i) {  // bucket order: the same on every rank
    Bucket& b = buckets_[i];
    if (!b.ready || b.launched) continue;
    BS_RETURN_IF_ERROR(launchBucket(b));
    // Stages 2 and 3 own a buffer per bucket in flight: bound them (as
    // DeepSpeed's double-buffered reduction buckets do) by completing the
    // oldest. The worker runs them in order, so the oldest finishes first.
    if (layout::shardsGradients(options_.zeroStage)) {
      while (inFlight_ > kMaxBucketsInFlight) BS_RETURN_IF_ERROR(completeBucket(buckets_[oldest_]));
    }
  }
  return Status::ok();
}

// ---- Buckets --------------------------------------------------------------

Status DataParallel::launchBucket(Bucket& b) {
  b.launched = true;
  if (inFlight_++ == 0) oldest_ = static_cast<size_t>(&b - buckets_.data());
  if (!reductions_.empty()) {
    if (stagesReductions()) {  // the codec reads a host copy (a synchronisation point)
      b.staged.resize(static_cast<size_t>(b.range.size()));
      BS_RETURN_IF_ERROR(backend_.copyToHost(b.staged.data(), grads_.data() + b.range.lo,
                                             b.staged.size() * sizeof(float)));
    }
    return reductions_[&b - buckets_.data()]->start(reductionBuffer(b), trace("grad_all_reduce"));
  }
  if (!layout::shardsOptimizer(options_.zeroStage)) {
    BS_ASSIGN_OR_RETURN(b.handle, dp_.startAllReduce(slice(grads_, b.range.lo, b.range.size()),
                                                     trace("grad_all_reduce")));
    return Status::ok();
  }
  b.recv = Tensor({b.piece.size()}, MemoryCategory::kGradients, &allocator_);
  std::span<const float> send = !layout::shardsGradients(options_.zeroStage)
                                    ? slice(grads_, b.range.lo, b.range.size())
                                    : b.send.span();
  BS_ASSIGN_OR_RETURN(b.handle,
                      dp_.startReduceScatter(send, b.recv.span(), shards_.countsFor(b.range),
                                             trace("grad_reduce_scatter")));
  return Status::ok();
}

Status DataParallel::completeBucket(Bucket& b) {
  if (!reductions_.empty()) {
    BS_RETURN_IF_ERROR(reductions_[&b - buckets_.data()]->finish(reductionBuffer(b)));
    if (stagesReductions()) {  // the group's sum back into the gradients
      backend_.copyToDevice(grads_.data() + b.range.lo, b.staged.data(),
                            b.staged.size() * sizeof(float));
    }
  } else {
    BS_RETURN_IF_ERROR(dp_.wait(b.handle));
  }
  countTraffic(b);
  --inFlight_;
  oldest_ = static_cast<size_t>(&b - buckets_.data()) + 1;  // buckets launch in index order
  if (layout::shardsOptimizer(options_.zeroStage) && !b.piece.empty()) {
    float* dst = shardGrads() + (b.piece.lo - shard_.lo);
    const float* src = b.recv.data();
    if (!layout::shardsGradients(options_.zeroStage)) {
      backend_.copy(dst, src, static_cast<size_t>(b.piece.size()) * sizeof(float));
    } else {
      backend_.axpy(dst, 1.0f, src, b.piece.size());  // accumulate micro-batches
    }
    // Queued on the backend: the buffers below may only go once it has run.
    BS_RETURN_IF_ERROR(backend_.synchronize());
  }
  b.send = Tensor();
  b.recv = Tensor();
  b.done = true;
  return Status::ok();
}

bool DataParallel::stagesReductions() const {
  return device() != Device::kHost && options_.compression.compresses();
}

std::span<float> DataParallel::reductionBuffer(Bucket& b) {
  if (stagesReductions()) return b.staged;
  return slice(grads_, b.range.lo, b.range.size());
}

void DataParallel::countTraffic(const Bucket& b) {
  if (options_.traffic == nullptr) return;
  // The plain collective of this ZeRO stage over the bucket's fp32 values.
  const CollectiveKind plain = layout::shardsOptimizer(options_.zeroStage)
                                   ? CollectiveKind::kReduceScatter
                                   : CollectiveKind::kAllReduce;
  const int64_t uncompressed = busBytes(plain, b.range.size() * 4, dp_.size());
  const int64_t sent =
      reductions_.empty() ? uncompressed : reductions_[&b - buckets_.data()]->busBytes();
  options_.traffic->uncompressedBytes += uncompressed;
  options_.traffic->sentBytes += sent;
}

Status DataParallel::completeGradients() {
  for (Bucket& b : buckets_) {
    if (b.done) continue;
    if (!b.ready) {
      return Status::internal("gradient bucket [" + std::to_string(b.range.lo) + ", " +
                              std::to_string(b.range.hi) + ") was never filled by backward");
    }
    if (!b.launched) BS_RETURN_IF_ERROR(launchBucket(b));  // without overlap: all of them now
  }
  // The worker runs buckets in launch order: waiting for the last one first
  // sleeps once instead of once per bucket; the others are then done.
  for (size_t i = buckets_.size(); i-- > 0;) {
    if (!buckets_[i].done) BS_RETURN_IF_ERROR(completeBucket(buckets_[i]));
  }
  for (Bucket& b : buckets_) b = Bucket{.range = b.range, .piece = b.piece};
  inFlight_ = 0;
  return Status::ok();
}

Status DataParallel::synchronizeAll() {
  for (Bucket& b : buckets_) b.ready = true;
  return completeGradients();
}

// ---- ZeRO-3 parameter gathering -----------------------------------------------

Status DataParallel::gatherSlot(int32_t slot) {
  const FlatRange range = flat_.slotRange(slot);
  slotParams_ = Tensor({range.size()}, MemoryCategory::kParameters, &allocator_);
  const FlatRange mine = range.intersect(shard_);
  std::span<const float> send;
  if (!mine.empty()) send = slice(params_, mine.lo - shard_.lo, mine.size());
  BS_RETURN_IF_ERROR(
      dp_.allGather(send, slotParams_.span(), shards_.countsFor(range), trace("param_all_gather")));
  for (const auto& [e, piece] : flat_.overlapping(range)) {
    Shape shape = e->param->value.shape();
    e->param->value =
        Tensor::view(shape, slotParams_.data() + (e->range.lo - range.lo), device());
  }
  return Status::ok();
}

void DataParallel::releaseSlot(int32_t slot) {
  for (const auto& [e, piece] : flat_.overlapping(flat_.slotRange(slot))) {
    Shape shape = e->param->value.shape();
    e->param->value = Tensor::view(shape, nullptr, device());
  }
  slotParams_ = Tensor();
}

// ---- Clipping and the optimizer ----------------------------------------------

Result<GradSquares> DataParallel::localGradSquares(bool countReplicated) {
  double sum = 0.0;
  const float* g = shardGrads();
  for (const auto& [e, piece] : flat_.overlapping(shard_)) {
    if (!countReplicated && !e->param->shard.sharded()) continue;
    if (device() != Device::kHost) {  // one backend reduction per piece
      BS_ASSIGN_OR_RETURN(const double s,
                          backend_.squaredSum(g + (piece.lo - shard_.lo), piece.size()));
      sum += s;
      continue;
    }
    for (int64_t i = piece.lo; i < piece.hi; ++i) {  // one running sum (bit for bit as before)
      const double x = g[i - shard_.lo];
      sum += x * x;
    }
  }
  return GradSquares{sum, 0.0};
}

Result<double> DataParallel::reduceGradSquares(GradSquares local) {
  double sum = local.shared;
  if (layout::shardsOptimizer(options_.zeroStage) && dp_.size() > 1) {
    BS_RETURN_IF_ERROR(allReduceScalar(dp_, backend_, sum, trace("grad_norm")));
  }
  return sum;
}

void DataParallel::scaleGradients(float factor) {
  backend_.scale(shardGrads(), factor, shard_.size());
}

Status DataParallel::applyOptimizer(double lr) {
  ++adamSteps_;
  const int64_t paramBase = layout::shardsParameters(options_.zeroStage) ? shard_.lo : 0;
  for (const auto& [e, piece] : flat_.overlapping(shard_)) {
    const size_t n = static_cast<size_t>(piece.size());
    const int64_t local = piece.lo - shard_.lo;
    backend_.adamwUpdate(params_.data() + (piece.lo - paramBase), shardGrads() + local,
                         adamM_.data() + local, adamV_.data() + local, static_cast<int64_t>(n),
                         options_.optimizer, lr, adamSteps_, e->param->weightDecay);
  }
  return backend_.synchronize();
}

Status DataParallel::gatherUpdatedParameters() {
  const layout::ZeroStage stage = options_.zeroStage;
  if (layout::shardsOptimizer(stage) && !layout::shardsParameters(stage) && dp_.size() > 1) {
    BS_RETURN_IF_ERROR(dp_.allGather({}, params_.span(), shards_.countsFor({0, flat_.total()}),
                                     trace("param_all_gather")));
  }
  return Status::ok();
}

Status DataParallel::gatherParameters(std::vector<float>& out) {
  out.assign(static_cast<size_t>(flat_.total()), 0.0f);
  if (device() != Device::kHost) {  // gathered in device memory, then read back
    if (!layout::shardsParameters(options_.zeroStage)) {
      return backend_.copyToHost(out.data(), params_.data(), out.size() * sizeof(float));
    }
    Tensor full({flat_.total()}, MemoryCategory::kOther, &allocator_);
    BS_RETURN_IF_ERROR(dp_.allGather(params_.span(), full.span(),
                                     shards_.countsFor({0, flat_.total()}),
                                     trace("param_all_gather")));
    return backend_.copyToHost(out.data(), full.data(), out.size() * sizeof(float));
  }
  if (!layout::shardsParameters(options_.zeroStage)) {
    std::memcpy(out.data(), params_.data(), out.size() * sizeof(float));
    return Status::ok();
  }
  return dp_.allGather(params_.span(), out, shards_.countsFor({0, flat_.total()}),
                       trace("param_all_gather"));
}

Status DataParallel::appendParameters(NamedValues& out, std::vector<Parameter*>& params) {
  std::vector<float> flat;
  BS_RETURN_IF_ERROR(gatherParameters(flat));
  for (const FlatEntry& e : flat_.entries()) {
    out.emplace_back(e.param->name,
                     std::vector<float>(flat.begin() + e.range.lo, flat.begin() + e.range.hi));
    params.push_back(e.param);
  }
  return Status::ok();
}

Status DataParallel::appendOptimizerState(NamedValues& m, NamedValues& v, int64_t& steps) {
  // Out: total() floats of one moment in flat order.
  auto gather = [this](const Tensor& shard, const char* name, std::vector<float>& out) -> Status {
    out.assign(static_cast<size_t>(flat_.total()), 0.0f);
    if (device() != Device::kHost) {  // gathered in device memory, then read back
      if (!layout::shardsOptimizer(options_.zeroStage)) {
        return backend_.copyToHost(out.data(), shard.data(), out.size() * sizeof(float));
      }
      Tensor full({flat_.total()}, MemoryCategory::kOther, &allocator_);
      BS_RETURN_IF_ERROR(dp_.allGather(shard.span(), full.span(),
                                       shards_.countsFor({0, flat_.total()}), trace(name)));
      return backend_.copyToHost(out.data(), full.data(), out.size() * sizeof(float));
    }
    if (!layout::shardsOptimizer(options_.zeroStage)) {
      std::memcpy(out.data(), shard.data(), out.size() * sizeof(float));
      return Status::ok();
    }
    return dp_.allGather(shard.span(), out, shards_.countsFor({0, flat_.total()}), trace(name));
  };
  std::vector<float> flatM, flatV;
  BS_RETURN_IF_ERROR(gather(adamM_, "adam_m_all_gather", flatM));
  BS_RETURN_IF_ERROR(gather(adamV_, "adam_v_all_gather", flatV));
  for (const FlatEntry& e : flat_.entries()) {
    m.emplace_back(e.param->name,
                   std::vector<float>(flatM.begin() + e.range.lo, flatM.begin() + e.range.hi));
    v.emplace_back(e.param->name,
                   std::vector<float>(flatV.begin() + e.range.lo, flatV.begin() + e.range.hi));
  }
  steps = adamSteps_;
  return Status::ok();
}

}  // namespace bubblescope::engine
