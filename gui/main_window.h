// MainWindow: a trace file's runs, the timeline of the selected run, the
// layout editor and the output of a run it started.
//
// Contract: the window owns the one TraceReader of the open file; widgets get
// value structs (RunRow) or the TimelineModel, never SQL. Runs are started
// as processes through a RunLauncher (owned).
#pragma once

#include <QMainWindow>
#include <QTimer>
#include <memory>

#include "common/status.h"
#include "gui/run_launcher.h"
#include "storage/trace_reader.h"

class QTableView;
class QPlainTextEdit;
class QMenu;
class QLabel;
class QDragEnterEvent;
class QDropEvent;
class QCloseEvent;

namespace bubblescope::gui {

class LayoutEditor;
class RunsTableModel;
class TimelinePanel;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  // launcher: how runs are started (nullptr = ProcessRunLauncher).
  explicit MainWindow(std::unique_ptr<RunLauncher> launcher = nullptr, QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens a trace file and shows its last run. The message names the file.
  Status openFile(const QString& path);
  // Shows run `runId` of the open file in the timeline.
  Status showRun(int64_t runId);
  // Re-reads the runs of the open file.
  Status reloadRuns();

  QString filePath() const { return path_; }
  TimelinePanel* timeline() const { return timeline_; }
  LayoutEditor* layoutEditor() const { return editor_; }
  RunsTableModel* runsModel() const { return runs_; }
  QTableView* runsView() const { return runsView_; }

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildMenus();
  void fillRecentMenu();
  void chooseAndOpen();
  void startRun();
  void onRunFinished(int exitCode, const QString& error);
  void pollLaunchedRun();
  void exportTimelinePng();
  void showHelp();
  void showError(const QString& title, const Status& status);

  QString path_;
  std::unique_ptr<storage::TraceReader> reader_;
  std::unique_ptr<RunLauncher> launcher_;
  RunsTableModel* runs_ = nullptr;
  QTableView* runsView_ = nullptr;
  TimelinePanel* timeline_ = nullptr;
  LayoutEditor* editor_ = nullptr;
  QPlainTextEdit* output_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QLabel* statusLabel_ = nullptr;
  QTimer launchPoll_;
  int64_t runsBeforeLaunch_ = 0;
  QString launchedLayoutPath_;
};

}  // namespace bubblescope::gui
