#include "storage/import/event_batch.h"

namespace bubblescope::import {

EventBatch::EventBatch(trace_model::Sink& sink, std::function<int64_t()> timeOffsetNs)
    : sink_(sink), timeOffsetNs_(std::move(timeOffsetNs)) {
  batch_.reserve(kBatchEvents);
}

int64_t EventBatch::offsetNs() {
  if (!offsetNs_) offsetNs_ = timeOffsetNs_ ? timeOffsetNs_() : 0;
  return *offsetNs_;
}

Status EventBatch::add(trace_model::Event event) {
  batch_.push_back(std::move(event));
  if (batch_.size() >= kBatchEvents) return flush();
  return Status::ok();
}

Status EventBatch::flush() {
  if (batch_.empty()) return Status::ok();
  const int64_t offset = offsetNs();
  if (offset != 0) {
    const size_t before = batch_.size();
    std::erase_if(batch_, [offset](trace_model::Event& e) {
      return __builtin_add_overflow(e.startNs, offset, &e.startNs) ||
             __builtin_add_overflow(e.endNs, offset, &e.endNs);
    });
    dropped_ += static_cast<int64_t>(before - batch_.size());
  }
  Status s = sink_.appendEvents(batch_);
  batch_.clear();
  return s;
}

Status EventBatch::appendSteps(std::vector<trace_model::StepRecord> steps) {
  const int64_t offset = offsetNs();
  std::erase_if(steps, [offset](trace_model::StepRecord& s) {
    return __builtin_add_overflow(s.startNs, offset, &s.startNs) ||
           __builtin_add_overflow(s.endNs, offset, &s.endNs);
  });
  return sink_.appendSteps(steps);
}

trace_model::Lane EventBatch::threadLane(int64_t tid) {
  auto [it, inserted] = threadIndex_.emplace(tid, static_cast<int32_t>(threadIndex_.size()));
  return trace_model::hostThreadLane(it->second);
}

}  // namespace bubblescope::import
