#include "gui/teaching_lab.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QShowEvent>
#include <QSignalBlocker>
#include <QSlider>
#include <QTimer>
#include <QVBoxLayout>
#include <cmath>

#include "gui/teaching_view.h"
#include "storage/analysis/ideal_replay.h"
#include "storage/analysis/measured_ops.h"

namespace bubblescope::gui {
namespace {

constexpr int kPlayIntervalMs = 150;
constexpr double kRatioScale = 100.0;  // sliders hold hundredths of t_F
constexpr int kRatioMax = 800;         // up to 8 t_F

int ratioValue(double ratio) {
  return static_cast<int>(std::lround(ratio * kRatioScale));
}

}  // namespace

TeachingLab::TeachingLab(QWidget* parent) : QWidget(parent) {
  setObjectName("teachingLab");
  auto* column = new QVBoxLayout(this);
  auto* grid = new QGridLayout;
  column->addLayout(grid);

  schedule_ = new QComboBox(this);
  schedule_->setObjectName("lab_schedule");
  for (layout::ScheduleKind k : layout::allScheduleKinds()) {
    schedule_->addItem(layout::scheduleKindName(k), static_cast<int>(k));
  }
  p_ = addSlider("lab_p", 1, 16);
  m_ = addSlider("lab_m", 1, 64);
  v_ = addSlider("lab_v", 2, 8);
  b_ = addSlider("lab_b", 0, kRatioMax);
  w_ = addSlider("lab_w", 0, kRatioMax);
  comm_ = addSlider("lab_comm", 0, kRatioMax);
  const struct {
    const char* label;
    QWidget* field;
  } rows[] = {{"schedule", schedule_}, {"stages p", p_}, {"micro-batches m", m_}, {"chunks v", v_},
              {"B / F", b_},           {"W / F", w_},    {"comm / F", comm_}};
  int i = 0;
  for (const auto& r : rows) {
    const int row = i % 4, col = (i / 4) * 3;
    grid->addWidget(new QLabel(tr(r.label), this), row, col);
    grid->addWidget(r.field, row, col + 1);
    if (auto* slider = qobject_cast<QSlider*>(r.field)) {
      auto* value = new QLabel(this);
      value->setObjectName(slider->objectName() + "_value");
      value->setMinimumWidth(40);
      grid->addWidget(value, row, col + 2);
    }
    ++i;
  }

  // Two rows of buttons (the lab fits beside the layout editor on a
  // 1280 px screen): stepping, then the run's.
  auto* buttons = new QHBoxLayout;
  auto button = [&](const char* name, const QString& text, void (TeachingLab::*slot)()) {
    auto* b = new QPushButton(text, this);
    b->setObjectName(name);
    buttons->addWidget(b);
    if (slot != nullptr) connect(b, &QPushButton::clicked, this, slot);
    return b;
  };
  button("lab_restart", tr("|◀ Start"), &TeachingLab::restart);
  button("lab_back", tr("◀ Back"), &TeachingLab::stepBack);
  button("lab_step", tr("Step ▶"), &TeachingLab::stepForward);
  play_ = button("lab_play", tr("Play"), nullptr);
  button("lab_all", tr("Show all ▶|"), &TeachingLab::showAll);
  buttons->addStretch(1);
  column->addLayout(buttons);
  buttons = new QHBoxLayout;
  button("lab_from_run", tr("Reset to the run"), nullptr);
  auto* run = button("lab_run", tr("Run this layout"), nullptr);
  run->setToolTip(
      tr("Train this schedule, p, m and v for real (the layout editor holds them), "
         "then compare the run with this ideal schedule"));
  connect(run, &QPushButton::clicked, this, &TeachingLab::runRequested);
  sameScale_ = new QCheckBox(tr("same time scale as the run"), this);
  sameScale_->setObjectName("lab_same_scale");
  sameScale_->setToolTip(
      tr("Off: the measured step is stretched to the ideal step's length "
         "(the default for an oversubscribed run)"));
  buttons->addSpacing(12);
  buttons->addWidget(sameScale_);
  buttons->addStretch(1);
  column->addLayout(buttons);
  // "Reset to the run": the run's cost ratios again, on the layout shown.
  connect(findChild<QPushButton*>("lab_from_run"), &QPushButton::clicked, this, [this] {
    if (simulate(lastLayout_).isOk()) emit layoutEdited();
  });
  connect(play_, &QPushButton::clicked, this, [this] { setPlaying(!playing()); });
  connect(sameScale_, &QCheckBox::toggled, this, [this](bool same) {
    model_.setSameTimeScale(same);
    refresh();
  });

  formula_ = new QLabel(this);
  formula_->setObjectName("lab_formula");
  bubble_ = new QLabel(this);
  bubble_->setObjectName("lab_bubble");
  memory_ = new QLabel(this);
  memory_->setObjectName("lab_memory");
  error_ = new QLabel(this);
  error_->setObjectName("lab_error");
  error_->setWordWrap(true);
  error_->setStyleSheet("color: #c62828");
  for (QLabel* l : {formula_, bubble_, memory_, error_}) column->addWidget(l);

  view_ = new TeachingView(&model_, this);
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setWidget(view_);
  column->addWidget(scroll, 1);

  timer_ = new QTimer(this);
  timer_->setInterval(kPlayIntervalMs);
  connect(timer_, &QTimer::timeout, this, [this] {
    stepForward();
    if (model_.atEnd()) setPlaying(false);
  });
  connect(schedule_, &QComboBox::currentIndexChanged, this, &TeachingLab::onScheduleChosen);
  for (QSlider* s : {p_, m_, v_, b_, w_, comm_}) {
    connect(s, &QSlider::valueChanged, this, &TeachingLab::onControlsChanged);
  }
  writeControls(model_.params());
  refresh();
}

QSlider* TeachingLab::addSlider(const QString& name, int min, int max) {
  auto* s = new QSlider(Qt::Horizontal, this);
  s->setObjectName(name);
  s->setRange(min, max);
  s->setMinimumWidth(140);
  return s;
}

void TeachingLab::setMeasuredRun(storage::TraceReader* reader, int64_t runId) {
  reader_ = reader;
  runId_ = reader != nullptr ? runId : 0;
  loadedRunId_ = -1;  // read again at the next simulate()
  if (!pending_) pending_ = lastLayout_;
  // Later, not now: the editor is about to give the lab the run's layout
  // (followLayout), which is the one to draw with the run's costs.
  if (isVisible()) QMetaObject::invokeMethod(this, &TeachingLab::catchUp, Qt::QueuedConnection);
}

void TeachingLab::followLayout(const layout::Layout& layout) {
  pending_ = layout;
  if (isVisible()) catchUp();
}

void TeachingLab::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  catchUp();
}

void TeachingLab::catchUp() {
  if (!pending_) return;
  const layout::Layout l = *pending_;
  pending_.reset();
  if (loadedRunId_ != runId_) {  // another run: its costs
    (void)simulate(l);
    return;
  }
  lastLayout_ = l;
  const TeachingParams wanted = model_.params().withLayout(l);
  if (wanted == model_.params()) return;
  const Status s = model_.setParams(wanted);
  writeControls(model_.params());
  error_->setText(s.isOk() ? QString() : QString::fromStdString(s.message()));
  refresh();
}

void TeachingLab::loadMeasured() {
  if (loadedRunId_ == runId_) return;
  loadedRunId_ = runId_;
  if (reader_ == nullptr || runId_ <= 0) {
    model_.setMeasured(std::nullopt, {});
    return;
  }
  auto run = reader_->run(runId_);
  const QString label =
      run.isOk()
          ? QStringLiteral("run %1 (%2)").arg(runId_).arg(QString::fromStdString(run->info.name))
          : QStringLiteral("run %1").arg(runId_);
  auto step = analysis::measuredStep(*reader_, runId_);
  model_.setMeasured(step.isOk() ? std::optional(*step) : std::nullopt, label);
  if (step.isOk() && !step->oversubscribed.empty()) {
    // Its lengths mean little: replay its thread-CPU op costs as if each
    // rank had its own core.
    auto ops = analysis::measureOps(*reader_, runId_);
    auto replay = ops.isOk() ? analysis::replayIdealHardware(*ops)
                             : Result<analysis::IdealReplay>(ops.status());
    model_.setReplay(replay.isOk() ? std::optional(*replay) : std::nullopt,
                     replay.isOk() ? QString() : QString::fromStdString(replay.status().message()));
  }
  const QSignalBlocker block(sameScale_);
  sameScale_->setChecked(model_.sameTimeScale());
}

Status TeachingLab::simulate(const layout::Layout& layout) {
  pending_.reset();  // this layout is drawn now
  lastLayout_ = layout;
  loadMeasured();
  const TeachingParams params = model_.paramsFor(layout);
  const Status s = model_.setParams(params);
  writeControls(s.isOk() ? params : model_.params());
  error_->setText(s.isOk() ? QString() : QString::fromStdString(s.message()));
  refresh();
  return s;
}

void TeachingLab::writeControls(const TeachingParams& t) {
  updating_ = true;
  schedule_->setCurrentIndex(schedule_->findData(static_cast<int>(t.kind)));
  p_->setValue(t.p);
  m_->setValue(t.m);
  v_->setValue(t.v);
  v_->setEnabled(t.kind == layout::ScheduleKind::kInterleaved);
  b_->setValue(ratioValue(t.backward));
  w_->setValue(ratioValue(t.weight));
  comm_->setValue(ratioValue(t.comm));
  updating_ = false;
}

void TeachingLab::onScheduleChosen() {
  if (updating_) return;
  // A new schedule keeps p, m, v and the cost ratios (a fused backward
  // splits in halves for zb-h1, a split one fuses for the others).
  layout::Layout l = lastLayout_;
  l.schedule = static_cast<layout::ScheduleKind>(schedule_->currentData().toInt());
  l.pp = p_->value();
  l.microBatches = m_->value();
  l.virtualChunks = v_->value();
  const TeachingParams wanted = model_.params().withLayout(l);
  const Status s = model_.setParams(wanted);
  writeControls(model_.params());
  error_->setText(s.isOk() ? QString() : QString::fromStdString(s.message()));
  refresh();
  if (!s.isOk()) return;
  lastLayout_ = l;
  emit layoutEdited();
}

void TeachingLab::onControlsChanged() {
  if (updating_) return;
  const TeachingParams before = model_.params();
  TeachingParams t = before;
  t.p = p_->value();
  t.m = m_->value();
  t.v = v_->value();
  t.backward = b_->value() / kRatioScale;
  t.weight = w_->value() / kRatioScale;
  t.comm = comm_->value() / kRatioScale;
  const Status s = model_.setParams(t);
  error_->setText(s.isOk() ? QString() : QString::fromStdString(s.message()));
  refresh();
  const bool layoutMoved = t.p != before.p || t.m != before.m || t.chunks() != before.chunks();
  if (s.isOk() && layoutMoved) emit layoutEdited();
}

void TeachingLab::stepForward() {
  model_.setShown(model_.shown() + 1);
  refresh();
}

void TeachingLab::stepBack() {
  if (model_.shown() > 0) model_.setShown(model_.shown() - 1);
  refresh();
}

void TeachingLab::restart() {
  model_.setShown(0);
  refresh();
}

void TeachingLab::showAll() {
  setPlaying(false);
  model_.setShown(model_.order().size());
  refresh();
}

void TeachingLab::setPlaying(bool playing) {
  if (playing && model_.atEnd()) model_.setShown(0);
  if (playing) {
    timer_->start();
  } else {
    timer_->stop();
  }
  play_->setText(playing ? tr("Pause") : tr("Play"));
  refresh();
}

bool TeachingLab::playing() const {
  return timer_->isActive();
}

void TeachingLab::refresh() {
  for (QSlider* s : {p_, m_, v_}) {
    // A schedule without chunks has one per stage, whatever the idle
    // slider holds (it read "chunks v 2" beside 1F1B).
    const int value = s == v_ && !v_->isEnabled() ? 1 : s->value();
    findChild<QLabel*>(s->objectName() + "_value")->setText(QString::number(value));
  }
  for (QSlider* s : {b_, w_, comm_}) {
    findChild<QLabel*>(s->objectName() + "_value")
        ->setText(QString::number(s->value() / kRatioScale, 'f', 2));
  }
  formula_->setText(tr("<b>Formula bubble:</b> %1 · <b>simulated:</b> %2%")
                        .arg(model_.formulaText())
                        .arg(model_.simulation().bubbleFraction * 100, 0, 'f', 1));
  bubble_->setText(tr("<b>Bubble so far:</b> %1% after %2 of %3 ops")
                       .arg(model_.bubbleSoFar() * 100, 0, 'f', 1)
                       .arg(model_.shown())
                       .arg(model_.order().size()));
  QStringList peaks;
  for (int32_t peak : model_.peakInFlight()) peaks << QString::number(peak);
  memory_->setText(
      tr("<b>Activations held at most</b> (%1, stage 0 … %2): %3")
          .arg(model_.schedule().chunks > 1 ? tr("micro-batch chunks") : tr("micro-batches"))
          .arg(model_.schedule().stages - 1)
          .arg(peaks.join(" · ")));
  view_->modelChanged();
  emit changed();
}

}  // namespace bubblescope::gui
