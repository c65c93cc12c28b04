#include "gui/layout_editor.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QScrollBar>
#include <QToolButton>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

#include "planning/formulas.h"
#include "engine/layout/global_batch.h"
#include "engine/layout/hostfile.h"
#include "gui/grad_comm_fields.h"
#include "gui/layout_problem_fields.h"
#include "gui/prediction_label.h"

namespace bubblescope::gui {

namespace {

const char* const kCustom = "custom";
// Layout files: JSON with comments (every shipped sample is .jsonc) or plain.
const QStringList kLayoutNameFilters = {"*.jsonc", "*.json"};

struct ModelField {
  const char* key;
  const char* label;
  int32_t layout::ModelConfig::*member;
  int max;
};

constexpr ModelField kModelFields[] = {
    {"vocab_size", "vocabulary", &layout::ModelConfig::vocabSize, 1 << 20},
    {"seq_len", "sequence length", &layout::ModelConfig::seqLen, 1 << 16},
    {"layers", "layers", &layout::ModelConfig::numLayers, 1024},
    {"hidden", "hidden size", &layout::ModelConfig::hidden, 1 << 16},
    {"heads", "heads", &layout::ModelConfig::numHeads, 1024},
    {"mlp_ratio", "MLP ratio", &layout::ModelConfig::mlpRatio, 64},
};

}  // namespace

LayoutEditor::LayoutEditor(QWidget* parent) : QWidget(parent) {
  auto* column = new QVBoxLayout(this);
  auto* buttons = new QHBoxLayout;
  auto* load = new QPushButton(tr("Load…"), this);
  auto* save = new QPushButton(tr("Save…"), this);
  auto* samples = new QToolButton(this);
  samples->setObjectName("samples");
  samples->setText(tr("Samples"));
  samples->setPopupMode(QToolButton::InstantPopup);
  samplesMenu_ = new QMenu(samples);
  samples->setMenu(samplesMenu_);
  buttons->addWidget(load);
  buttons->addWidget(save);
  buttons->addWidget(samples);
  buttons->addStretch(1);
  column->addLayout(buttons);

  // The fields scroll: the editor's minimum height is its buttons and its
  // summary, not its two dozen fields, so the window fits a 1280 x 720
  // screen, and a problem message under a field makes the fields taller
  // (they scroll) instead of squashing a field or growing the window.
  fields_ = new QWidget;
  fields_->setObjectName("fields");
  auto* fieldsColumn = new QVBoxLayout(fields_);
  fieldsColumn->setContentsMargins(0, 0, 0, 0);
  form_ = new QFormLayout;
  form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  fieldsColumn->addLayout(form_);
  fieldsColumn->addStretch(1);
  scroll_ = new QScrollArea(this);
  scroll_->setObjectName("fieldsScroll");
  scroll_->setFrameShape(QFrame::NoFrame);
  scroll_->setWidgetResizable(true);
  scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  column->addWidget(scroll_, 1);

  preset_ = new QComboBox(this);
  preset_->setObjectName("model");
  for (const std::string& name : layout::modelPresetNames()) {
    preset_->addItem(QString::fromStdString(name));
  }
  preset_->addItem(kCustom);
  addRow("model", tr("Model"), preset_);
  for (const ModelField& f : kModelFields) addSpin(f.key, tr(f.label), 1, f.max);

  addSpin("dp", tr("Data parallel (dp)"), 1, 4096);
  addSpin("tp", tr("Tensor parallel (tp)"), 1, 4096);
  addSpin("pp", tr("Pipeline parallel (pp)"), 1, 4096);
  zero_ = new QComboBox(this);
  zero_->setObjectName("zero_stage");
  zero_->addItems({"0 (none)", "1 (optimizer states)", "2 (+ gradients)", "3 (+ parameters)"});
  addRow("zero_stage", tr("ZeRO stage"), zero_);
  schedule_ = new QComboBox(this);
  schedule_->setObjectName("schedule");
  for (layout::ScheduleKind k : layout::allScheduleKinds()) {
    schedule_->addItem(layout::scheduleKindName(k), static_cast<int>(k));
  }
  addRow("schedule", tr("Schedule"), schedule_);
  addSpin("virtual_chunks", tr("Chunks per stage (v)"), 1, 64);
  addSpin("micro_batches", tr("Micro-batches (m)"), 1, 100000);
  addSpin("micro_batch_size", tr("Micro-batch size"), 1, 100000);
  addSpin("steps", tr("Steps"), 1, 10000000);
  recompute_ = new QCheckBox(tr("recompute activations"), this);
  recompute_->setObjectName("recompute");
  addRow("recompute", tr("Recompute"), recompute_);
  overlap_ = new QCheckBox(tr("overlap gradient all-reduce with backward"), this);
  overlap_->setObjectName("overlap");
  addRow("overlap", tr("Overlap"), overlap_);
  gradComm_ = new GradCommFields(this);
  for (const GradCommFields::Row& row : gradComm_->rows()) addRow(row.key, row.label, row.field);
  backend_ = new QComboBox(this);
  backend_->setObjectName("backend");
  backend_->addItems({"cpu", "cuda", "auto"});
  addRow("backend", tr("Backend"), backend_);
  hosts_ = new QLineEdit(this);
  hosts_->setObjectName("hosts");
  hosts_->setPlaceholderText(tr("this machine (or: node1:4, node2:4)"));
  auto* hostsRow = new QWidget(this);
  auto* hostsBox = new QHBoxLayout(hostsRow);
  hostsBox->setContentsMargins(0, 0, 0, 0);
  hostsBox->addWidget(hosts_, 1);
  auto* hostfile = new QPushButton(tr("Hostfile…"), hostsRow);
  hostfile->setObjectName("hostfile");
  hostfile->setToolTip(tr("Fill the hosts from an mpirun hostfile (node1 slots=4 per line)"));
  hostsBox->addWidget(hostfile);
  addRow("hosts", tr("Hosts"), hostsRow);

  scroll_->setWidget(fields_);
  fitScrollWidth();

  summary_ = new QLabel(this);
  summary_->setObjectName("summary");
  summary_->setWordWrap(true);
  generalProblems_ = new QLabel(this);
  generalProblems_->setWordWrap(true);
  generalProblems_->setStyleSheet("color: #c62828");
  prediction_ = new PredictionLabel(this);
  column->addWidget(summary_);
  column->addWidget(prediction_);
  column->addWidget(generalProblems_);
  runButton_ = new QPushButton(tr("Run this layout"), this);
  runButton_->setObjectName("run");
  auto* simulate = new QPushButton(tr("Simulate the ideal schedule"), this);
  simulate->setObjectName("simulate");
  simulate->setToolTip(
      tr("Show this layout's schedule in the teaching lab, simulated with the "
         "shown run's op costs, beside the run"));
  column->addWidget(runButton_);
  column->addWidget(simulate);
  connect(simulate, &QPushButton::clicked, this, &LayoutEditor::simulateRequested);

  connect(preset_, &QComboBox::currentIndexChanged, this, &LayoutEditor::onPresetChosen);
  for (QSpinBox* s : spins_)
    connect(s, &QSpinBox::valueChanged, this, &LayoutEditor::onFieldEdited);
  for (QComboBox* c : {zero_, schedule_, backend_}) {
    connect(c, &QComboBox::currentIndexChanged, this, &LayoutEditor::onFieldEdited);
  }
  for (QCheckBox* c : {recompute_, overlap_}) {
    connect(c, &QCheckBox::toggled, this, &LayoutEditor::onFieldEdited);
  }
  connect(hosts_, &QLineEdit::textChanged, this, &LayoutEditor::onFieldEdited);
  connect(gradComm_, &GradCommFields::edited, this, &LayoutEditor::onFieldEdited);
  connect(runButton_, &QPushButton::clicked, this, &LayoutEditor::runRequested);
  connect(load, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Load layout"), {}, tr("Layouts (*.jsonc *.json);;All files (*)"));
    if (path.isEmpty()) return;
    const Status s = loadFile(path);
    if (!s.isOk())
      QMessageBox::warning(this, tr("Load layout"), QString::fromStdString(s.message()));
  });
  connect(save, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save layout"), "layout.jsonc",
                                                      tr("Layouts (*.jsonc *.json)"));
    if (path.isEmpty()) return;
    const Status s = saveFile(path);
    if (!s.isOk())
      QMessageBox::warning(this, tr("Save layout"), QString::fromStdString(s.message()));
  });
  connect(hostfile, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Hostfile"), {}, tr("Hostfiles (*);;All files (*)"));
    if (path.isEmpty()) return;
    const Status s = loadHostfile(path);
    if (!s.isOk()) QMessageBox::warning(this, tr("Hostfile"), QString::fromStdString(s.message()));
  });
  connect(samplesMenu_, &QMenu::aboutToShow, this, &LayoutEditor::fillSamplesMenu);
  setLayout(layout::Layout{});
}

void LayoutEditor::fitScrollWidth() {
  // As wide as the fields need beside the vertical scroll bar: never a
  // horizontal one, and the fields keep their width when it comes and goes.
  scroll_->setMinimumWidth(fields_->minimumSizeHint().width() +
                           scroll_->verticalScrollBar()->sizeHint().width() +
                           2 * scroll_->frameWidth());
}

void LayoutEditor::addRow(const QString& key, const QString& label, QWidget* field) {
  auto* cell = new QWidget(this);
  auto* box = new QVBoxLayout(cell);
  box->setContentsMargins(0, 0, 0, 0);
  box->setSpacing(1);
  box->addWidget(field);
  auto* problem = new QLabel(cell);
  problem->setObjectName(key + "_problem");
  problem->setWordWrap(true);
  problem->setStyleSheet("color: #c62828");
  problem->hide();
  box->addWidget(problem);
  problemLabels_[key] = problem;
  form_->addRow(label, cell);
}

QSpinBox* LayoutEditor::addSpin(const QString& key, const QString& label, int min, int max) {
  auto* spin = new QSpinBox(this);
  spin->setObjectName(key);
  spin->setRange(min, max);
  spins_[key] = spin;
  addRow(key, label, spin);
  return spin;
}

layout::Layout LayoutEditor::layout() const {
  layout::Layout l = base_;
  l.model.preset = preset_->currentText().toStdString();
  for (const ModelField& f : kModelFields) l.model.*f.member = spins_[f.key]->value();
  l.dp = spins_["dp"]->value();
  l.tp = spins_["tp"]->value();
  l.pp = spins_["pp"]->value();
  l.zeroStage = layout::zeroStageFromNumber(zero_->currentIndex()).value();
  l.schedule = static_cast<layout::ScheduleKind>(schedule_->currentData().toInt());
  l.virtualChunks = spins_["virtual_chunks"]->value();
  l.microBatches = spins_["micro_batches"]->value();
  l.microBatchSize = spins_["micro_batch_size"]->value();
  l.steps = spins_["steps"]->value();
  l.recompute = recompute_->isChecked();
  l.overlap = overlap_->isChecked();
  gradComm_->apply(l);
  l.backend = layout::parseBackend(backend_->currentText().toStdString()).value();
  l.hosts.clear();
  for (const QString& h : hosts_->text().split(QRegularExpression("[,\\s]+"), Qt::SkipEmptyParts)) {
    l.hosts.push_back(h.toStdString());
  }
  // The editor derives the global batch; a stale one from a file would only
  // contradict the fields.
  l.globalBatch.reset();
  return l;
}

void LayoutEditor::setLayout(const layout::Layout& l) {
  updating_ = true;
  base_ = l;
  const int presetIndex = preset_->findText(QString::fromStdString(l.model.preset));
  preset_->setCurrentIndex(presetIndex >= 0 ? presetIndex : preset_->findText(kCustom));
  for (const ModelField& f : kModelFields) spins_[f.key]->setValue(l.model.*f.member);
  spins_["dp"]->setValue(l.dp);
  spins_["tp"]->setValue(l.tp);
  spins_["pp"]->setValue(l.pp);
  zero_->setCurrentIndex(layout::zeroStageNumber(l.zeroStage));
  schedule_->setCurrentIndex(schedule_->findData(static_cast<int>(l.schedule)));
  spins_["virtual_chunks"]->setValue(l.virtualChunks);
  spins_["micro_batches"]->setValue(l.microBatches);
  spins_["micro_batch_size"]->setValue(l.microBatchSize);
  spins_["steps"]->setValue(l.steps);
  recompute_->setChecked(l.recompute);
  overlap_->setChecked(l.overlap);
  gradComm_->set(l);
  backend_->setCurrentText(layout::backendName(l.backend));
  QStringList hosts;
  for (const std::string& h : l.hosts) hosts << QString::fromStdString(h);
  hosts_->setText(hosts.join(", "));
  updating_ = false;
  revalidate();
}

void LayoutEditor::onPresetChosen() {
  if (updating_) return;
  auto preset = layout::modelPreset(preset_->currentText().toStdString());
  if (preset.isOk()) {
    updating_ = true;
    for (const ModelField& f : kModelFields) spins_[f.key]->setValue((*preset).*f.member);
    updating_ = false;
  }
  revalidate();
}

void LayoutEditor::onFieldEdited() {
  if (updating_) return;
  // Editing a size that no longer matches the preset makes the model custom.
  auto preset = layout::modelPreset(preset_->currentText().toStdString());
  if (preset.isOk()) {
    for (const ModelField& f : kModelFields) {
      if (spins_[f.key]->value() != (*preset).*f.member) {
        updating_ = true;
        preset_->setCurrentIndex(preset_->findText(kCustom));
        updating_ = false;
        break;
      }
    }
  }
  revalidate();
}

QString LayoutEditor::summaryText() const {
  return summary_->text();
}

void LayoutEditor::revalidate() {
  const layout::Layout l = layout();
  problems_.clear();
  fieldProblems_.clear();
  QStringList general;
  for (const std::string& p : layout::layoutProblems(l)) {
    const QString text = QString::fromStdString(p);
    problems_ << text;
    const QString field = fieldOfProblem(p);
    if (!problemLabels_.contains(field)) {
      general << text;
      continue;
    }
    QString& slot = fieldProblems_[field];
    slot = slot.isEmpty() ? text : slot + "\n" + text;
  }
  for (auto it = problemLabels_.begin(); it != problemLabels_.end(); ++it) {
    const QString text = fieldProblems_.value(it.key());
    it.value()->setText(text);
    it.value()->setVisible(!text.isEmpty());
  }
  generalProblems_->setText(general.join("\n"));
  generalProblems_->setVisible(!general.isEmpty());
  fitScrollWidth();

  const int64_t world = int64_t{l.dp} * l.tp * l.pp;
  const int64_t sequences = layout::globalBatchSequences(l);
  QString text = tr("<b>World size:</b> %1 %2 · <b>global batch:</b> %3 %4 (%5 tokens)")
                     .arg(world)
                     .arg(world == 1 ? tr("rank") : tr("ranks"))
                     .arg(sequences)
                     .arg(sequences == 1 ? tr("sequence") : tr("sequences"))
                     .arg(sequences * l.model.seqLen);
  if (l.pp > 1 && l.microBatches >= 1) {
    const double bubble = layout::formulaBubble(l);
    text += tr(" · <b>formula bubble:</b> %1%").arg(bubble * 100, 0, 'f', 1);
  }
  summary_->setText(text);
  prediction_->setLayout(l);
  runButton_->setEnabled(problems_.isEmpty());
  emit layoutChanged();
}

Status LayoutEditor::loadFile(const QString& path) {
  auto l = layout::layoutFromFile(path.toStdString());
  if (!l.isOk()) return l.status();
  setLayout(*l);
  return Status::ok();
}

Status LayoutEditor::loadHostfile(const QString& path) {
  auto hosts = layout::hostfileHosts(path.toStdString());
  if (!hosts.isOk()) return hosts.status();
  QStringList entries;
  for (const std::string& h : *hosts) entries << QString::fromStdString(h);
  base_.hostfile.clear();  // the hosts now say where the ranks run
  hosts_->setText(entries.join(", "));
  hosts_->setToolTip(tr("from %1").arg(path));
  return Status::ok();
}

Status LayoutEditor::saveFile(const QString& path) const {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
    return Status::ioError("cannot write " + path.toStdString() + ": " +
                           file.errorString().toStdString());
  }
  const std::string text = layout::toJson(layout()).dump(2) + "\n";
  if (file.write(text.data(), static_cast<qint64>(text.size())) !=
      static_cast<qint64>(text.size())) {
    return Status::ioError("cannot write " + path.toStdString() + ": " +
                           file.errorString().toStdString());
  }
  return Status::ok();
}

QStringList LayoutEditor::sampleFolders() {
  const QString app = QCoreApplication::applicationDirPath();
  return {app + "/../share/bubblescope/samples/layouts", app + "/../../samples/layouts",
          QDir::currentPath() + "/samples/layouts",
          QStringLiteral(BUBBLESCOPE_SOURCE_DIR "/samples/layouts")};
}

QStringList LayoutEditor::sampleFiles() {
  for (const QString& folder : sampleFolders()) {
    const QDir dir(folder);
    const QStringList files = dir.entryList(kLayoutNameFilters, QDir::Files, QDir::Name);
    if (files.isEmpty()) continue;
    QStringList paths;
    for (const QString& f : files) paths << dir.filePath(f);
    return paths;
  }
  return {};
}

void LayoutEditor::fillSamplesMenu() {
  samplesMenu_->clear();
  const QStringList paths = sampleFiles();
  for (const QString& path : paths) {
    samplesMenu_->addAction(QFileInfo(path).fileName(), this, [this, path] {
      const Status s = loadFile(path);
      if (!s.isOk()) {
        QMessageBox::warning(this, tr("Load sample"), QString::fromStdString(s.message()));
      }
    });
  }
  if (paths.isEmpty()) {
    samplesMenu_->addAction(tr("(no samples/layouts folder found)"))->setEnabled(false);
  }
}

}  // namespace bubblescope::gui
