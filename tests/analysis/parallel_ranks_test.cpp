// forEachRankInParallel: every item once, each helper thread with its own
// reader, progress 1..n in order on the calling thread, cancellation and the
// first error returned.
#include "storage/analysis/parallel_ranks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "tests/analysis/trace_builder.h"

namespace bubblescope::analysis {
namespace {

using testing::TraceBuilder;

std::unique_ptr<storage::TraceReader> openTrace(const TraceBuilder& trace) {
  auto reader = storage::TraceReader::open(trace.path());
  EXPECT_TRUE(reader.isOk()) << reader.status().message();
  return reader.isOk() ? std::move(reader).value() : nullptr;
}

TEST(ParallelRanksTest, EveryItemOnceEachThreadItsOwnReaderProgressInOrder) {
  TraceBuilder trace;
  trace.run({.name = "r"});
  auto reader = openTrace(trace);
  ASSERT_NE(reader, nullptr);
  constexpr int64_t kItems = 40;
  std::vector<int> calls(kItems, 0);
  std::mutex mutex;
  std::set<storage::TraceReader*> readers;
  std::vector<int64_t> progress;
  const std::thread::id caller = std::this_thread::get_id();
  bool progressOffThread = false;
  Status s = forEachRankInParallel(
      *reader, kItems, 4,
      [&](storage::TraceReader& r, int64_t i) {
        ++calls[i];
        auto runs = r.runs();  // each reader used by one thread at a time
        std::lock_guard lock(mutex);
        readers.insert(&r);
        return runs.status();
      },
      [&](int64_t done) {
        progressOffThread |= std::this_thread::get_id() != caller;
        progress.push_back(done);
        return true;
      });
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(calls, std::vector<int>(kItems, 1));
  std::vector<int64_t> expected;
  for (int64_t i = 1; i <= kItems; ++i) expected.push_back(i);
  EXPECT_EQ(progress, expected);
  EXPECT_FALSE(progressOffThread);
  EXPECT_GE(readers.size(), 1u);
  EXPECT_LE(readers.size(), 4u);
}

TEST(ParallelRanksTest, CancellingStopsAndTheFirstErrorIsReturned) {
  TraceBuilder trace;
  trace.run({.name = "r"});
  auto reader = openTrace(trace);
  ASSERT_NE(reader, nullptr);
  // The helper thread's item lasts until the caller has cancelled, so the
  // outcome does not depend on how the two threads are scheduled: the caller
  // finishes items alone, cancels after its third, and then no item starts.
  std::atomic<int64_t> started{0};
  std::mutex mutex;
  std::condition_variable cancelledChanged;
  bool cancelledFlag = false;
  const std::thread::id caller = std::this_thread::get_id();
  Status cancelled = forEachRankInParallel(
      *reader, 1000, 2,
      [&](storage::TraceReader&, int64_t) {
        ++started;
        if (std::this_thread::get_id() != caller) {
          std::unique_lock lock(mutex);
          // The deadline only turns a broken cancellation into a failure.
          EXPECT_TRUE(cancelledChanged.wait_for(lock, std::chrono::seconds(60),
                                                [&] { return cancelledFlag; }));
        }
        return Status::ok();
      },
      [&](int64_t done) {
        if (done < 3) return true;
        std::lock_guard lock(mutex);
        cancelledFlag = true;
        cancelledChanged.notify_all();
        return false;
      });
  EXPECT_EQ(cancelled.message(), "analysis cancelled");
  // The caller's three items and at most the helper's one.
  EXPECT_GE(started.load(), 3);
  EXPECT_LE(started.load(), 4) << "items not started are skipped";

  Status failed = forEachRankInParallel(
      *reader, 100, 2,
      [](storage::TraceReader&, int64_t i) {
        return i == 7 ? Status::corrupt("item 7 is bad") : Status::ok();
      },
      nullptr);
  EXPECT_EQ(failed.code(), StatusCode::kCorrupt);
  EXPECT_EQ(failed.message(), "item 7 is bad");
}

}  // namespace
}  // namespace bubblescope::analysis
