// MainWindow's menus, shortcuts, exports and help page (the rest of the
// window is in main_window.cpp).
#include <QAction>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QStyle>
#include <QTabWidget>
#include <QTextBrowser>
#include <QToolBar>
#include <QVBoxLayout>

#include "gui/charts_panel.h"
#include "gui/compare_view.h"
#include "gui/help_text.h"
#include "gui/kineto_import.h"
#include "gui/main_window.h"
#include "gui/run_rows.h"
#include "gui/timeline_export.h"
#include "gui/timeline_panel.h"
#include "gui/timeline_replay.h"
#include "gui/tool_icons.h"
#include "gui/widget_export.h"

namespace bubblescope::gui {

namespace {

const QString kImageFilters = QObject::tr("PNG image (*.png);;SVG drawing (*.svg)");

// The chosen path, with the suffix of the chosen filter when it has none.
QString withSuffix(QString path, const QString& filter) {
  if (!path.isEmpty() && !path.contains('.')) path += filter.contains("svg") ? ".svg" : ".png";
  return path;
}

}  // namespace

void MainWindow::buildMenus() {
  QToolBar* tools = addToolBar(tr("Main"));
  tools->setObjectName("mainToolBar");
  tools->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  tools->setMovable(false);
  auto tool = [&](QAction* action, const QIcon& icon) {
    action->setIcon(icon);
    tools->addAction(action);
  };
  auto standard = [this](QStyle::StandardPixmap icon) { return style()->standardIcon(icon); };
  QMenu* file = menuBar()->addMenu(tr("&File"));
  tool(file->addAction(tr("&Open trace…"), QKeySequence::Open, this, &MainWindow::chooseAndOpen),
       standard(QStyle::SP_DialogOpenButton));
  file->addAction(tr("&Import PyTorch traces…"), this, [this] {
    const KinetoImportChoice choice = chooseKinetoImport(this, path_);
    if (choice.files.isEmpty()) return;
    const Status s = importTraces(choice.files, choice.target);
    if (!s.isOk()) showError(tr("Import PyTorch traces"), s);
  });
  recentMenu_ = file->addMenu(tr("Open &recent"));
  connect(recentMenu_, &QMenu::aboutToShow, this, &MainWindow::fillRecentMenu);
  file->addAction(tr("Re&load runs"), QKeySequence::Refresh, this, [this] {
    const Status s = reloadRuns();
    if (!s.isOk()) showError(tr("Reload"), s);
  });
  file->addSeparator();
  QAction* exportAction =
      file->addAction(tr("&Export timeline (PNG, SVG)…"), QKeySequence(Qt::CTRL | Qt::Key_E), this,
                      &MainWindow::exportTimeline);
  QMenu* charts = file->addMenu(tr("Export &chart"));
  for (int c = 0; c < ChartsPanel::kChartCount; ++c) {
    charts->addAction(tr("%1 (PNG, SVG)…").arg(ChartsPanel::chartName(ChartsPanel::Chart(c))), this,
                      [this, c] { exportChart(c); });
  }
  file->addAction(tr("Export &all charts to a folder…"),
                  QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E), this,
                  [this] { exportChart(-1); });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  const char* tabNames[] = {"&Timeline", "&Charts", "&Metrics", "C&ompare"};
  for (int t = 0; t < 4; ++t) {
    view->addAction(tr(tabNames[t]), QKeySequence(Qt::CTRL | (Qt::Key_1 + t)), this,
                    [this, t] { tabs_->setCurrentIndex(t); });
  }
  view->addSeparator();
  // A closed dock comes back from here (each entry is checked while it shows).
  for (const char* dockName : {"layoutDock", "outputDock"}) {
    if (auto* dock = findChild<QDockWidget*>(dockName)) view->addAction(dock->toggleViewAction());
  }
  view->addSeparator();
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
  tools->addSeparator();
  tool(run->addAction(tr("&Run layout"), QKeySequence(Qt::CTRL | Qt::Key_R), this,
                      &MainWindow::startRun),
       runIcon());
  tool(run->addAction(tr("Run &again with changes…"),
                      QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R), this,
                      [this] {
                        const Status s = runAgainWithChanges();
                        if (!s.isOk()) showError(tr("Run again"), s);
                      }),
       standard(QStyle::SP_BrowserReload));
  tool(run->addAction(tr("&Stop run"), QKeySequence(Qt::CTRL | Qt::Key_Period), this,
                      [this] { stopRun(); }),
       stopIcon());
  run->addSeparator();
  tools->addSeparator();
  tool(run->addAction(tr("&Plan layouts…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P), this,
                      &MainWindow::showPlanner),
       standard(QStyle::SP_FileDialogDetailedView));
  tool(run->addAction(tr("&Compare runs"), QKeySequence(Qt::CTRL | Qt::Key_K), this,
                      &MainWindow::compareSelected),
       standard(QStyle::SP_FileDialogContentsView));
  tool(exportAction, standard(QStyle::SP_DialogSaveButton));

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&Concepts and shortcuts"), QKeySequence::HelpContents, this,
                  &MainWindow::showHelp);
}

QString MainWindow::timelineTitle() const {
  const storage::RunRecord& run = shownRun();
  QString title = tr("run %1").arg(run.id);
  if (idealReplay_->replayShown()) title += tr(" · ideal-hardware replay (one core per rank)");
  if (!run.info.name.empty()) title += " · " + QString::fromStdString(run.info.name);
  // The layout summary, unless the layout is not one (it would repeat the raw JSON).
  const QString summary = layoutSummary(run.info);
  if (summary != QString::fromStdString(run.info.layoutJson)) title += " · " + summary;
  if (!path_.isEmpty()) title += " · " + QFileInfo(path_).fileName();
  return title;
}

void MainWindow::exportTimeline() {
  QString filter;
  const QString path =
      withSuffix(QFileDialog::getSaveFileName(this, tr("Export timeline"), "timeline.png",
                                              kImageFilters, &filter),
                 filter);
  if (path.isEmpty()) return;
  const Status s = exportTimelineTo(path);
  if (!s.isOk()) showError(tr("Export"), s);
}

Status MainWindow::exportTimelineTo(const QString& path) {
  BS_RETURN_IF_ERROR(tabs_->currentIndex() == kCompareTab
                         ? exportWidget(compare_, path)
                         : gui::exportTimeline(timeline_->view(), timelineTitle(), path));
  setStatus(tr("wrote %1").arg(path));
  return Status::ok();
}

void MainWindow::exportChart(int chart) {
  if (chart < 0) {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export all charts"));
    if (dir.isEmpty()) return;
    for (int c = 0; c < ChartsPanel::kChartCount; ++c) {
      for (const char* suffix : {".png", ".svg"}) {
        const QString path =
            dir + "/" + ChartsPanel::chartName(ChartsPanel::Chart(c)) + QString(suffix);
        const Status s = charts_->exportChart(ChartsPanel::Chart(c), path);
        if (!s.isOk()) return showError(tr("Export"), s);
      }
    }
    setStatus(tr("wrote the charts to %1").arg(dir));
    return;
  }
  const QString name = ChartsPanel::chartName(ChartsPanel::Chart(chart));
  QString filter;
  const QString path = withSuffix(
      QFileDialog::getSaveFileName(this, tr("Export chart"), name + ".png", kImageFilters, &filter),
      filter);
  if (path.isEmpty()) return;
  const Status s = charts_->exportChart(ChartsPanel::Chart(chart), path);
  if (!s.isOk()) return showError(tr("Export"), s);
  setStatus(tr("wrote %1").arg(path));
}

void MainWindow::showHelp() {
  auto* dialog = new QDialog(this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->setWindowTitle(tr("Concepts and shortcuts"));
  auto* text = new QTextBrowser(dialog);
  text->setHtml(helpHtml());
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
  connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
  auto* column = new QVBoxLayout(dialog);
  column->addWidget(text);
  column->addWidget(buttons);
  dialog->resize(720, 640);
  dialog->show();
}

}  // namespace bubblescope::gui
