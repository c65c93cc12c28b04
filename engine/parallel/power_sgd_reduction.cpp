#include "engine/parallel/power_sgd_reduction.h"

#include <algorithm>
#include <string>

namespace bubblescope::engine {

PowerSgdReduction::PowerSgdReduction(Communicator& comm, int64_t elements,
                                     std::vector<GradMatrix> matrices, int32_t rank)
    : comm_(comm), elements_(elements) {
  int64_t pValues = 0, qValues = 0, covered = 0;
  std::vector<Piece> rest;
  auto keep = [&](int64_t lo, int64_t hi) {
    if (hi > lo) rest.push_back({lo, hi - lo, 0});
  };
  for (const GradMatrix& m : matrices) {
    const bool worth =
        rank <= std::min(m.rows, m.cols) && rank * (m.rows + m.cols) < m.rows * m.cols;
    if (!worth) continue;
    keep(covered, m.offset);
    covered = m.offset + m.rows * m.cols;
    Factor f;
    f.matrix = m;
    f.compressor = std::make_unique<PowerSgdCompressor>(m.rows, m.cols, rank,
                                                        static_cast<uint64_t>(factors_.size()));
    f.pOffset = pValues;
    f.qOffset = qValues;
    pValues += m.rows * rank;
    qValues += m.cols * rank;
    factors_.push_back(std::move(f));
  }
  keep(covered, elements);
  for (Piece& p : rest) {
    p.at = pValues;
    pValues += p.size;
  }
  rest_ = std::move(rest);
  first_.assign(static_cast<size_t>(pValues), 0.0f);
  second_.assign(static_cast<size_t>(qValues), 0.0f);
}

Status PowerSgdReduction::start(std::span<const float> grads, const CommTrace& trace) {
  if (static_cast<int64_t>(grads.size()) != elements_) {
    return Status::invalidArgument("powersgd: a bucket of " + std::to_string(grads.size()) +
                                   " gradients, expected " + std::to_string(elements_));
  }
  for (Factor& f : factors_) {
    const GradMatrix& m = f.matrix;
    BS_RETURN_IF_ERROR(f.compressor->project(
        grads.subspan(m.offset, m.rows * m.cols),
        std::span<float>(first_).subspan(f.pOffset, m.rows * f.compressor->rank())));
  }
  for (const Piece& p : rest_) {
    std::copy_n(grads.begin() + p.offset, p.size, first_.begin() + p.at);
  }
  trace_ = trace;
  CommTrace t = trace;
  t.name = "grad_all_reduce.powersgd_p";
  BS_ASSIGN_OR_RETURN(handle_, comm_.startAllReduce(first_, t));
  busBytes_ = engine::busBytes(CollectiveKind::kAllReduce, static_cast<int64_t>(first_.size()) * 4,
                               comm_.size());
  return Status::ok();
}

Status PowerSgdReduction::finish(std::span<float> sum) {
  BS_RETURN_IF_ERROR(comm_.wait(handle_));
  for (Factor& f : factors_) {
    const GradMatrix& m = f.matrix;
    const int32_t r = f.compressor->rank();
    f.compressor->backProject(std::span<float>(first_).subspan(f.pOffset, m.rows * r),
                              std::span<float>(second_).subspan(f.qOffset, m.cols * r));
  }
  if (!factors_.empty()) {
    CommTrace t = trace_;
    t.name = "grad_all_reduce.powersgd_q";
    BS_RETURN_IF_ERROR(comm_.allReduce(second_, t));
    busBytes_ += engine::busBytes(CollectiveKind::kAllReduce,
                                  static_cast<int64_t>(second_.size()) * 4, comm_.size());
  }
  for (Factor& f : factors_) {
    const GradMatrix& m = f.matrix;
    const int32_t r = f.compressor->rank();
    f.compressor->finish(std::span<const float>(first_).subspan(f.pOffset, m.rows * r),
                         std::span<const float>(second_).subspan(f.qOffset, m.cols * r),
                         comm_.size(), sum.subspan(m.offset, m.rows * m.cols));
  }
  for (const Piece& p : rest_) {
    std::copy_n(first_.begin() + p.at, p.size, sum.begin() + p.offset);
  }
  return Status::ok();
}

}  // namespace bubblescope::engine
