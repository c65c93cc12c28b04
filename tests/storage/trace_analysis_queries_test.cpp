// Reader queries the analysis streams and aggregates with: visitEvents,
// stepSpans, samplePeaks.
#include <gtest/gtest.h>

#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::storage {
namespace {

using testing::TempDir;

std::string nameOf(int64_t start) {
  std::string name = std::to_string(start);
  name.insert(0, 1, 'e');  // not "e" + …: GCC 12's -Wrestrict misfires on it
  return name;
}

RunInfo runInfo(const std::string& name, int32_t worldSize) {
  RunInfo info;
  info.name = name;
  info.worldSize = worldSize;
  return info;
}

trace_model::Event ev(int32_t rank, int64_t start, int64_t end, int32_t step) {
  trace_model::Event e;
  e.rank = rank;
  e.name = nameOf(start);
  e.startNs = start;
  e.endNs = end;
  e.step = step;
  return e;
}

class TraceAnalysisQueriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto writer = TraceWriter::open(path_);
    ASSERT_TRUE(writer.isOk());
    auto& w = **writer;
    ASSERT_TRUE(w.beginRun(runInfo("other", 1)).isOk());
    ASSERT_TRUE(w.appendEvents(std::vector<trace_model::Event>{ev(0, 1, 2, 0)}).isOk());
    ASSERT_TRUE(w.finishRun(RunStatus::kFinished).isOk());
    auto id = w.beginRun(runInfo("this", 2));
    ASSERT_TRUE(id.isOk());
    run_ = *id;
    // Out of start order, across ranks and batches; one tie at 50.
    ASSERT_TRUE(w.appendEvents(std::vector<trace_model::Event>{ev(1, 70, 90, 1), ev(0, 50, 60, 0),
                                                               ev(1, 10, 30, 0), ev(0, 5, 40, 0)})
                    .isOk());
    ASSERT_TRUE(w.flush().isOk());
    ASSERT_TRUE(w.appendEvents(std::vector<trace_model::Event>{ev(0, 50, 55, 1), ev(0, 0, 3, -1),
                                                               ev(0, 100, 130, 1)})
                    .isOk());
    ASSERT_TRUE(w.appendSamples(std::vector<trace_model::Sample>{{0, "mem.gradients", 1, 10.0},
                                                                 {0, "mem.gradients", 2, 30.0},
                                                                 {0, "mem.gradients", 3, 20.0},
                                                                 {1, "mem.gradients", 1, 7.5},
                                                                 {1, "cpu_util", 1, 99.0}})
                    .isOk());
    ASSERT_TRUE(w.finishRun(RunStatus::kFinished).isOk());
  }

  TempDir dir_;
  std::string path_ = dir_.file("q.db");
  int64_t run_ = 0;
};

TEST_F(TraceAnalysisQueriesTest, VisitEventsStreamsOneRankInStartOrder) {
  auto reader = TraceReader::open(path_);
  ASSERT_TRUE(reader.isOk());
  std::vector<std::pair<int64_t, int64_t>> seen;
  ASSERT_TRUE((*reader)
                  ->visitEvents(run_, 0,
                                [&](const trace_model::Event& e) {
                                  EXPECT_EQ(e.rank, 0);
                                  EXPECT_EQ(e.name, nameOf(e.startNs));
                                  seen.emplace_back(e.startNs, e.endNs);
                                  return Status::ok();
                                })
                  .isOk());
  // Ties keep insertion order.
  EXPECT_EQ(seen, (std::vector<std::pair<int64_t, int64_t>>{
                      {0, 3}, {5, 40}, {50, 60}, {50, 55}, {100, 130}}));
}

TEST_F(TraceAnalysisQueriesTest, VisitorErrorStopsTheVisit) {
  auto reader = TraceReader::open(path_);
  ASSERT_TRUE(reader.isOk());
  int calls = 0;
  Status s = (*reader)->visitEvents(run_, 0, [&](const trace_model::Event&) {
    ++calls;
    return Status::internal("stop here");
  });
  EXPECT_EQ(s.message(), "stop here");
  EXPECT_EQ(calls, 1);
}

TEST_F(TraceAnalysisQueriesTest, StepSpansAndSamplePeaks) {
  auto reader = TraceReader::open(path_);
  ASSERT_TRUE(reader.isOk());
  auto spans = (*reader)->stepSpans(run_);
  ASSERT_TRUE(spans.isOk());
  EXPECT_EQ(*spans, (std::vector<StepSpan>{
                        {0, {0, 5, 60}}, {0, {1, 50, 130}}, {1, {0, 10, 30}}, {1, {1, 70, 90}}}));
  auto peaks = (*reader)->samplePeaks(run_, "mem.gradients");
  ASSERT_TRUE(peaks.isOk());
  EXPECT_EQ(*peaks, (std::vector<SeriesPeak>{{0, 30.0}, {1, 7.5}}));
  auto none = (*reader)->samplePeaks(run_, "mem.optimizer");
  ASSERT_TRUE(none.isOk());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace bubblescope::storage
