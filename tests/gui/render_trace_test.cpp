// The trace `--bench-render --events N --ranks R` measures (gui/render_trace.h),
// written small here: a finished simulated run of R ranks holding at least N
// events (whole steps), in $TMPDIR, reused when asked again.
#include "gui/render_trace.h"

#include <gtest/gtest.h>

#include <QFileInfo>
#include <sstream>

#include "storage/trace_reader.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::gui {
namespace {

TEST(RenderTrace, WritesAFinishedRunOfTheRanksAndAtLeastTheEventsThenReusesIt) {
  bubblescope::testing::TempDir dir;
  const QByteArray oldTmp = qgetenv("TMPDIR");
  qputenv("TMPDIR", QByteArray::fromStdString(dir.path().string()));
  std::ostringstream log;
  auto path = ensureRenderTrace(5000, 16, log);
  ASSERT_TRUE(path.isOk()) << path.status().message();
  EXPECT_EQ(QFileInfo(*path).absolutePath().toStdString(), dir.path().string());
  {
    auto reader = storage::TraceReader::open(path->toStdString());
    ASSERT_TRUE(reader.isOk()) << reader.status().message();
    auto runs = (*reader)->runs();
    ASSERT_TRUE(runs.isOk() && runs->size() == 1u);
    EXPECT_EQ(runs->front().status, storage::RunStatus::kFinished);
    EXPECT_EQ(runs->front().info.worldSize, 16);
    EXPECT_GE(runs->front().eventCount, 5000);
    auto ranks = (*reader)->ranks(runs->front().id);
    ASSERT_TRUE(ranks.isOk());
    EXPECT_EQ(ranks->size(), 16u);
  }
  EXPECT_EQ(log.str().find("(reused)"), std::string::npos);
  std::ostringstream again;
  auto reused = ensureRenderTrace(5000, 16, again);
  ASSERT_TRUE(reused.isOk());
  EXPECT_EQ(*reused, *path);
  EXPECT_NE(again.str().find("(reused)"), std::string::npos) << again.str();
  EXPECT_FALSE(ensureRenderTrace(0, 16, again).isOk());
  if (oldTmp.isNull()) {
    qunsetenv("TMPDIR");
  } else {
    qputenv("TMPDIR", oldTmp);
  }
}

}  // namespace
}  // namespace bubblescope::gui
