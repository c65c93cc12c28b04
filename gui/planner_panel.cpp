#include "gui/planner_panel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <set>

#include "gui/planner_page.h"
#include "gui/planner_table_model.h"
#include "gui/prediction_format.h"
#include "storage/analysis/run_calibration.h"
#include "storage/calibration_store.h"

namespace bubblescope::gui {

namespace {

const char* const kEditorModel = "";  // model combo data of "the layout editor's model"
constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

PlannerPanel::PlannerPanel(QWidget* parent) : QWidget(parent) {
  auto* form = new QFormLayout;
  world_ = new QSpinBox(this);
  world_->setObjectName("world");
  world_->setRange(1, 4096);
  world_->setValue(4);
  form->addRow(tr("World size (ranks)"), world_);
  memory_ = new QDoubleSpinBox(this);
  memory_->setObjectName("memory");
  memory_->setRange(0, 1 << 20);
  memory_->setDecimals(3);
  memory_->setSuffix(tr(" GiB"));
  memory_->setSpecialValueText(tr("no limit"));
  memory_->setToolTip(tr("Memory per rank; layouts whose largest stage needs more are dropped"));
  form->addRow(tr("Memory per rank"), memory_);
  modelChoice_ = new QComboBox(this);
  modelChoice_->setObjectName("model");
  modelChoice_->addItem(tr("the layout editor's"), QString(kEditorModel));
  for (const std::string& name : layout::modelPresetNames()) {
    modelChoice_->addItem(QString::fromStdString(name), QString::fromStdString(name));
  }
  form->addRow(tr("Model"), modelChoice_);
  microBatchSize_ = new QSpinBox(this);
  microBatchSize_->setObjectName("micro_batch_size");
  microBatchSize_->setRange(1, 100000);
  form->addRow(tr("Micro-batch size"), microBatchSize_);
  top_ = new QSpinBox(this);
  top_->setObjectName("top");
  top_->setRange(1, 1000);
  top_->setValue(10);
  form->addRow(tr("Show the best"), top_);
  source_ = new QComboBox(this);
  source_->setObjectName("calibration");
  source_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  source_->setMinimumContentsLength(24);
  form->addRow(tr("Costs from"), source_);
  auto* planButton = new QPushButton(tr("Plan"), this);
  planButton->setObjectName("plan");
  form->addRow(planButton);

  status_ = makePlanStatus(this);
  model_ = new PlannerTableModel(this);
  table_ = makeCandidatesTable(this, model_, "candidates");
  layOutPlannerPage(this, form, status_, table_);

  replan_.setSingleShot(true);
  replan_.setInterval(kReplanDelayMs);
  connect(&replan_, &QTimer::timeout, this, [this] { (void)plan(); });
  connect(planButton, &QPushButton::clicked, this, [this] { (void)plan(); });
  for (QSpinBox* s : {world_, microBatchSize_, top_}) {
    connect(s, &QSpinBox::valueChanged, this, &PlannerPanel::schedulePlan);
  }
  connect(memory_, &QDoubleSpinBox::valueChanged, this, &PlannerPanel::schedulePlan);
  connect(modelChoice_, &QComboBox::currentIndexChanged, this, &PlannerPanel::schedulePlan);
  connect(source_, &QComboBox::currentIndexChanged, this, &PlannerPanel::onCalibrationChosen);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (current.isValid()) emit layoutChosen(model_->candidate(current.row()).layout);
          });
  fillCalibrations(kFlopsSource);
}

void PlannerPanel::schedulePlan() {
  replan_.start();
}

void PlannerPanel::setTrace(storage::TraceReader* reader, const QString& path, int64_t shownRunId) {
  const qint64 keep = source_->currentData().toLongLong();
  if (path != path_) measuredRuns_.clear();
  reader_ = reader;
  path_ = path;
  shownRunId_ = reader != nullptr ? shownRunId : 0;
  stored_.clear();
  if (!path.isEmpty()) {
    auto all = storage::loadCalibrations(path.toStdString());
    if (all.isOk()) {
      for (layout::Calibration& c : *all) stored_.insert(c.id, std::move(c));
    }
  }
  fillCalibrations(keep);
}

void PlannerPanel::setEditorModel(const layout::ModelConfig& model) {
  if (model == editorModel_) return;
  editorModel_ = model;
  if (modelChoice_->currentData().toString() == kEditorModel) schedulePlan();
}

void PlannerPanel::fillCalibrations(qint64 keep) {
  const QSignalBlocker block(source_);
  source_->clear();
  source_->addItem(tr("FLOPs estimate (%1 GFLOP/s, communication free)")
                       .arg(kFlopsEstimatePerSecond / 1e9, 0, 'f', 0),
                   kFlopsSource);
  const QString file = QFileInfo(path_).fileName();
  for (const layout::Calibration& c : stored_) {
    source_->addItem(
        tr("calibration %1 of %2: %3 (%4)")
            .arg(c.id)
            .arg(file, QString::fromStdString(c.name), QString::fromStdString(c.model.preset)),
        static_cast<qint64>(c.id));
  }
  if (shownRunId_ > 0) {
    source_->addItem(tr("measured from the shown run (run %1)").arg(shownRunId_), kShownRunSource);
  }
  int index = keep == kFlopsSource ? 0 : source_->findData(keep);
  if (index < 0 || (keep == kFlopsSource && !stored_.isEmpty())) {
    index = stored_.isEmpty() ? 0 : source_->findData(static_cast<qint64>(stored_.lastKey()));
  }
  source_->setCurrentIndex(index);
  onCalibrationChosen();
}

void PlannerPanel::onCalibrationChosen() {
  // The box shows 24 characters on a 1280 px screen: the whole choice is
  // its tooltip.
  source_->setToolTip(source_->currentText());
  const qint64 kind = source_->currentData().toLongLong();
  calibration_.reset();
  calibrationSource_.clear();
  sourceProblem_.clear();
  if (kind > 0 && stored_.contains(kind)) {
    calibration_ = stored_.value(kind);
    calibrationSource_ = tr("calibration %1 of %2").arg(kind).arg(QFileInfo(path_).fileName());
  } else if (kind == kShownRunSource && reader_ != nullptr && shownRunId_ > 0) {
    // A running run has not measured its steps yet: it is measured when
    // setTrace() comes again at its end.
    auto run = reader_->run(shownRunId_);
    if (run.isOk() && run->health == storage::RunHealth::kRunning) {
      sourceProblem_ = tr("Run %1 is still running: its costs are measured when it ends. Using "
                          "the FLOPs estimate until then.")
                           .arg(shownRunId_);
    } else if (!measuredRuns_.contains(shownRunId_)) {
      auto c = analysis::calibrateFromRun(*reader_, shownRunId_);
      if (c.isOk()) {
        measuredRuns_.insert(shownRunId_, *c);
      } else {
        sourceProblem_ = tr("Cannot measure run %1: %2. Using the FLOPs estimate.")
                             .arg(shownRunId_)
                             .arg(QString::fromStdString(c.status().message()));
      }
    }
    if (measuredRuns_.contains(shownRunId_)) {
      calibration_ = measuredRuns_.value(shownRunId_);
      calibrationSource_ = tr("measured from run %1").arg(shownRunId_);
    }
  }
  emit calibrationChanged();
  schedulePlan();
}

layout::PlanRequest PlannerPanel::request() const {
  layout::PlanRequest r;
  r.world = world_->value();
  const QString preset = modelChoice_->currentData().toString();
  r.model = preset == kEditorModel ? editorModel_ : *layout::modelPreset(preset.toStdString());
  if (memory_->value() > 0) r.memoryPerRankBytes = memory_->value() * kBytesPerGiB;
  r.microBatchSize = microBatchSize_->value();
  r.top = top_->value();
  // The table is for exploring (sortable, each row openable in the layout
  // editor): every variant, as before plan's one-per-shape list.
  r.everyVariant = true;
  return r;
}

Status PlannerPanel::plan() {
  replan_.stop();
  const layout::PlanRequest r = request();
  auto plan = layout::planLayouts(r, calibrationFor(calibration_, r.model));
  const QString prefix = sourceProblem_.isEmpty() ? QString() : sourceProblem_ + "\n";
  if (!plan.isOk()) {
    model_->setCandidates({});
    status_->setText(prefix + QString::fromStdString(plan.status().message()));
    return plan.status();
  }
  std::set<std::string> distinct;
  for (const layout::PlanCandidate& c : plan->best) {
    distinct.insert(c.prediction.warnings.begin(), c.prediction.warnings.end());
  }
  QString text = tr("%1 valid layouts of %2 ranks, %3 fit; costs: %4")
                     .arg(plan->valid)
                     .arg(r.world)
                     .arg(plan->fitting)
                     .arg(calibration_ ? calibrationSource_ : source_->itemText(0));
  const std::vector<std::string> warnings(distinct.begin(), distinct.end());
  for (const QString& w : shownWarnings(warnings, calibration_.has_value())) {
    text += "\n" + tr("warning: %1").arg(w);
  }
  status_->setText(prefix + text);
  model_->setCandidates(std::move(plan->best));
  fitCandidateColumns(table_);
  return Status::ok();
}

QString PlannerPanel::statusText() const {
  return status_->text();
}

layout::Layout PlannerPanel::appliedTo(const layout::Layout& candidate, layout::Layout base) {
  base.model = candidate.model;
  base.dp = candidate.dp;
  base.tp = candidate.tp;
  base.pp = candidate.pp;
  base.zeroStage = candidate.zeroStage;
  base.schedule = candidate.schedule;
  base.virtualChunks = candidate.virtualChunks;
  base.microBatches = candidate.microBatches;
  base.microBatchSize = candidate.microBatchSize;
  base.recompute = candidate.recompute;
  base.stageLayers = candidate.stageLayers;
  base.globalBatch.reset();
  return base;
}

}  // namespace bubblescope::gui
