// measureOps on a hand-built trace: the optimizer op is the executor's
// grad_norm and optimizer spans together, and the step's uncovered time is
// what no span covers.
#include "storage/analysis/measured_ops.h"

#include <gtest/gtest.h>

#include "storage/trace_reader.h"
#include "tests/analysis/trace_builder.h"

namespace bubblescope::analysis {
namespace {

using testing::span;
using trace_model::EventKind;

trace_model::Event named(trace_model::Event e, const char* name) {
  e.name = name;
  return e;
}

TEST(MeasuredOps, TheOptimizerOpIsItsGradNormAndUpdateSpansTogether) {
  testing::TraceBuilder b;
  testing::TraceBuilder::RunSpec spec;
  spec.ranks = {testing::rankInfo(0, 0, 0, 0)};
  // Step 0: forward 0-100, backward 100-300, a gap of 20 (zeroing, say),
  // grad_norm 320-380, optimizer 380-400; the step record 0-450.
  spec.events = {named(span(0, EventKind::kForward, 0, 100, 0), "forward"),
                 named(span(0, EventKind::kBackward, 100, 300, 0), "backward"),
                 named(span(0, EventKind::kOptimizer, 320, 380, 0), "grad_norm"),
                 named(span(0, EventKind::kOptimizer, 380, 400, 0), "optimizer")};
  for (auto& e : spec.events) e.microBatch = e.kind == EventKind::kOptimizer ? -1 : 0;
  spec.steps = {testing::stepRecord(0, 0, 0, 450)};
  const int64_t run = b.run(spec);
  auto reader = storage::TraceReader::open(b.path());
  ASSERT_TRUE(reader.isOk()) << reader.status().message();
  auto m = measureOps(**reader, run);
  ASSERT_TRUE(m.isOk()) << m.status().message();
  const auto optimizer = m->op(0, 0, -1, -1, "optimizer");
  ASSERT_TRUE(optimizer.has_value());
  EXPECT_DOUBLE_EQ(optimizer->wallNs, 80.0);  // 60 of the norm + 20 of the update
  EXPECT_FALSE(m->op(0, 0, -1, -1, "grad_norm").has_value());
  const RankStepTime t = m->rankSteps.at({0, 0});
  EXPECT_DOUBLE_EQ(t.stepNs, 450.0);
  EXPECT_DOUBLE_EQ(t.uncoveredNs(), 70.0);  // 300-320 and 400-450
}

}  // namespace
}  // namespace bubblescope::analysis
