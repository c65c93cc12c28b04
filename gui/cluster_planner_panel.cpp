#include "gui/cluster_planner_panel.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>

#include "planning/hardware.h"
#include "engine/layout/model_config.h"
#include "gui/cluster_table_model.h"
#include "gui/planner_page.h"

namespace bubblescope::gui {

namespace {

// The defaults: Table 1 of Megatron-LM's SC21 paper, its 7.5B row.
constexpr const char* kDefaultHardware = "a100-80g";
constexpr const char* kDefaultModel = "megatron-7.5b";
constexpr int kDefaultGpus = 128;
constexpr int kDefaultGlobalBatch = 512;
constexpr const char* kDefaultDtype = "fp16";

}  // namespace

ClusterPlannerPanel::ClusterPlannerPanel(QWidget* parent) : QWidget(parent) {
  auto* form = new QFormLayout;
  hardware_ = new QComboBox(this);
  hardware_->setObjectName("hardware");
  for (const std::string& name : layout::hardwareProfileNames()) {
    auto profile = layout::loadHardware(name);
    hardware_->addItem(QString::fromStdString(name), QString::fromStdString(name));
    if (profile.isOk()) {
      hardware_->setItemData(hardware_->count() - 1, QString::fromStdString(profile->description),
                             Qt::ToolTipRole);
    }
  }
  hardware_->setCurrentIndex(std::max(0, hardware_->findData(QString(kDefaultHardware))));
  form->addRow(tr("Hardware"), hardware_);
  device_ = new QLabel(this);
  device_->setObjectName("device");
  device_->setWordWrap(true);
  form->addRow(device_);
  gpus_ = new QSpinBox(this);
  gpus_->setObjectName("gpus");
  gpus_->setRange(1, 1 << 20);
  gpus_->setValue(kDefaultGpus);
  form->addRow(tr("GPUs"), gpus_);
  modelChoice_ = new QComboBox(this);
  modelChoice_->setObjectName("model");
  for (const std::string& name : layout::modelPresetNames()) {
    modelChoice_->addItem(QString::fromStdString(name), QString::fromStdString(name));
  }
  modelChoice_->setCurrentIndex(std::max(0, modelChoice_->findData(QString(kDefaultModel))));
  form->addRow(tr("Model"), modelChoice_);
  globalBatch_ = new QSpinBox(this);
  globalBatch_->setObjectName("global_batch");
  globalBatch_->setRange(1, 1 << 24);
  globalBatch_->setValue(kDefaultGlobalBatch);
  globalBatch_->setToolTip(tr("Sequences per iteration"));
  form->addRow(tr("Global batch"), globalBatch_);
  dtype_ = new QComboBox(this);
  dtype_->setObjectName("dtype");
  dtype_->setToolTip(tr("The GEMMs' data type: its peak prices the compute"));
  form->addRow(tr("GEMM dtype"), dtype_);
  top_ = new QSpinBox(this);
  top_->setObjectName("top");
  top_->setRange(1, 100);
  top_->setValue(10);
  form->addRow(tr("Show the best"), top_);
  auto* planButton = new QPushButton(tr("Plan"), this);
  planButton->setObjectName("plan");
  form->addRow(planButton);

  status_ = makePlanStatus(this);
  model_ = new ClusterTableModel(this);
  sorted_ = new QSortFilterProxyModel(this);
  sorted_->setSourceModel(model_);
  sorted_->setSortRole(ClusterTableModel::kValueRole);
  table_ = makeCandidatesTable(this, sorted_, "clusterCandidates");
  table_->setSortingEnabled(true);
  table_->sortByColumn(ClusterTableModel::kRankColumn, Qt::AscendingOrder);
  layOutPlannerPage(this, form, status_, table_);

  fillDtypes();
  replan_.setSingleShot(true);
  replan_.setInterval(kReplanDelayMs);
  connect(&replan_, &QTimer::timeout, this, [this] { (void)plan(); });
  connect(planButton, &QPushButton::clicked, this, [this] { (void)plan(); });
  for (QSpinBox* s : {gpus_, globalBatch_, top_}) {
    connect(s, &QSpinBox::valueChanged, this, &ClusterPlannerPanel::schedulePlan);
  }
  connect(hardware_, &QComboBox::currentIndexChanged, this, [this] {
    fillDtypes();
    schedulePlan();
  });
  connect(modelChoice_, &QComboBox::currentIndexChanged, this,
          &ClusterPlannerPanel::schedulePlan);
  connect(dtype_, &QComboBox::currentIndexChanged, this, &ClusterPlannerPanel::schedulePlan);
}

void ClusterPlannerPanel::schedulePlan() {
  replan_.start();
}

// The dtypes the chosen profile prices, keeping the current one when it can;
// and the device line under the combo.
void ClusterPlannerPanel::fillDtypes() {
  const QString keep = dtype_->count() > 0 ? dtype_->currentText() : QString(kDefaultDtype);
  const QSignalBlocker block(dtype_);
  dtype_->clear();
  auto profile = layout::loadHardware(hardware_->currentData().toString().toStdString());
  if (!profile.isOk()) {
    device_->setText(QString::fromStdString(profile.status().message()));
    return;
  }
  for (const auto& [dtype, tflops] : profile->peakTflops) {
    if (tflops > 0) dtype_->addItem(QString::fromStdString(dtype));
  }
  dtype_->setCurrentIndex(std::max(0, dtype_->findText(keep)));
  device_->setText(tr("%1 · %2 GiB · %3 per node (%4) · %5 × %6 Gb/s NICs per node")
                       .arg(QString::fromStdString(profile->deviceName))
                       .arg(profile->memoryGiB, 0, 'f', 0)
                       .arg(profile->gpusPerNode)
                       .arg(QString::fromStdString(profile->nodeName))
                       .arg(profile->nicsPerNode)
                       .arg(profile->nicGbps, 0, 'f', 0));
}

Result<layout::ClusterPlanRequest> ClusterPlannerPanel::request() const {
  layout::ClusterPlanRequest r;
  BS_ASSIGN_OR_RETURN(r.hardware,
                      layout::loadHardware(hardware_->currentData().toString().toStdString()));
  BS_ASSIGN_OR_RETURN(r.model,
                      layout::modelPreset(modelChoice_->currentData().toString().toStdString()));
  r.gpus = gpus_->value();
  r.globalBatch = globalBatch_->value();
  r.settings.dtype = dtype_->currentText().toStdString();
  r.top = top_->value();
  return r;
}

Status ClusterPlannerPanel::plan() {
  replan_.stop();
  auto r = request();
  auto plan = r.isOk() ? layout::planCluster(*r) : Result<layout::ClusterPlan>(r.status());
  if (!plan.isOk()) {
    model_->setCandidates({}, 0);
    status_->setText(QString::fromStdString(plan.status().message()));
    return plan.status();
  }
  status_->setText(tr("%1 on %2 × %3, global batch %4, %5: %6 layouts estimated, %7 fit %8 GiB by "
                      "the estimate, %9 simulated")
                       .arg(QString::fromStdString(r->model.preset))
                       .arg(r->gpus)
                       .arg(QString::fromStdString(r->hardware.name))
                       .arg(r->globalBatch)
                       .arg(QString::fromStdString(r->settings.dtype))
                       .arg(plan->considered)
                       .arg(plan->fitEstimate)
                       .arg(r->hardware.memoryGiB, 0, 'f', 1)
                       .arg(plan->simulatedCount));
  model_->setCandidates(std::move(plan->best), r->hardware.memoryBytes());
  table_->sortByColumn(ClusterTableModel::kRankColumn, Qt::AscendingOrder);
  fitCandidateColumns(table_);
  return Status::ok();
}

QString ClusterPlannerPanel::statusText() const {
  return status_->text();
}

}  // namespace bubblescope::gui
