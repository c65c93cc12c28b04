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
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>

#include "gui/layout_editor.h"
#include "gui/process_run_launcher.h"
#include "gui/recent_files.h"
#include "gui/runs_table_model.h"
#include "gui/timeline_panel.h"

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
  runsView_->setSelectionMode(QAbstractItemView::SingleSelection);
  runsView_->verticalHeader()->hide();
  runsView_->horizontalHeader()->setStretchLastSection(true);
  runsView_->setAlternatingRowColors(true);
  timeline_ = new TimelinePanel(this);

  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(runsView_);
  split->addWidget(timeline_);
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  split->setSizes({130, 600});
  setCentralWidget(split);

  editor_ = new LayoutEditor(this);
  auto* editorDock = new QDockWidget(tr("Layout"), this);
  editorDock->setObjectName("layoutDock");
  editorDock->setWidget(editor_);
  addDockWidget(Qt::LeftDockWidgetArea, editorDock);

  output_ = new QPlainTextEdit(this);
  output_->setReadOnly(true);
  output_->setMaximumBlockCount(5000);
  auto* outputDock = new QDockWidget(tr("Run output"), this);
  outputDock->setObjectName("outputDock");
  outputDock->setWidget(output_);
  addDockWidget(Qt::BottomDockWidgetArea, outputDock);
  outputDock->hide();

  statusLabel_ = new QLabel(this);
  statusBar()->addWidget(statusLabel_, 1);

  connect(runsView_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (!current.isValid()) return;
            const auto id = runs_->data(current, RunsTableModel::kRunIdRole).toLongLong();
            const Status s = showRun(id);
            if (!s.isOk()) showError(tr("Show run"), s);
          });
  connect(timeline_, &TimelinePanel::runUpdated, this, [this](const storage::RunRecord& run) {
    if (reader_ == nullptr) return;
    auto row = loadRunRow(*reader_, run);
    if (row.isOk()) runs_->updateRow(*row);
  });
  connect(timeline_, &TimelinePanel::errorOccurred, this,
          [this](const QString& m) { statusLabel_->setText(m); });
  connect(editor_, &LayoutEditor::runRequested, this, &MainWindow::startRun);
  connect(launcher_.get(), &RunLauncher::outputLine, this, [this, outputDock](const QString& l) {
    outputDock->show();
    output_->appendPlainText(l);
  });
  connect(launcher_.get(), &RunLauncher::finished, this, &MainWindow::onRunFinished);
  launchPoll_.setInterval(500);
  connect(&launchPoll_, &QTimer::timeout, this, &MainWindow::pollLaunchedRun);

  buildMenus();
  resize(1400, 860);
}

MainWindow::~MainWindow() {
  // The timeline holds a pointer to the reader: detach it first.
  timeline_->clear();
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open trace…"), QKeySequence::Open, this, &MainWindow::chooseAndOpen);
  recentMenu_ = file->addMenu(tr("Open &recent"));
  connect(recentMenu_, &QMenu::aboutToShow, this, &MainWindow::fillRecentMenu);
  file->addAction(tr("Re&load runs"), QKeySequence::Refresh, this, [this] {
    const Status s = reloadRuns();
    if (!s.isOk()) showError(tr("Reload"), s);
  });
  file->addSeparator();
  file->addAction(tr("Export timeline as &PNG…"), this, &MainWindow::exportTimelinePng);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  TimelineView* tv = timeline_->view();
  view->addAction(tr("Fit whole run"), QKeySequence(Qt::Key_Home), tv, [tv] {
    tv->setFollowing(true);
    tv->fitAll();
  });
  view->addAction(tr("Zoom in"), QKeySequence::ZoomIn, tv,
                  [tv] { tv->zoomBy(0.7, tv->placement().plot.center().x()); });
  view->addAction(tr("Zoom out"), QKeySequence::ZoomOut, tv,
                  [tv] { tv->zoomBy(1 / 0.7, tv->placement().plot.center().x()); });
  view->addAction(tr("Next step"), QKeySequence(Qt::Key_BracketRight), tv,
                  [tv] { tv->jumpToStep(+1); });
  view->addAction(tr("Previous step"), QKeySequence(Qt::Key_BracketLeft), tv,
                  [tv] { tv->jumpToStep(-1); });

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run->addAction(tr("&Run layout"), QKeySequence(Qt::CTRL | Qt::Key_R), this,
                 &MainWindow::startRun);
  run->addAction(tr("&Stop run"), QKeySequence(Qt::CTRL | Qt::Key_Period), this,
                 [this] { launcher_->stop(); });

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&Concepts and shortcuts"), QKeySequence::HelpContents, this,
                  &MainWindow::showHelp);
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
  timeline_->clear();
  reader_ = std::move(*reader);
  path_ = path;
  RecentFiles::add(path);
  setWindowTitle(tr("%1 — Bubblescope").arg(QFileInfo(path).fileName()));
  BS_RETURN_IF_ERROR(reloadRuns());
  if (runs_->rowCount() > 0) {
    runsView_->selectRow(runs_->rowCount() - 1);  // shows it
  }
  statusLabel_->setText(tr("%1 · %2 runs").arg(path).arg(runs_->rowCount()));
  return Status::ok();
}

Status MainWindow::reloadRuns() {
  if (reader_ == nullptr) return Status::failedPrecondition("no trace file is open");
  auto rows = loadRunRows(*reader_);
  if (!rows.isOk()) return rows.status();
  for (const RunRow& row : *rows) runs_->updateRow(row);
  runsView_->resizeColumnsToContents();
  return Status::ok();
}

Status MainWindow::showRun(int64_t runId) {
  if (reader_ == nullptr) return Status::failedPrecondition("no trace file is open");
  BS_RETURN_IF_ERROR(timeline_->showRun(reader_.get(), runId));
  const int row = runs_->rowOfRun(runId);
  if (row >= 0 && runsView_->currentIndex().row() != row) {
    const QSignalBlocker block(runsView_->selectionModel());
    runsView_->selectRow(row);
  }
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
  request.modelPreset = QString::fromStdString(l.model.preset);
  request.steps = l.steps;
  request.microBatches = l.microBatches;
  request.microBatchSize = l.microBatchSize;
  request.worldSize = l.worldSize();
  runsBeforeLaunch_ = runs_->rows().empty() ? 0 : runs_->rows().back().id;
  path_ = trace;
  output_->appendPlainText(tr("▶ starting a run into %1").arg(trace));
  s = launcher_->start(request);
  if (!s.isOk()) return showError(tr("Run"), s);
  statusLabel_->setText(tr("run started"));
  launchPoll_.start();
}

void MainWindow::pollLaunchedRun() {
  if (reader_ == nullptr) {
    // A new trace file appears once the run's writer has created it.
    if (QFileInfo::exists(path_)) (void)openFile(path_);
    if (reader_ == nullptr) return;
  }
  if (!reloadRuns().isOk()) return;
  if (!runs_->rows().empty() && runs_->rows().back().id > runsBeforeLaunch_) {
    const int64_t id = runs_->rows().back().id;
    if (timeline_->model()->run().id != id) (void)showRun(id);
    launchPoll_.stop();  // the timeline follows the run from here
  }
}

void MainWindow::onRunFinished(int exitCode, const QString& error) {
  launchPoll_.stop();
  if (reader_ == nullptr && QFileInfo::exists(path_)) (void)openFile(path_);
  if (reader_ != nullptr) {
    (void)reloadRuns();
    if (!runs_->rows().empty() && runs_->rows().back().id > runsBeforeLaunch_ &&
        timeline_->model()->run().id != runs_->rows().back().id) {
      (void)showRun(runs_->rows().back().id);
    }
  }
  if (exitCode == 0) {
    output_->appendPlainText(tr("■ run finished"));
    statusLabel_->setText(tr("run finished"));
  } else {
    output_->appendPlainText(tr("✖ run failed: %1").arg(error));
    statusLabel_->setText(tr("run failed"));
    QMessageBox::warning(this, tr("Run failed"), error);
  }
}

void MainWindow::exportTimelinePng() {
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export timeline"), "timeline.png", tr("PNG (*.png)"));
  if (path.isEmpty()) return;
  if (!timeline_->view()->grab().save(path)) {
    showError(tr("Export"), Status::ioError("cannot write " + path.toStdString()));
  }
}

void MainWindow::showHelp() {
  QMessageBox::about(
      this, tr("Concepts and shortcuts"),
      tr("<p><b>Bubble</b>: time inside a step in which a rank neither computes nor "
         "communicates — waiting for a pipeline peer or idle. Drawn hatched.</p>"
         "<p><b>Formula bubble</b>: GPipe and 1F1B (p−1)/(m+p−1); interleaved "
         "(p−1)/(v·m+p−1); ZB-H1 about a third of 1F1B's.</p>"
         "<p><b>Overlap</b>: the share of communication time hidden under computation.</p>"
         "<p><b>Timeline</b>: wheel zooms around the cursor, drag pans, shift+drag "
         "measures, shift+wheel scrolls ranks; + / − zoom, ← / → pan, Home fits, "
         "[ / ] (or PgUp / PgDn) jump between steps, Esc clears the measurement.</p>"));
}

void MainWindow::showError(const QString& title, const Status& status) {
  statusLabel_->setText(QString::fromStdString(status.message()));
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

}  // namespace bubblescope::gui
