#include "gui/runs_table_model.h"

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>

#include "tests/gui/gui_trace.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::gui {
namespace {

using testing::guiRank;
using testing::guiSpan;

TEST(RunRows, LayoutSummaryNamesDegreesScheduleZeroAndModel) {
  EXPECT_EQ(layoutSummary(R"({"dp":2,"pp":4,"schedule":"1f1b","micro_batches":8,"zero_stage":1})",
                          R"({"preset":"small"})"),
            QStringLiteral("dp2 tp1 pp4 · 1f1b m8 · zero1 · small"));
  EXPECT_EQ(layoutSummary(R"({"pp":2,"schedule":"interleaved","virtual_chunks":2,"micro_batches":4,
                              "model":"small"})",
                          "{}"),
            QStringLiteral("dp1 tp1 pp2 · interleaved v2 m4 · small"));
  // Missing keys are the layout's defaults (the tiny model on one process).
  EXPECT_EQ(layoutSummary("{}", "{}"), QStringLiteral("single process · tiny"));
  // Not a layout the engine accepts (tiny has 2 layers): the stored text.
  EXPECT_EQ(layoutSummary(R"({"pp":4})", "{}"), QStringLiteral(R"({"pp":4})"));
  // pp = 1 has no pipeline: no schedule or micro-batches in the summary.
  EXPECT_EQ(layoutSummary(R"({"dp":2,"pp":1,"schedule":"1f1b","micro_batches":2})",
                          R"({"preset":"small"})"),
            QStringLiteral("dp2 tp1 pp1 · small"));
  EXPECT_EQ(layoutSummary("not json", "{}"), QStringLiteral("not json"));
}

TEST(RunRows, ReadsStatusStepTimeAndLossOfEveryRun) {
  bubblescope::testing::TempDir dir;
  const std::string path = dir.file("runs.db");
  {
    auto w = testing::writeGuiTrace(
        path, {guiRank(0, 0), guiRank(1, 1)},
        {guiSpan(0, trace_model::Lane::kCompute, trace_model::EventKind::kForward, 0, 100)},
        {{0, 0, std::nan(""), 0, 0, 100},
         {1, 0, 3.0, 0, 10, 120},
         {0, 1, std::nan(""), 0, 200, 330},
         {1, 1, 2.0, 0, 200, 300},
         {0, 2, std::nan(""), 0, 400, 600},
         {1, 2, 1.5, 0, 400, 580}},
        R"({"dp":1,"pp":2,"schedule":"gpipe","micro_batches":2})");
    ASSERT_TRUE(w->finishRun(storage::RunStatus::kFailed, "rank 1 ran out of memory").isOk());
  }
  auto reader = storage::TraceReader::open(path);
  ASSERT_TRUE(reader.isOk());
  auto rows = loadRunRows(**reader);
  ASSERT_TRUE(rows.isOk()) << rows.status().message();
  ASSERT_EQ(rows->size(), 1u);
  const RunRow& r = rows->front();
  EXPECT_EQ(r.health, storage::RunHealth::kFailed);
  EXPECT_EQ(r.error, QStringLiteral("rank 1 ran out of memory"));
  EXPECT_EQ(r.steps, 3);
  ASSERT_TRUE(r.meanStepNs.has_value());
  // Steps of 120, 130 and 200 ns: the mean (150), not the median (130).
  EXPECT_DOUBLE_EQ(*r.meanStepNs, (120.0 + 130.0 + 200.0) / 3);
  ASSERT_TRUE(r.lastLoss.has_value());
  EXPECT_DOUBLE_EQ(*r.lastLoss, 1.5);
  EXPECT_EQ(r.layoutSummary, QStringLiteral("dp1 tp1 pp2 · gpipe m2 · tiny"));

  RunsTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setRows(*rows);
  EXPECT_EQ(model.rowCount(), 1);
  EXPECT_EQ(model.data(model.index(0, RunsTableModel::kStatus)).toString(), "failed");
  EXPECT_EQ(model.headerData(RunsTableModel::kStepTime, Qt::Horizontal).toString(), "Mean step");
  EXPECT_EQ(model.data(model.index(0, RunsTableModel::kStepTime)).toString(), "150 ns");
  EXPECT_EQ(model.data(model.index(0, RunsTableModel::kStatus), Qt::ToolTipRole).toString(),
            "rank 1 ran out of memory");
  EXPECT_EQ(
      model.data(model.index(0, RunsTableModel::kRun), RunsTableModel::kRunIdRole).toLongLong(), 1);
}

// An import of two ranks' traces of a 128-rank job (issue 29): the list
// shows the 2 ranks present, with the world size as its own fact.
TEST(RunRows, RanksAreThoseInTheFileWithTheWorldSizeBeside) {
  bubblescope::testing::TempDir dir;
  const std::string path = dir.file("import.db");
  {
    auto w = storage::TraceWriter::open(path);
    ASSERT_TRUE(w.isOk());
    storage::RunInfo info;
    info.name = "imported";
    info.worldSize = 128;
    ASSERT_TRUE((*w)->beginRun(info).isOk());
    ASSERT_TRUE((*w)->addRank(guiRank(3, -1)).isOk());
    ASSERT_TRUE((*w)->addRank(guiRank(77, -1)).isOk());
    ASSERT_TRUE((*w)->finishRun(storage::RunStatus::kFinished).isOk());
  }
  auto reader = storage::TraceReader::open(path);
  ASSERT_TRUE(reader.isOk());
  auto rows = loadRunRows(**reader);
  ASSERT_TRUE(rows.isOk()) << rows.status().message();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().ranksPresent, 2);
  EXPECT_EQ(rows->front().worldSize, 128);

  RunsTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setRows(*rows);
  const QModelIndex ranks = model.index(0, RunsTableModel::kRanks);
  EXPECT_EQ(model.data(ranks).toString(), QStringLiteral("2 of 128"));
  EXPECT_EQ(model.data(ranks, Qt::ToolTipRole).toString(),
            QStringLiteral("2 ranks in the file; world size 128"));
  // All ranks present: the count alone.
  RunRow whole = rows->front();
  whole.ranksPresent = whole.worldSize = 4;
  model.updateRow(whole);
  EXPECT_EQ(model.data(ranks).toString(), QStringLiteral("4"));
}

TEST(RunsTableModel, UpdatesARowInPlaceAndAppendsNewRuns) {
  RunsTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  RunRow a;
  a.id = 1;
  a.health = storage::RunHealth::kRunning;
  model.updateRow(a);
  RunRow b;
  b.id = 2;
  b.health = storage::RunHealth::kInterrupted;
  model.updateRow(b);
  a.health = storage::RunHealth::kFinished;
  a.steps = 5;
  model.updateRow(a);
  ASSERT_EQ(model.rowCount(), 2);
  EXPECT_EQ(model.data(model.index(0, RunsTableModel::kStatus)).toString(), "finished");
  EXPECT_EQ(model.data(model.index(0, RunsTableModel::kSteps)).toInt(), 5);
  EXPECT_EQ(model.data(model.index(1, RunsTableModel::kStatus)).toString(), "interrupted");
  EXPECT_EQ(model.rowOfRun(2), 1);
  EXPECT_EQ(model.rowOfRun(9), -1);
  EXPECT_FALSE(model.data(model.index(5, 0)).isValid());
}

// The list mirrors the file (issue 31): syncRows drops runs the file no
// longer has, updates the others in place and appends new ones, and
// setRows replaces everything (another file). Both keep the model sound.
TEST(RunsTableModel, SyncRowsMirrorsTheFileAndSetRowsReplacesIt) {
  RunsTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  auto rows = [](std::vector<int64_t> ids) {
    std::vector<RunRow> out;
    for (int64_t id : ids) {
      RunRow r;
      r.id = id;
      r.steps = static_cast<int>(10 * id);
      out.push_back(r);
    }
    return out;
  };
  auto ids = [&] {
    std::vector<int64_t> out;
    for (const RunRow& r : model.rows()) out.push_back(r.id);
    return out;
  };
  model.setRows(rows({1, 2, 3, 4, 5, 6}));
  ASSERT_EQ(model.rowCount(), 6);
  std::vector<RunRow> next = rows({2, 4, 7});
  next[0].steps = 99;
  model.syncRows(next);
  EXPECT_EQ(ids(), (std::vector<int64_t>{2, 4, 7}));
  EXPECT_EQ(model.data(model.index(0, RunsTableModel::kSteps)).toInt(), 99);
  EXPECT_EQ(model.rowOfRun(6), -1);
  model.syncRows({});
  EXPECT_EQ(model.rowCount(), 0);
  model.setRows(rows({1, 2}));
  EXPECT_EQ(ids(), (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace bubblescope::gui
