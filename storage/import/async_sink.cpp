#include "storage/import/async_sink.h"

#include <vector>

namespace bubblescope::import {

AsyncSink::AsyncSink(trace_model::Sink& target, size_t maxQueued)
    : target_(target), maxQueued_(maxQueued), worker_([this] { run(); }) {}

AsyncSink::~AsyncSink() {
  {
    std::unique_lock lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

Status AsyncSink::enqueue(std::function<Status(trace_model::Sink&)> call) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queue_.size() < maxQueued_ || !error_.isOk(); });
  if (!error_.isOk()) return error_;
  queue_.push_back(std::move(call));
  changed_.notify_all();
  return Status::ok();
}

void AsyncSink::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;  // stopping, nothing left
    auto call = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    Status s = error_.isOk() ? call(target_) : Status::ok();  // after an error: skipped
    lock.lock();
    busy_ = false;
    if (!s.isOk() && error_.isOk()) error_ = s;
    changed_.notify_all();
  }
}

Status AsyncSink::drain() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queue_.empty() && !busy_; });
  return error_;
}

Status AsyncSink::appendEvents(std::span<const trace_model::Event> events) {
  return enqueue([batch = std::vector<trace_model::Event>(events.begin(), events.end())](
                     trace_model::Sink& s) { return s.appendEvents(batch); });
}

Status AsyncSink::appendSteps(std::span<const trace_model::StepRecord> steps) {
  return enqueue([batch = std::vector<trace_model::StepRecord>(steps.begin(), steps.end())](
                     trace_model::Sink& s) { return s.appendSteps(batch); });
}

Status AsyncSink::appendSamples(std::span<const trace_model::Sample> samples) {
  return enqueue([batch = std::vector<trace_model::Sample>(samples.begin(), samples.end())](
                     trace_model::Sink& s) { return s.appendSamples(batch); });
}

Status AsyncSink::describeRank(const trace_model::RankInfo& rank) {
  return enqueue([rank](trace_model::Sink& s) { return s.describeRank(rank); });
}

Status AsyncSink::flush() {
  return enqueue([](trace_model::Sink& s) { return s.flush(); });
}

}  // namespace bubblescope::import
