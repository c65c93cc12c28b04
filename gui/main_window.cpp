#include "gui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <cstdio>

#include "engine/layout/layout.h"
#include "gui/analysis_worker.h"
#include "gui/charts_panel.h"
#include "gui/compare_view.h"
#include "gui/layout_editor.h"
#include "gui/kernels_table_model.h"
#include "gui/metrics_table_model.h"
#include "gui/planner_panel.h"
#include "gui/process_run_launcher.h"
#include "gui/recent_files.h"
#include "gui/run_progress_widget.h"
#include "gui/runs_table_model.h"
#include "gui/teaching_lab.h"
#include "gui/timeline_panel.h"
#include "gui/timeline_replay.h"

namespace bubblescope::gui {

MainWindow::MainWindow(std::unique_ptr<RunLauncher> launcher, QWidget* parent)
    : QMainWindow(parent),
      launcher_(launcher ? std::move(launcher) : std::make_unique<ProcessRunLauncher>()) {
  setWindowTitle(tr("Bubblescope"));
  setWindowIcon(QIcon(":/bubblescope/icon.svg"));
  setAcceptDrops(true);

  runs_ = new RunsTableModel(this);
  runsView_ = new QTableView(this);
  runsView_->setModel(runs_);
  runsView_->setSelectionBehavior(QAbstractItemView::SelectRows);
  runsView_->verticalHeader()->hide();
  runsView_->horizontalHeader()->setStretchLastSection(true);
  runsView_->setAlternatingRowColors(true);
  runsView_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  runsView_->setToolTip(tr("Select two runs and press Ctrl+K to compare them"));
  timeline_ = new TimelinePanel(this);
  charts_ = new ChartsPanel(this);
  metrics_ = new MetricsTableModel(this);
  metricsView_ = new QTableView(this);
  metricsView_->setModel(metrics_);
  metricsView_->verticalHeader()->hide();
  metricsView_->setAlternatingRowColors(true);
  metricsView_->setSelectionBehavior(QAbstractItemView::SelectRows);
  metricsView_->setSortingEnabled(false);
  compare_ = new CompareView(this);
  tabs_ = new QTabWidget(this);
  auto* timelinePage = new QWidget(this);
  auto* timelineColumn = new QVBoxLayout(timelinePage);
  timelineColumn->setContentsMargins(0, 0, 0, 0);
  timelineColumn->setSpacing(0);
  idealReplay_ = new TimelineReplay(timeline_, timelinePage);
  timelineColumn->addWidget(idealReplay_);
  timelineColumn->addWidget(timeline_, 1);
  tabs_->addTab(timelinePage, tr("Timeline"));
  // The charts need about 800 x 560 px: on a small screen they scroll
  // rather than hold the window larger than the screen.
  auto* chartsScroll = new QScrollArea(this);
  chartsScroll->setObjectName("chartsScroll");
  chartsScroll->setFrameShape(QFrame::NoFrame);
  chartsScroll->setWidgetResizable(true);
  chartsScroll->setWidget(charts_);
  tabs_->addTab(chartsScroll, tr("Charts"));
  tabs_->addTab(metricsView_, tr("Metrics"));
  tabs_->addTab(compare_, tr("Compare"));
  teaching_ = new TeachingLab(this);
  tabs_->addTab(teaching_, tr("Teaching lab"));
  analysis_ = new AnalysisWorker(this);
  compareAnalysis_ = new AnalysisWorker(this);

  split_ = new QSplitter(Qt::Vertical, this);
  split_->addWidget(runsView_);
  split_->addWidget(tabs_);
  split_->setStretchFactor(0, 0);
  split_->setStretchFactor(1, 1);
  fitRunsList();
  setCentralWidget(split_);

  editor_ = new LayoutEditor(this);
  auto* editorDock = new QDockWidget(tr("Layout"), this);
  editorDock->setObjectName("layoutDock");
  editorDock->setWidget(editor_);
  addDockWidget(Qt::LeftDockWidgetArea, editorDock);

  output_ = new QPlainTextEdit(this);
  output_->setReadOnly(true);
  output_->setMaximumBlockCount(5000);
  // Three lines at least (not a scroll area's default 70 px): with the dock
  // open the window still fits a 1280 x 720 screen.
  output_->setMinimumHeight(3 * output_->fontMetrics().lineSpacing() + 2 * output_->frameWidth());
  auto* outputDock = new QDockWidget(tr("Run output"), this);
  outputDock->setObjectName("outputDock");
  outputDock->setWidget(output_);
  addDockWidget(Qt::BottomDockWidgetArea, outputDock);
  outputDock->hide();

  statusLabel_ = new QLabel(this);
  statusBar()->addWidget(statusLabel_, 1);
  progress_ = new RunProgressWidget(this);
  statusBar()->addPermanentWidget(progress_);
  connect(progress_, &RunProgressWidget::stopRequested, this, &MainWindow::stopRun);

  connect(runsView_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (!current.isValid()) return;
            const auto id = runs_->data(current, RunsTableModel::kRunIdRole).toLongLong();
            const Status s = showRun(id);
            if (!s.isOk()) showError(tr("Show run"), s);
          });
  connect(timeline_, &TimelinePanel::runUpdated, this, &MainWindow::onRunUpdated);
  connect(analysis_, &AnalysisWorker::progress, charts_, &ChartsPanel::setProgress);
  connect(analysis_, &AnalysisWorker::finished, this,
          [this](const std::vector<analysis::RunReport>& reports) {
            if (!reports.empty()) onReport(reports.front());
          });
  connect(analysis_, &AnalysisWorker::failed, this, [this](const QString& m) {
    charts_->setProgress(1, 1);
    charts_->setMessage(tr("Analysis failed: %1").arg(m));
  });
  connect(compareAnalysis_, &AnalysisWorker::progress, this, [this](int done, int total) {
    compare_->setMessage(tr("analysing %1/%2 ranks…").arg(done).arg(total));
  });
  connect(compareAnalysis_, &AnalysisWorker::finished, this,
          [this](const std::vector<analysis::RunReport>& r) {
            if (r.size() == 2) showComparedReports(r);
          });
  connect(compareAnalysis_, &AnalysisWorker::failed, this,
          [this](const QString& m) { compare_->setMessage(tr("Analysis failed: %1").arg(m)); });
  connect(charts_, &ChartsPanel::rankClicked, this,
          [this](int rank) { showRanksInTimeline({rank}); });
  connect(charts_, &ChartsPanel::stageClicked, this, [this](int stage) {
    if (!report_) return;
    for (const auto& s : report_->stages) {
      if (s.stage == stage) showRanksInTimeline(s.ranks);
    }
  });
  connect(charts_, &ChartsPanel::stepClicked, this, [this](int step) {
    for (const trace_model::StepWindow& w : timeline_->model()->steps()) {
      if (w.step != step) continue;
      timeline_->view()->setFollowing(false);
      timeline_->view()->setViewRange(w.startNs, w.endNs);
      tabs_->setCurrentIndex(kTimelineTab);
    }
  });
  connect(metricsView_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    showRanksInTimeline({metrics_->data(index, MetricsTableModel::kRankRole).toInt()});
  });
  reanalyse_.setSingleShot(true);
  reanalyse_.setInterval(2000);
  connect(&reanalyse_, &QTimer::timeout, this, [this] { (void)analyzeShownRun(); });
  connect(timeline_, &TimelinePanel::errorOccurred, this,
          [this](const QString& m) { setStatus(m, true); });
  connect(editor_, &LayoutEditor::runRequested, this, &MainWindow::startRun);
  connect(editor_, &LayoutEditor::simulateRequested, this, &MainWindow::simulateInLab);
  // The lab's schedule, p, m and v are the editor's: "Run this layout" (in
  // either) runs what the lab shows.
  connect(teaching_, &TeachingLab::layoutEdited, this,
          [this] { editor_->setLayout(teaching_->model().params().appliedTo(editor_->layout())); });
  // ... and the editor's are the lab's (drawn when the lab is shown).
  connect(editor_, &LayoutEditor::layoutChanged, this,
          [this] { teaching_->followLayout(editor_->layout()); });
  connect(teaching_, &TeachingLab::runRequested, this, &MainWindow::startRun);
  connect(launcher_.get(), &RunLauncher::outputLine, this, [this, outputDock](const QString& l) {
    outputDock->show();
    output_->appendPlainText(l);
    progress_->addOutputLine(l);
  });
  connect(launcher_.get(), &RunLauncher::finished, this, &MainWindow::onRunFinished);
  connect(launcher_.get(), &RunLauncher::runBegun, this, [this](qint64 id) {
    launchedRunId_ = id;
    pollLaunchedRun();
  });
  launchPoll_.setInterval(500);
  connect(&launchPoll_, &QTimer::timeout, this, &MainWindow::pollLaunchedRun);

  buildPlanner();
  buildKernelsTab();
  buildMenus();
  resize(1400, 860);
}

MainWindow::~MainWindow() {
  // The timeline holds a pointer to the reader: detach it first.
  timeline_->clear();
}

void MainWindow::fillRecentMenu() {
  recentMenu_->clear();
  const QStringList files = RecentFiles::list();
  for (const QString& f : files) {
    recentMenu_->addAction(f, this, [this, f] {
      const Status s = openFile(f);
      if (!s.isOk()) showError(tr("Open trace"), s);
    });
  }
  if (files.isEmpty()) recentMenu_->addAction(tr("(none)"))->setEnabled(false);
}

void MainWindow::chooseAndOpen() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open trace"), {},
                                                    tr("Bubblescope traces (*.db);;All files (*)"));
  if (path.isEmpty()) return;
  const Status s = openFile(path);
  if (!s.isOk()) showError(tr("Open trace"), s);
}

Status MainWindow::openFile(const QString& path) {
  auto reader = storage::TraceReader::open(path.toStdString());
  if (!reader.isOk()) return reader.status();
  // Nothing of the previous file stays: its runs, the views that hold its
  // reader, its analyses, the run kept to compare with.
  timeline_->clear();
  compare_->clear();
  idealReplay_->setMeasuredRun(nullptr, 0);
  teaching_->setMeasuredRun(nullptr, 0);
  analysis_->cancel();
  compareAnalysis_->cancel();
  report_.reset();
  metrics_->clear();
  clearKernels();
  charts_->clear();
  baselineRunId_ = 0;
  runs_->setRows({});
  reader_ = std::move(*reader);
  path_ = path;
  planner_->setTrace(reader_.get(), path_, 0);
  RecentFiles::add(path);
  setWindowTitle(tr("%1 — Bubblescope").arg(QFileInfo(path).fileName()));
  BS_RETURN_IF_ERROR(reloadRuns());
  if (runs_->rowCount() > 0) {
    runsView_->selectRow(runs_->rowCount() - 1);  // shows it
  }
  setStatus(fileStatus());
  return Status::ok();
}

QString MainWindow::fileStatus() const {
  const int runs = runs_->rowCount();
  return tr("%1 · %2 %3").arg(path_).arg(runs).arg(runs == 1 ? tr("run") : tr("runs"));
}

void MainWindow::setStatus(const QString& text, bool error) {
  statusLabel_->setText(text);
  statusError_ = error;
  // An error in the palette's error red (the editor's problems' colour).
  statusLabel_->setStyleSheet(error ? QStringLiteral("color: #c62828") : QString());
}

Status MainWindow::reloadRuns() {
  if (reader_ == nullptr) return Status::failedPrecondition("no trace file is open");
  auto rows = loadRunRows(*reader_);
  if (!rows.isOk()) return rows.status();
  const int before = runs_->rowCount();
  runs_->syncRows(*rows);
  runsView_->resizeColumnsToContents();
  // A long name or layout (an imported run's says how it was imported) is
  // cut, its whole text in the tooltip: the status and numbers stay in sight.
  for (int column : {RunsTableModel::kRun, RunsTableModel::kLayout}) {
    if (runsView_->columnWidth(column) > kWidestTextColumnPx) {
      runsView_->setColumnWidth(column, kWidestTextColumnPx);
    }
  }
  if (runs_->rowCount() != before) fitRunsList();
  return Status::ok();
}

void MainWindow::fitRunsList() {
  // Its rows (at least two, for a run added live; at most about seven, then
  // it scrolls), its header and a horizontal scroll bar's room (a narrow
  // window scrolls the columns; the bar must not hide the last row): the
  // tabs keep the rest.
  const int rows = std::clamp(runs_->rowCount(), 2, 7);
  const int height = runsView_->horizontalHeader()->sizeHint().height() +
                     rows * runsView_->verticalHeader()->defaultSectionSize() +
                     runsView_->horizontalScrollBar()->sizeHint().height() +
                     2 * runsView_->frameWidth();
  const QList<int> sizes = split_->sizes();
  const int total = sizes.value(0) + sizes.value(1);
  split_->setSizes({height, std::max(total - height, 600)});
}

Status MainWindow::showRun(int64_t runId) {
  if (reader_ == nullptr) return Status::failedPrecondition("no trace file is open");
  BS_RETURN_IF_ERROR(timeline_->showRun(reader_.get(), runId));
  idealReplay_->setMeasuredRun(reader_.get(), runId);
  // The lab takes the run first, so that the layout it then follows is
  // drawn with this run's costs.
  teaching_->setMeasuredRun(reader_.get(), runId);
  // The editor (and with it the lab) follows the shown run: editing starts
  // from its layout (a run without a readable layout, e.g. an imported
  // trace, leaves it as it is).
  auto shownLayout = layout::layoutFromString(shownRun().info.layoutJson);
  if (shownLayout.isOk()) editor_->setLayout(*shownLayout);
  planner_->setTrace(reader_.get(), path_, runId);
  report_.reset();
  metrics_->clear();
  clearKernels();
  charts_->clear();
  (void)analyzeShownRun();
  const int row = runs_->rowOfRun(runId);
  if (row >= 0 && runsView_->currentIndex().row() != row) {
    const QSignalBlocker block(runsView_->selectionModel());
    runsView_->selectRow(row);
  }
  if (row >= 0) runsView_->scrollTo(runs_->index(row, 0));  // the shown run is in sight
  if (statusError_) setStatus(fileStatus());                // an error about what was shown before
  return Status::ok();
}

void MainWindow::startRun() {
  if (launcher_->isRunning()) {
    QMessageBox::information(this, tr("Run"), tr("A run is already going."));
    return;
  }
  if (!editor_->isValid()) {
    QMessageBox::warning(this, tr("Run"), editor_->problems().join("\n"));
    return;
  }
  QString trace = path_;
  if (trace.isEmpty()) {
    trace = QFileDialog::getSaveFileName(this, tr("Trace file for the run"), "runs.db",
                                         tr("Bubblescope traces (*.db)"));
    if (trace.isEmpty()) return;
  }
  launchedLayoutPath_ = QDir::temp().filePath(
      QStringLiteral("bubblescope-layout-%1.json").arg(QDateTime::currentMSecsSinceEpoch()));
  Status s = editor_->saveFile(launchedLayoutPath_);
  if (!s.isOk()) return showError(tr("Run"), s);
  const layout::Layout l = editor_->layout();
  RunRequest request;
  request.layoutPath = launchedLayoutPath_;
  request.tracePath = trace;
  launchedRunId_ = 0;
  stopRequested_ = false;
  path_ = trace;
  output_->appendPlainText(tr("▶ starting a run into %1").arg(trace));
  s = launcher_->start(request);
  if (!s.isOk()) return showError(tr("Run"), s);
  progress_->started(l.steps);
  setStatus(baselineRunId_ > 0
                ? tr("run started; run %1 is kept to compare with").arg(baselineRunId_)
                : tr("run started"));
  launchPoll_.start();
}

void MainWindow::stopRun() {
  if (!launcher_->isRunning()) return;
  stopRequested_ = true;
  launcher_->stop();
}

void MainWindow::pollLaunchedRun() {
  if (launchedRunId_ <= 0) return;  // `run` has not named the run yet
  if (reader_ == nullptr) {
    // A new trace file exists once `run` has begun the run in it.
    if (QFileInfo::exists(path_)) (void)openFile(path_);
    if (reader_ == nullptr) return;
  }
  if (!reloadRuns().isOk() || runs_->rowOfRun(launchedRunId_) < 0) return;
  if (shownRun().id != launchedRunId_) (void)showRun(launchedRunId_);
  launchPoll_.stop();  // the timeline follows the run from here
}

void MainWindow::onRunFinished(int exitCode, const QString& error) {
  launchPoll_.stop();
  if (reader_ == nullptr && QFileInfo::exists(path_)) (void)openFile(path_);
  const bool known = reader_ != nullptr && launchedRunId_ > 0 && reloadRuns().isOk() &&
                     runs_->rowOfRun(launchedRunId_) >= 0;
  if (known && shownRun().id != launchedRunId_) (void)showRun(launchedRunId_);
  const bool stopped = exitCode != 0 && stopRequested_;  // `run` marked it stopped
  if (stopped) {
    progress_->stopped();
  } else {
    progress_->ended(exitCode == 0, exitCode == 0 ? QString() : error);
  }
  const int64_t newRun = known ? launchedRunId_ : 0;
  if (newRun > 0) (void)analyzeShownRun();
  if (baselineRunId_ > 0 && newRun > 0 && newRun != baselineRunId_) {
    const int64_t baseline = baselineRunId_;
    baselineRunId_ = 0;
    const Status c = compareRuns(baseline, newRun);
    if (c.isOk()) tabs_->setCurrentIndex(kCompareTab);
  }
  if (exitCode == 0) {
    output_->appendPlainText(tr("■ run finished"));
    setStatus(tr("run finished"));
  } else if (stopped) {
    output_->appendPlainText(tr("■ run stopped"));
    setStatus(tr("run stopped"));
  } else {
    output_->appendPlainText(tr("✖ run failed: %1").arg(error));
    setStatus(tr("run failed: %1").arg(error), true);
    QMessageBox::warning(this, tr("Run failed"), error);
  }
}

void MainWindow::onRunUpdated(const storage::RunRecord& run) {
  if (reader_ == nullptr) return;
  auto row = loadRunRow(*reader_, run);
  if (row.isOk()) runs_->updateRow(*row);
  // The run ended: the planner can measure it now.
  if (run.health != storage::RunHealth::kRunning) planner_->setTrace(reader_.get(), path_, run.id);
  // A live run: refresh the charts every few seconds, and once when it ends.
  if (!analysis_->busy() && !reanalyse_.isActive()) reanalyse_.start();
}

Status MainWindow::analyzeShownRun(bool synchronous) {
  const int64_t id = shownRun().id;
  if (reader_ == nullptr || id <= 0) return Status::failedPrecondition("no run is shown");
  if (!synchronous) {
    if (!report_) charts_->setMessage(tr("Analysing run %1…").arg(id));
    analysis_->analyze(path_, {id});
    return Status::ok();
  }
  analysis_->cancel();
  auto reports = AnalysisWorker::analyzeNow(path_, {id});
  if (!reports.isOk()) return reports.status();
  onReport(reports->front());
  return Status::ok();
}

void MainWindow::onReport(const analysis::RunReport& report) {
  if (report.run.id != shownRun().id) return;  // a run no longer shown
  report_ = report;
  charts_->setProgress(1, 1);
  charts_->setReport(report);
  metrics_->setReport(report);
  metricsView_->resizeColumnsToContents();
  showKernels(report);
}

Status MainWindow::compareRuns(int64_t runA, int64_t runB, bool synchronous) {
  if (reader_ == nullptr) return Status::failedPrecondition("no trace file is open");
  BS_RETURN_IF_ERROR(compare_->setRuns(reader_.get(), runA, runB));
  tabs_->setCurrentIndex(kCompareTab);
  if (!synchronous) {
    compare_->setMessage(tr("analysing runs %1 and %2…").arg(runA).arg(runB));
    compareAnalysis_->analyze(path_, {runA, runB});
    return Status::ok();
  }
  auto reports = AnalysisWorker::analyzeNow(path_, {runA, runB});
  if (!reports.isOk()) return reports.status();
  showComparedReports(*reports);
  return Status::ok();
}

void MainWindow::showComparedReports(const std::vector<analysis::RunReport>& reports) {
  compare_->setReports(reports[0], reports[1]);
  charts_->setComparedRuns(reports);  // their loss curves on one plot
}

void MainWindow::compareSelected() {
  std::vector<int64_t> ids;
  for (const QModelIndex& index : runsView_->selectionModel()->selectedRows())
    ids.push_back(runs_->data(index, RunsTableModel::kRunIdRole).toLongLong());
  std::sort(ids.begin(), ids.end());
  if (ids.size() != 2) {
    // This run against the one before it.
    const int64_t shown = shownRun().id;
    ids.clear();
    for (const RunRow& r : runs_->rows()) {
      if (r.id < shown) ids = {r.id};
    }
    if (ids.empty() || shown <= 0) {
      QMessageBox::information(this, tr("Compare"),
                               tr("Select two runs in the list (Ctrl+click) to compare them."));
      return;
    }
    ids.push_back(shown);
  }
  const Status s = compareRuns(ids[0], ids[1]);
  if (!s.isOk()) showError(tr("Compare"), s);
}

Status MainWindow::runAgainWithChanges() {
  const storage::RunRecord& run = shownRun();
  if (run.id <= 0) return Status::failedPrecondition("no run is shown");
  auto l = layout::layoutFromString(run.info.layoutJson);
  if (l.isOk()) {
    editor_->setLayout(*l);
  }
  baselineRunId_ = run.id;
  if (auto* dock = qobject_cast<QDockWidget*>(editor_->parentWidget())) dock->show();
  setStatus(tr("Edit the layout and press Run: run %1 is kept, and compare opens when the new run "
               "ends.")
                .arg(run.id) +
            (l.isOk() ? QString()
                      : tr(" (its layout could not be loaded: %1)")
                            .arg(QString::fromStdString(l.status().message()))));
  return Status::ok();
}

void MainWindow::showRanksInTimeline(const std::vector<int32_t>& ranks) {
  timeline_->view()->markRanks(ranks);
  tabs_->setCurrentIndex(kTimelineTab);
  if (!ranks.empty()) {
    QStringList names;
    for (int32_t r : ranks) names << QString::number(r);
    setStatus(tr("ranks %1 marked in the timeline").arg(names.join(", ")));
  }
}

void MainWindow::showError(const QString& title, const Status& status) {
  setStatus(QString::fromStdString(status.message()), true);
  if (headless_) {
    std::fprintf(stderr, "bubblescope: %s: %s\n", title.toUtf8().constData(),
                 status.message().c_str());
    return;
  }
  QMessageBox::warning(this, title, QString::fromStdString(status.message()));
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (urls.isEmpty() || !urls.first().isLocalFile()) return;
  const Status s = openFile(urls.first().toLocalFile());
  if (!s.isOk()) showError(tr("Open trace"), s);
  event->acceptProposedAction();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (launcher_->isRunning()) launcher_->stop();
  event->accept();
}

Status MainWindow::simulateInLab() {
  tabs_->setCurrentWidget(teaching_);
  return teaching_->simulate(editor_->layout());
}

}  // namespace bubblescope::gui
