#include "gui/window_fetcher.h"

#include <gtest/gtest.h>

#include "tests/gui/gui_trace.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::gui {
namespace {

using testing::guiRank;
using testing::guiSpan;
using trace_model::EventKind;
using trace_model::Lane;

struct OneRankTrace {
  bubblescope::testing::TempDir dir;
  std::string path = dir.file("f.db");
  std::unique_ptr<storage::TraceWriter> writer;
  OneRankTrace() {
    writer = testing::writeGuiTrace(
        path, {guiRank(0, 0)},
        {guiSpan(0, Lane::kCompute, EventKind::kForward, 1000, 1100, 0, 0),
         guiSpan(0, Lane::kCompute, EventKind::kBackward, 2000, 2100, 0, 0)},
        {{0, 0, 1.0, 0, 1000, 2100}});
  }
};

// Only the latest request is fetched: two asked for while held, one fetch,
// of the second window.
TEST(WindowFetcher, TheLatestRequestReplacesOneNotStarted) {
  OneRankTrace t;
  WindowFetcher fetcher;
  int done = 0;
  fetcher.start(t.path, 1, [&done] { ++done; });
  fetcher.pause();
  fetcher.request({900, 1500});
  fetcher.request({1900, 2500});
  ASSERT_TRUE(fetcher.inFlight().has_value());
  EXPECT_EQ(fetcher.inFlight()->t0Ns, 1900);
  fetcher.waitIdle();  // paused with a request queued: returns at once
  EXPECT_EQ(fetcher.fetchesStarted(), 0);
  EXPECT_FALSE(fetcher.take().has_value());
  fetcher.resume();
  fetcher.waitIdle();
  EXPECT_EQ(fetcher.fetchesStarted(), 1);
  auto fetched = fetcher.take();
  ASSERT_TRUE(fetched.has_value());
  ASSERT_TRUE(fetched->status.isOk()) << fetched->status.message();
  EXPECT_EQ(fetched->window.t0Ns, 1900);
  ASSERT_NE(fetched->cache, nullptr);
  EXPECT_EQ(fetched->cache->eventCount(), 1);
  EXPECT_TRUE(fetched->cache->covers(1900, 2500));
  EXPECT_FALSE(fetcher.inFlight().has_value()) << "taken";
  EXPECT_FALSE(fetcher.take().has_value()) << "once";
  fetcher.stop();
  EXPECT_EQ(done, 1);
}

// A file that cannot be read gives the error as the fetch's result.
TEST(WindowFetcher, AnUnreadableFileIsAnErrorResult) {
  bubblescope::testing::TempDir dir;
  WindowFetcher fetcher;
  fetcher.start(dir.file("missing.db"), 1, [] {});
  fetcher.request({0, 100});
  fetcher.waitIdle();
  auto fetched = fetcher.take();
  ASSERT_TRUE(fetched.has_value());
  EXPECT_FALSE(fetched->status.isOk());
  EXPECT_EQ(fetched->cache, nullptr);
}

}  // namespace
}  // namespace bubblescope::gui
