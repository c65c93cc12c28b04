// File > Import PyTorch traces, driven as its dialogs would once answered
// (MainWindow::importTraces): the imported run opens with its GPU stream
// lanes, its launch links and an honest run row, and in headless mode no
// dialog opens, not even for the import's notes. Reads the real traces of
// ../shared/fixtures/kineto (docs/import.md); skipped without them.
#include "gui/kineto_import.h"

#include <gtest/gtest.h>

#include <QApplication>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QTimer>
#include <filesystem>

#include "fixture_paths.h"  // generated: BUBBLESCOPE_KINETO_FIXTURES
#include "gui/main_window.h"
#include "gui/runs_table_model.h"
#include "gui/timeline_model.h"
#include "gui/timeline_panel.h"
#include "tests/gui/modal_box_closer.h"
#include "tests/storage/temp_dir.h"

namespace bubblescope::gui {
namespace {

using trace_model::Lane;

QString fixture(const char* relative) {
  return QStringLiteral(BUBBLESCOPE_KINETO_FIXTURES "/") + QString::fromUtf8(relative);
}

bool haveFixtures() {
  return std::filesystem::exists(fixture("nccl_parser_config/nccl_data.json.gz").toStdString());
}

// With a file open, File > Import asks where the run goes (issue 31: it
// appended to the open file without asking): each button's answer, the
// add-to-it button the default.
TEST(ImportTarget, AskedWithAFileOpenEachAnswerAsClicked) {
  for (const QString& answer :
       {QStringLiteral("Add to runs.db"), QStringLiteral("New file…"), QStringLiteral("Cancel")}) {
    QString asked;
    bool defaultIsAdd = false;
    QTimer click;
    click.setInterval(20);
    QObject::connect(&click, &QTimer::timeout, [&] {
      auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
      if (box == nullptr) return;
      click.stop();
      asked = box->text();
      defaultIsAdd = box->defaultButton() != nullptr &&
                     box->defaultButton()->text() == QStringLiteral("Add to runs.db");
      for (QAbstractButton* b : box->buttons()) {
        if (b->text() == answer) b->click();
      }
    });
    click.start();
    const ImportTarget got = askImportTarget(nullptr, QStringLiteral("/tmp/some/runs.db"));
    EXPECT_TRUE(asked.contains("runs.db")) << asked.toStdString();
    EXPECT_TRUE(defaultIsAdd);
    const ImportTarget want = answer.startsWith("Add")   ? ImportTarget::kOpenFile
                              : answer.startsWith("New") ? ImportTarget::kNewFile
                                                         : ImportTarget::kCancel;
    EXPECT_EQ(got, want) << answer.toStdString();
  }
}

struct ImportWindow : ::testing::Test {
  bubblescope::testing::TempDir dir;
  QString target = QString::fromStdString(dir.file("imported.db"));
  bubblescope::testing::ModalBoxCloser closer;  // records any dialog, which must not open
  MainWindow window;

  void SetUp() override {
    if (!haveFixtures())
      GTEST_SKIP() << "Kineto fixtures not found at " BUBBLESCOPE_KINETO_FIXTURES;
    window.setHeadless(true);
    window.resize(1400, 900);
  }
  QString runsCell(int row, int column) const {
    const RunsTableModel* runs = window.runsModel();
    return runs->data(runs->index(row, column)).toString();
  }
};

TEST_F(ImportWindow, TheImportedRunOpensWithItsGpuLanesAndLaunchLinks) {
  const Status s = window.importTraces({fixture("nccl_parser_config/nccl_data.json.gz")}, target);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(window.filePath(), target);
  ASSERT_EQ(window.runsModel()->rowCount(), 1);
  EXPECT_EQ(runsCell(0, RunsTableModel::kSource), QStringLiteral("imported"));
  EXPECT_EQ(runsCell(0, RunsTableModel::kLayout),
            QStringLiteral("imported kineto traces: 1 file of world 2; parallel dimensions "
                           "unknown (name process groups: import --group NAME=dp|tp|pp|ep)"));
  // One file (rank 0) of a world of 2: the ranks present, with the world size.
  EXPECT_EQ(runsCell(0, RunsTableModel::kRanks), QStringLiteral("1 of 2"));

  TimelineModel* model = window.timeline()->model();
  EXPECT_EQ(model->run().id, 1);
  // The whole overview, then the rows: the cuda api lane and one per stream
  // (7 and 40), beside the host threads.
  for (int i = 0; i < 100 && !model->caughtUp(); ++i) ASSERT_TRUE(model->ingest(100000).isOk());
  const int api = model->rowOf(0, Lane::kCudaApi);
  const int stream7 = model->rowOf(0, trace_model::gpuStreamLane(7));
  const int stream40 = model->rowOf(0, trace_model::gpuStreamLane(40));
  ASSERT_GE(api, 0);
  ASSERT_GE(stream7, 0);
  ASSERT_GE(stream40, 0);
  EXPECT_EQ(model->rows()[stream40].laneLabel, QStringLiteral("gpu stream 40"));
  EXPECT_EQ(model->rows()[api].rankLabel, QStringLiteral("rank 0"));  // no made-up pp/tp/dp

  // The all-reduce kernel of correlation 60047 (ts 4458677009853.422 µs +
  // baseTimeNanoseconds 1711964646000000000): its details and its launch.
  const double kernelNs = 1711964646000000000.0 + 4458677009853422.0 + 1000.0;
  model->frame(kernelNs - 1e6, kernelNs + 1e6, 400, 0, static_cast<int>(model->rows().size()) - 1);
  const auto kernel = model->eventAt(stream40, kernelNs, 0);
  ASSERT_TRUE(kernel.has_value());
  EXPECT_EQ(kernel->kind, trace_model::EventKind::kAllReduce);
  EXPECT_EQ(kernel->correlationId, 60047);
  EXPECT_EQ(kernel->bytes, 6637568LL * 4);
  auto launch = model->linkedTo(*kernel);
  ASSERT_TRUE(launch.isOk());
  ASSERT_EQ(launch->size(), 1u);
  EXPECT_EQ((*launch)[0].lane, Lane::kCudaApi);
  EXPECT_LT((*launch)[0].startNs, kernel->startNs);
  EXPECT_TRUE(closer.texts().isEmpty()) << closer.texts().join("; ").toStdString();
}

TEST_F(ImportWindow, NotesGoToTheStatusBarNotADialogWhenHeadless) {
  // trace_filter's NCCL kernels carry no message sizes: the import has notes.
  const Status s = window.importTraces({fixture("trace_filter/sampled_rank-0.json.gz"),
                                        fixture("trace_filter/sampled_rank-1.json.gz")},
                                       target);
  ASSERT_TRUE(s.isOk()) << s.message();
  QApplication::processEvents();
  EXPECT_TRUE(closer.texts().isEmpty()) << closer.texts().join("; ").toStdString();
  QString status;
  for (auto* label : window.statusBar()->findChildren<QLabel*>()) status += label->text();
  EXPECT_TRUE(status.contains(QStringLiteral("Imported run 1 with 2 note(s): ")))
      << status.toStdString();
  EXPECT_TRUE(status.contains(QStringLiteral("10 NCCL kernels carry no message sizes")))
      << status.toStdString();
  TimelineModel* model = window.timeline()->model();
  for (int i = 0; i < 100 && !model->caughtUp(); ++i) ASSERT_TRUE(model->ingest(100000).isOk());
  EXPECT_GE(model->rowOf(1, trace_model::gpuStreamLane(84)), 0);  // rank 1's NCCL stream

  // A second import into the open file is appended and shown.
  const Status again =
      window.importTraces({fixture("nccl_parser_config/nccl_data.json.gz")}, target);
  ASSERT_TRUE(again.isOk()) << again.message();
  EXPECT_EQ(window.runsModel()->rowCount(), 2);
  EXPECT_EQ(window.timeline()->model()->run().id, 2);
}

TEST_F(ImportWindow, ABadFileIsOneErrorAndNoDialog) {
  const QString bad = QString::fromStdString(dir.file("not-kineto.json"));
  {
    std::FILE* f = std::fopen(bad.toStdString().c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs("{\"layers\": 2}", f);
    std::fclose(f);
  }
  const Status s = window.importTraces({bad}, target);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("not a Kineto trace"), std::string::npos) << s.message();
  EXPECT_TRUE(closer.texts().isEmpty());
}

}  // namespace
}  // namespace bubblescope::gui
