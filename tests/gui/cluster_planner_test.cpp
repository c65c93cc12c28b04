// The cluster planner in the app (issue 30, point 4): for the chosen
// hardware profile, GPUs, model and global batch the panel lists exactly the
// candidates layout::planCluster gives (the same numbers `plan --hardware`
// prints), sorts them by value, offers only the dtypes the profile prices,
// and says the planner's one message when nothing fits.
#include "planning/cluster_plan.h"

#include <gtest/gtest.h>

#include <QComboBox>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>

#include "gui/cluster_planner_panel.h"
#include "gui/cluster_table_model.h"
#include "gui/main_window.h"
#include "gui/planner_panel.h"
#include "gui/prediction_format.h"

namespace bubblescope::gui {
namespace {

void choose(ClusterPlannerPanel& panel, const char* hardware, int gpus, const char* model,
            int globalBatch) {
  auto* hw = panel.findChild<QComboBox*>("hardware");
  hw->setCurrentIndex(hw->findData(QString(hardware)));
  panel.findChild<QSpinBox*>("gpus")->setValue(gpus);
  auto* models = panel.findChild<QComboBox*>("model");
  models->setCurrentIndex(models->findData(QString(model)));
  panel.findChild<QSpinBox*>("global_batch")->setValue(globalBatch);
}

TEST(ClusterPlannerPanelTest, RowsAreTheClusterPlannersCandidates) {
  ClusterPlannerPanel panel;
  choose(panel, "a100-80g", 64, "megatron-3.6b", 512);
  ASSERT_TRUE(panel.plan().isOk()) << panel.statusText().toStdString();

  auto r = panel.request();
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r->hardware.name, "a100-80g");
  EXPECT_EQ(r->gpus, 64);
  EXPECT_EQ(r->model.preset, "megatron-3.6b");
  EXPECT_EQ(r->globalBatch, 512);
  EXPECT_EQ(r->settings.dtype, "fp16");
  auto expected = layout::planCluster(*r);
  ASSERT_TRUE(expected.isOk()) << expected.status().message();
  const ClusterTableModel& rows = *panel.candidates();
  ASSERT_EQ(rows.rowCount(), static_cast<int>(expected->best.size()));
  ASSERT_GT(rows.rowCount(), 0);
  for (int i = 0; i < rows.rowCount(); ++i) {
    const layout::ClusterCandidate& want = expected->best[static_cast<size_t>(i)];
    EXPECT_EQ(layoutShortName(rows.candidate(i).layout), layoutShortName(want.layout)) << i;
    EXPECT_EQ(rows.candidate(i).prediction.stepNs, want.prediction.stepNs) << i;
    EXPECT_EQ(rows.data(rows.index(i, ClusterTableModel::kTflopsPerGpu),
                        ClusterTableModel::kValueRole)
                  .toDouble(),
              want.tflopsPerGpu);
    EXPECT_EQ(rows.data(rows.index(i, ClusterTableModel::kLimit)).toString().toStdString(),
              want.limit);
  }
  EXPECT_TRUE(panel.statusText().contains(QString::number(expected->considered) +
                                          " layouts estimated"))
      << panel.statusText().toStdString();
}

// Clicking a header sorts by the raw value, not the text ("9.5" < "10.2").
TEST(ClusterPlannerPanelTest, SortsByValue) {
  ClusterPlannerPanel panel;
  choose(panel, "h100-sxm", 128, "megatron-7.5b", 512);
  ASSERT_TRUE(panel.plan().isOk()) << panel.statusText().toStdString();
  QTableView* table = panel.table();
  ASSERT_GE(table->model()->rowCount(), 2);
  table->sortByColumn(ClusterTableModel::kMemory, Qt::AscendingOrder);
  double previous = -1;
  for (int i = 0; i < table->model()->rowCount(); ++i) {
    const double bytes =
        table->model()
            ->data(table->model()->index(i, ClusterTableModel::kMemory), ClusterTableModel::kValueRole)
            .toDouble();
    EXPECT_GE(bytes, previous) << "row " << i;
    previous = bytes;
  }
}

// The dtype choice follows the profile: only dtypes it has a peak for.
TEST(ClusterPlannerPanelTest, OffersTheProfilesDtypes) {
  ClusterPlannerPanel panel;
  auto* hw = panel.findChild<QComboBox*>("hardware");
  auto* dtypes = panel.findChild<QComboBox*>("dtype");
  for (int i = 0; i < hw->count(); ++i) {
    hw->setCurrentIndex(i);
    auto profile = layout::loadHardware(hw->itemData(i).toString().toStdString());
    ASSERT_TRUE(profile.isOk());
    ASSERT_GT(dtypes->count(), 0) << hw->itemText(i).toStdString();
    for (int d = 0; d < dtypes->count(); ++d) {
      EXPECT_GT(profile->peakFlops(dtypes->itemText(d).toStdString()), 0)
          << hw->itemText(i).toStdString() << " " << dtypes->itemText(d).toStdString();
    }
  }
}

// gpt3-175b on 8 GPUs fits no layout: the panel shows the planner's message
// and no rows.
TEST(ClusterPlannerPanelTest, NothingFitsSaysWhy) {
  ClusterPlannerPanel panel;
  choose(panel, "a100-40g", 8, "gpt3-175b", 8);
  const Status s = panel.plan();
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(panel.statusText().toStdString(), s.message());
  EXPECT_EQ(panel.candidates()->rowCount(), 0);
}

// The main window's Planner tab holds both planners; showing the cluster
// one plans it.
TEST(ClusterPlannerPanelTest, TheMainWindowPlansTheClusterWhenShown) {
  MainWindow window;
  QTabWidget* tabs = window.plannerTabs();
  ASSERT_NE(tabs, nullptr);
  ASSERT_EQ(tabs->count(), 2);
  EXPECT_EQ(tabs->widget(0), window.planner());
  EXPECT_EQ(tabs->widget(1), window.clusterPlanner());
  EXPECT_EQ(window.clusterPlanner()->candidates()->rowCount(), 0);
  tabs->setCurrentIndex(1);
  EXPECT_GT(window.clusterPlanner()->candidates()->rowCount(), 0)
      << window.clusterPlanner()->statusText().toStdString();
}

}  // namespace
}  // namespace bubblescope::gui
