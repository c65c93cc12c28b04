#include "gui/coverage_bins.h"

#include <gtest/gtest.h>

#include <vector>

#include "trace_model/kernel_category.h"

namespace bubblescope::gui {
namespace {

TEST(CoverageBins, AddCoverageSplitsASpanOverColumns) {
  std::vector<float> out(4, 0.0f);
  // Columns of 100 ns from 1000: [1000,1100) [1100,1200) [1200,1300) [1300,1400).
  addCoverage(out, 1000.0, 100.0, 1050, 1225);
  EXPECT_FLOAT_EQ(out[0], 0.5f);
  EXPECT_FLOAT_EQ(out[1], 1.0f);
  EXPECT_FLOAT_EQ(out[2], 0.25f);
  EXPECT_FLOAT_EQ(out[3], 0.0f);
}

TEST(CoverageBins, AddCoverageClipsToTheColumnsAndIgnoresEmptySpans) {
  std::vector<float> out(2, 0.0f);
  addCoverage(out, 0.0, 10.0, -50, 5);
  addCoverage(out, 0.0, 10.0, 15, 500);
  addCoverage(out, 0.0, 10.0, 7, 7);
  EXPECT_FLOAT_EQ(out[0], 0.5f);
  EXPECT_FLOAT_EQ(out[1], 0.5f);
}

trace_model::Event event(int32_t rank, trace_model::EventKind kind, int64_t s, int64_t e) {
  trace_model::Event ev;
  ev.rank = rank;
  ev.kind = kind;
  ev.startNs = s;
  ev.endNs = e;
  return ev;
}

TEST(CoverageBins, OverviewResamplesBinsToColumns) {
  CoverageOverview o(4);
  o.reset(0, 100);
  o.add(event(0, trace_model::EventKind::kForward, 0, 150));
  o.add(event(0, trace_model::EventKind::kBackward, 250, 400));
  const auto f = o.resample({0, 0}, {trace_model::EventKind::kForward}, 0, 400, 2);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_FLOAT_EQ(f[0], 0.75f);
  EXPECT_FLOAT_EQ(f[1], 0.0f);
  const auto b = o.resample({0, 0}, {trace_model::EventKind::kBackward}, 0, 400, 4);
  EXPECT_FLOAT_EQ(b[2], 0.5f);
  EXPECT_FLOAT_EQ(b[3], 1.0f);
  EXPECT_TRUE(o.resample({1, 0}, {trace_model::EventKind::kForward}, 0, 400, 4).empty());
  EXPECT_EQ(o.kindsOf({0, 0}),
            (std::vector<trace_model::EventKind>{trace_model::EventKind::kForward,
                                                 trace_model::EventKind::kBackward}));
}

TEST(CoverageBins, OverviewDoublesItsBinsAsTheRunGrows) {
  CoverageOverview o(4);
  o.reset(0, 100);
  o.add(event(0, trace_model::EventKind::kForward, 0, 100));
  o.add(
      event(0, trace_model::EventKind::kForward, 700, 800));  // past 400: 200, then 200 still fits
  EXPECT_EQ(o.binNs(), 200);
  const auto f = o.resample({0, 0}, {trace_model::EventKind::kForward}, 0, 800, 4);
  EXPECT_FLOAT_EQ(f[0], 0.5f);
  EXPECT_FLOAT_EQ(f[1], 0.0f);
  EXPECT_FLOAT_EQ(f[3], 0.5f);
  EXPECT_EQ(o.events(), 2);
}

// A GPU stream's records are binned by kernel category (the colours the
// timeline paints them with at every zoom); other lanes' by kind alone.
TEST(CoverageBins, OverviewBinsGpuRecordsByKernelCategory) {
  using trace_model::EventKind;
  using trace_model::KernelCategory;
  CoverageOverview o(4);
  o.reset(0, 100);
  const trace_model::Lane stream = trace_model::gpuStreamLane(7);
  auto gpu = [&](EventKind kind, const char* name, int64_t s, int64_t e) {
    trace_model::Event ev = event(0, kind, s, e);
    ev.lane = stream;
    ev.name = name;
    return ev;
  };
  o.add(gpu(EventKind::kKernel, "ampere_sgemm_128x64_nn", 0, 100));
  o.add(gpu(EventKind::kKernel, "flash_fwd_kernel", 100, 150));
  o.add(gpu(EventKind::kKernel, "ampere_sgemm_64x64_tn", 200, 300));
  o.add(gpu(EventKind::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 300, 400));
  o.add(event(0, EventKind::kForward, 0, 100));
  const int32_t lane = static_cast<int32_t>(stream);
  using Series = CoverageOverview::Series;
  auto series = [](EventKind k, KernelCategory c) { return Series{k, static_cast<int8_t>(c)}; };
  EXPECT_EQ(o.seriesOf({0, lane}),
            (std::vector<Series>{series(EventKind::kKernel, KernelCategory::kGemm),
                                 series(EventKind::kKernel, KernelCategory::kAttention),
                                 series(EventKind::kMemcpy, KernelCategory::kMemcpy)}));
  EXPECT_EQ(o.seriesOf({0, 0}), (std::vector<Series>{{EventKind::kForward, -1}}));
  EXPECT_EQ(o.kindsOf({0, lane}), (std::vector<EventKind>{EventKind::kKernel, EventKind::kMemcpy}));
  const auto gemm = o.resample({0, lane}, series(EventKind::kKernel, KernelCategory::kGemm), 0,
                               400, 4);
  EXPECT_EQ(gemm, (std::vector<float>{1.0f, 0.0f, 1.0f, 0.0f}));
  const auto attention =
      o.resample({0, lane}, series(EventKind::kKernel, KernelCategory::kAttention), 0, 400, 4);
  EXPECT_EQ(attention, (std::vector<float>{0.0f, 0.5f, 0.0f, 0.0f}));
  EXPECT_TRUE(o.resample({0, lane}, {EventKind::kKernel}, 0, 400, 4).empty())
      << "no kernel left unclassified";
}

}  // namespace
}  // namespace bubblescope::gui
