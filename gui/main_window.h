// MainWindow: a trace file's runs above tabs for the selected run (timeline,
// charts, metrics table) and for comparing two runs; the layout editor, the
// output of a run it started and that run's progress.
//
// Contract: the window owns the one TraceReader of the open file, used on the
// GUI thread; analysis runs on AnalysisWorker threads with their own readers.
// Widgets get value structs (RunRow, RunReport) or the TimelineModel, never
// SQL. Runs are started as processes through a RunLauncher (owned).
#pragma once

#include <QMainWindow>
#include <QTimer>
#include <memory>
#include <optional>
#include <vector>

#include "common/status.h"
#include "gui/run_launcher.h"
#include "storage/analysis/run_report.h"
#include "storage/trace_reader.h"

class QSplitter;
class QTableView;
class QPlainTextEdit;
class QMenu;
class QLabel;
class QDragEnterEvent;
class QTabWidget;
class QDropEvent;
class QCloseEvent;

namespace bubblescope::gui {

class AnalysisWorker;
class ChartsPanel;
class CompareView;
class LayoutEditor;
class KernelsTableModel;
class KernelsTableView;
class MetricsTableModel;
class PlannerPanel;
class ClusterPlannerPanel;
class RunProgressWidget;
class RunsTableModel;
class TeachingLab;
class TimelinePanel;
class TimelineReplay;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  // launcher: how runs are started (nullptr = ProcessRunLauncher).
  explicit MainWindow(std::unique_ptr<RunLauncher> launcher = nullptr, QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens a trace file and shows its last run. The message names the file.
  Status openFile(const QString& path);
  // Shows run `runId` of the open file in the timeline, and its layout in the
  // layout editor.
  Status showRun(int64_t runId);
  // Re-reads the runs of the open file.
  Status reloadRuns();
  // Analyses the shown run for the charts and the metrics table, on a worker
  // thread (or on this one when `synchronous`: screenshots and tests).
  Status analyzeShownRun(bool synchronous = false);
  // Shows runs a (baseline) and b in the compare tab and analyses both; their
  // loss curves then share Charts' loss plot.
  Status compareRuns(int64_t runA, int64_t runB, bool synchronous = false);
  // Loads the shown run's layout into the editor and keeps the run: when the
  // next run started from the window ends, compare opens on the two.
  Status runAgainWithChanges();
  // What File > Export timeline writes once its dialog has a path: the
  // compare tab's picture when it is shown, else the timeline with its title
  // and legend (PNG or SVG by the suffix).
  Status exportTimelineTo(const QString& path);
  // Shows the teaching lab with the ideal schedule of the editor's layout
  // beside the shown run (TeachingLab::simulate).
  Status simulateInLab();
  // File > Import PyTorch traces once its dialogs have answered: imports
  // `files` (Kineto traces, one per rank) as one run appended to `target`,
  // opens `target` on that run. Its notes go to the status bar, and (not
  // headless) to a message box; a progress dialog only when not headless.
  Status importTraces(const QStringList& files, const QString& target);
  // Marks `ranks` in the timeline and shows the timeline tab.
  void showRanksInTimeline(const std::vector<int32_t>& ranks);

  // Headless (--screenshot): errors go to stderr, never to a modal dialog.
  void setHeadless(bool headless) { headless_ = headless; }

  enum Tab {
    kTimelineTab,
    kChartsTab,
    kMetricsTab,
    kCompareTab,
    kTeachingTab,
    kPlannerTab,
    kKernelsTab
  };

  QString filePath() const { return path_; }
  // "run 3 · dp1-pp4 1f1b small · dp1 tp1 pp4 · 1f1b m8 · small · runs.db":
  // the title line of an exported timeline.
  QString timelineTitle() const;
  TimelinePanel* timeline() const { return timeline_; }
  // The timeline's switch to the shown run's ideal-hardware replay.
  TimelineReplay* idealReplay() const { return idealReplay_; }
  // The shown run (measured, also while the timeline draws its replay).
  const storage::RunRecord& shownRun() const;
  LayoutEditor* layoutEditor() const { return editor_; }
  RunsTableModel* runsModel() const { return runs_; }
  QTableView* runsView() const { return runsView_; }
  QTabWidget* tabs() const { return tabs_; }
  ChartsPanel* charts() const { return charts_; }
  MetricsTableModel* metrics() const { return metrics_; }
  KernelsTableModel* kernels() const { return kernels_; }
  KernelsTableView* kernelsView() const { return kernelsView_; }
  CompareView* compareView() const { return compare_; }
  TeachingLab* teachingLab() const { return teaching_; }
  PlannerPanel* planner() const { return planner_; }
  ClusterPlannerPanel* clusterPlanner() const { return clusterPlanner_; }
  QTabWidget* plannerTabs() const { return plannerTabs_; }
  // Shows the planner tab and plans with its inputs.
  void showPlanner();
  RunProgressWidget* runProgress() const { return progress_; }
  int64_t baselineRunId() const { return baselineRunId_; }
  const std::optional<analysis::RunReport>& report() const { return report_; }

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildMenus();
  // The planner tab and its links to the layout editor (main_window_predict.cpp).
  void buildPlanner();
  // The Kernels tab (main_window_kernels.cpp): the report's GPU kernels,
  // sortable; a row selects its kernel's longest record in the timeline.
  void buildKernelsTab();
  // The Kernels tab emptied (no report yet), or filled from a report.
  void clearKernels();
  void showKernels(const analysis::RunReport& report);
  void fillRecentMenu();
  void chooseAndOpen();
  void startRun();
  void onRunFinished(int exitCode, const QString& error);
  void pollLaunchedRun();
  // Stops the started run (SIGTERM to `run`, which marks it stopped).
  void stopRun();
  void exportTimeline();
  void exportChart(int chart);
  void compareSelected();
  void onRunUpdated(const storage::RunRecord& run);
  void onReport(const analysis::RunReport& report);
  // The two compared runs' reports (A, B): the compare tab's table, and
  // their loss curves and gradient bytes in Charts.
  void showComparedReports(const std::vector<analysis::RunReport>& reports);
  void showHelp();
  void showError(const QString& title, const Status& status);
  // Sizes the runs list to its rows (2 to 7 of them).
  void fitRunsList();
  // The runs list's name and layout columns are at most this wide.
  static constexpr int kWidestTextColumnPx = 320;
  // The status bar's message; an error stays until the next message or
  // until another run is shown.
  void setStatus(const QString& text, bool error = false);
  // "runs.db · 3 runs".
  QString fileStatus() const;

  QString path_;
  std::unique_ptr<storage::TraceReader> reader_;
  std::unique_ptr<RunLauncher> launcher_;
  RunsTableModel* runs_ = nullptr;
  QTableView* runsView_ = nullptr;
  QSplitter* split_ = nullptr;  // the runs list above the tabs
  TimelinePanel* timeline_ = nullptr;
  TimelineReplay* idealReplay_ = nullptr;
  LayoutEditor* editor_ = nullptr;
  QPlainTextEdit* output_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QLabel* statusLabel_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  ChartsPanel* charts_ = nullptr;
  MetricsTableModel* metrics_ = nullptr;
  QTableView* metricsView_ = nullptr;
  KernelsTableModel* kernels_ = nullptr;
  KernelsTableView* kernelsView_ = nullptr;
  CompareView* compare_ = nullptr;
  TeachingLab* teaching_ = nullptr;
  RunProgressWidget* progress_ = nullptr;
  PlannerPanel* planner_ = nullptr;
  ClusterPlannerPanel* clusterPlanner_ = nullptr;
  QTabWidget* plannerTabs_ = nullptr;
  AnalysisWorker* analysis_ = nullptr;
  AnalysisWorker* compareAnalysis_ = nullptr;
  std::optional<analysis::RunReport> report_;
  QTimer reanalyse_;  // throttles re-analysis of a live run
  int64_t baselineRunId_ = 0;
  QTimer launchPoll_;
  int64_t launchedRunId_ = 0;   // the started run's id, once `run` named it
  bool stopRequested_ = false;  // Stop was pressed for the started run
  QString launchedLayoutPath_;
  bool headless_ = false;
  bool statusError_ = false;  // the status bar shows an error
};

}  // namespace bubblescope::gui
