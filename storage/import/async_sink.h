// AsyncSink: a trace_model::Sink that hands every call to one background thread,
// which makes it on the target sink in order, so parsing and writing a trace
// overlap (the importer's parse thread keeps going while SQLite commits).
//
// Contract: calls return at once with the first error the target has
// returned so far (the one that failed, and every later call, report it);
// at most `maxQueued` calls wait (bounded memory: a few event batches).
// drain() waits until the target has made every call and returns the first
// error. The target must not be used by anyone else until drain() returns.
// The destructor drains. One producer thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "trace_model/sink.h"

namespace bubblescope::import {

class AsyncSink final : public trace_model::Sink {
 public:
  explicit AsyncSink(trace_model::Sink& target, size_t maxQueued = 4);
  ~AsyncSink() override;
  AsyncSink(const AsyncSink&) = delete;
  AsyncSink& operator=(const AsyncSink&) = delete;

  Status appendEvents(std::span<const trace_model::Event> events) override;
  Status appendSteps(std::span<const trace_model::StepRecord> steps) override;
  Status appendSamples(std::span<const trace_model::Sample> samples) override;
  Status describeRank(const trace_model::RankInfo& rank) override;
  Status flush() override;

  Status drain();

 private:
  Status enqueue(std::function<Status(trace_model::Sink&)> call);
  void run();

  trace_model::Sink& target_;
  const size_t maxQueued_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<Status(trace_model::Sink&)>> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  Status error_;
  std::thread worker_;
};

}  // namespace bubblescope::import
