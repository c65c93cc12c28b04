// ChartsPanel: the QCustomPlot charts of one run's RunReport (utilisation and
// communication per rank, pipeline bubble per stage next to its formula,
// step-time breakdown per rank, loss per step, peak memory per rank), a
// summary line and the run's advice (advice_list.h). While a comparison is
// open (setComparedRuns) the loss chart holds the compared runs' curves on
// one plot, each labelled by its run and layout, and the text beside the
// charts their gradient bytes and compression ratio
// (grad_compression_text.h).
//
// Contract: draws exactly what chart_data.h computes from the report (no
// analysis here); setReport() replaces everything. In a scroll area (the
// main window's Charts tab) too short for the whole panel, the five charts
// take the visible height, at least kPlotMinHeight each, and the advice goes
// below them, to scroll to: a small screen never cuts a chart or its legend
// at the view's lower edge. Clicking a bar emits the
// rank, stage or step it stands for. qcustomplot.h is included only in the
// .cpp. GUI thread only.
#pragma once

#include <QColor>
#include <QWidget>
#include <array>
#include <optional>
#include <vector>

#include "common/status.h"
#include "gui/chart_data.h"

class QCustomPlot;
class QLabel;
class QProgressBar;

namespace bubblescope::gui {

class AdviceList;

class ChartsPanel : public QWidget {
  Q_OBJECT

 public:
  enum Chart { kUtilisation, kBubble, kBreakdown, kLoss, kMemory, kChartCount };

  explicit ChartsPanel(QWidget* parent = nullptr);

  void setReport(const analysis::RunReport& report);
  // The runs of the open comparison: the loss chart shows their curves (and
  // the shown run's, when it is not one of them) until clear() or
  // clearComparedRuns().
  void setComparedRuns(const std::vector<analysis::RunReport>& reports);
  void clearComparedRuns();
  void clear();
  // Shows analysis progress (ranks done of total); done >= total hides it.
  void setProgress(int done, int total);
  void setMessage(const QString& text);

  // "utilisation", "bubble", ... (file names of exports).
  static QString chartName(Chart chart);
  QCustomPlot* plot(Chart chart) const { return plots_[chart]; }
  // The report's advice under the charts (advice_list.h).
  AdviceList* advice() const { return advice_; }
  QWidget* plotWidget(Chart chart) const;
  const ChartData& data(Chart chart) const { return data_[chart]; }
  // The values the chart's plottable named `series` holds, in key order (for
  // tests: what is drawn, read back from the plot).
  std::vector<double> plottedValues(Chart chart, const QString& series) const;
  // What an empty chart says in its middle ("no loss recorded in this run",
  // ...); empty while the chart draws something or before any report.
  QString emptyNote(Chart chart) const;
  // The top of the bar of `series` at key index `index` in widget pixels of
  // the plot (y grows downwards), or -1 when there is none.
  double barTopPixel(Chart chart, const QString& series, int index) const;
  // The x pixel of `key` and the y pixel of `value` on the chart's axes.
  double keyPixel(Chart chart, double key) const;
  double valuePixel(Chart chart, double value) const;

  // The line above the charts ("run 3 · mean step 4.20 ms ± 0.10 · ...") and
  // the text beside them (step statistics, bubble formula, comm volume in
  // binary units, gradient compression's bytes and ratio, the emulated
  // inter-node link, stragglers, notes).
  QString summaryText() const;
  // The text beside the charts as shown (the shown run's details, then the
  // compared runs' gradient bytes while a comparison is open).
  QString detailsText() const;
  // The colour of a series by its name ("comm tp", "measured", ...).
  static QColor seriesColour(const QString& name);
  // The colour of the index-th run's curve in the compared loss chart.
  static QColor runColour(int index);

  // Writes one chart to PNG or SVG (by the path's suffix; SVG needs a build
  // with Qt SVG, else Unsupported).
  Status exportChart(Chart chart, const QString& path, int width = 900, int height = 520) const;

 signals:
  void rankClicked(int rank);
  void stageClicked(int stage);
  void stepClicked(int step);

 protected:
  void changeEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  // Watches the resizes of the widget the panel sits in (a scroll area's
  // viewport) to fit the charts to its height.
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  static constexpr int kThreeColumnLegendPx = 420;
  static constexpr int kPlotMinHeight = 170;
  // The chart rows' least height for a view `visible` px high (0: the
  // panel fits it whole, the rows share its height by their stretch).
  void fitChartsTo(int visible);
  // Legend entries per row at the charts' present width (2 or 3).
  int legendColumns() const;
  void rebuild();
  // data_[kLoss] from the shown run and the compared runs.
  void updateLossChart();
  void updateDetails();
  void applyPalette(QCustomPlot* plot);
  void onPlottableClicked(Chart chart, double key);

  std::array<QCustomPlot*, kChartCount> plots_{};
  std::array<ChartData, kChartCount> data_{};
  QLabel* summary_ = nullptr;
  QLabel* details_ = nullptr;  // step statistics, comm volume, stragglers, notes
  QProgressBar* progress_ = nullptr;
  AdviceList* advice_ = nullptr;
  bool hasReport_ = false;
  bool stagesUnknown_ = false;           // no rank of the report knows its pipeline stage
  bool noSteps_ = false;                 // no rank of the report marks a step (wholeRun)
  int builtColumns_ = 3;                 // the legends' columns at the last rebuild()
  ChartData shownLoss_;                  // the shown run's loss, alone
  std::optional<LossCurve> shownCurve_;  // the same, labelled for a comparison
  std::vector<LossCurve> comparedCurves_;
  QString shownDetails_;     // runDetailsHtml of the shown run
  QString comparedDetails_;  // the compared runs' gradient bytes
};

}  // namespace bubblescope::gui
