#include "gui/charts_panel.h"

#include <qcustomplot.h>

#include <QEvent>
#include <QGridLayout>
#include <QLabel>
#include <QProgressBar>
#include <QScrollArea>
#include <cmath>

#include "gui/advice_list.h"
#include "gui/grad_compression_text.h"
#include "gui/run_details_html.h"
#include "gui/span_palette.h"
#include "gui/time_format.h"

#if BUBBLESCOPE_WITH_SVG
#include <QSvgGenerator>
#endif

namespace bubblescope::gui {

namespace {

using trace_model::EventKind;

// Bars of one series: where they sit relative to the key and how wide.
struct BarPlacement {
  double offset = 0.0;
  double width = 0.7;
};

}  // namespace

// Each series of one chart has its own colour: the comm dimensions of the
// utilisation chart (dp blue, tp purple, pp teal, zero amber, ep pink) are
// told apart at a glance.
QColor ChartsPanel::seriesColour(const QString& name) {
  if (name == "utilisation" || name == "compute") return colourOf(EventKind::kForward);
  if (name == "measured") return bubbleHatchColour();
  if (name == "formula") return QColor(120, 120, 120);
  if (name == "replayed") return bubbleHatchColour().darker(150);
  if (name == "exposed comm") return colourOf(EventKind::kAllReduce);
  if (name == "wait") return colourOf(EventKind::kWait);
  if (name == "idle") return bubbleHatchColour().lighter(130);
  if (name == "comm dp") return colourOf(EventKind::kAllReduce);
  if (name == "comm tp") return colourOf(EventKind::kAllGather);
  if (name == "comm pp") return colourOf(EventKind::kSend);
  if (name == "comm zero") return QColor(0xff, 0x8f, 0x00);
  if (name == "comm ep") return colourOf(EventKind::kAllToAll);
  // Communication of no dimension and of a process group whose dimension the
  // trace does not name (an import): two colours, neither the ratio's grey.
  if (name == "comm other") return QColor(0x79, 0x55, 0x48);
  if (name == "comm unknown") return QColor(0x54, 0x6e, 0x7a);
  if (name == "loss") return colourOf(EventKind::kBackward);
  if (name == "parameters") return QColor(76, 114, 176);
  if (name == "gradients") return QColor(221, 132, 82);
  if (name == "optimizer") return QColor(85, 168, 104);
  if (name == "activations") return QColor(129, 114, 179);
  return QColor(140, 140, 140);
}

QColor ChartsPanel::runColour(int index) {
  // Okabe-Ito: told apart also with the common colour-vision deficiencies.
  static const QColor kColours[] = {
      QColor(0, 114, 178), QColor(230, 159, 0),  QColor(0, 158, 115),  QColor(204, 121, 167),
      QColor(213, 94, 0),  QColor(86, 180, 233), QColor(120, 120, 120)};
  constexpr int kCount = sizeof(kColours) / sizeof(kColours[0]);
  return kColours[((index % kCount) + kCount) % kCount];
}

namespace {

QCPBars* addBars(QCustomPlot* plot, const ChartSeries& s, BarPlacement at, QCPBars* below) {
  auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
  bars->setName(s.name);
  bars->setWidth(at.width);
  bars->setPen(Qt::NoPen);
  bars->setBrush(ChartsPanel::seriesColour(s.name));
  bars->setStackingGap(0);
  for (size_t i = 0; i < s.values.size(); ++i) {
    if (!std::isnan(s.values[i])) bars->addData(static_cast<double>(i) + at.offset, s.values[i]);
  }
  if (below != nullptr) bars->moveAbove(below);
  return bars;
}

QCPGraph* addMarkers(QCustomPlot* plot, const ChartSeries& s, double offset, bool line, QColor c) {
  QCPGraph* g = plot->addGraph();
  g->setName(s.name);
  g->setPen(QPen(c, line ? 2 : 0));
  g->setLineStyle(line ? QCPGraph::lsLine : QCPGraph::lsNone);
  g->setScatterStyle(
      QCPScatterStyle(line ? QCPScatterStyle::ssDisc : QCPScatterStyle::ssDiamond, line ? 5 : 10));
  if (!line) g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, c, c.darker(), 10));
  for (size_t i = 0; i < s.values.size(); ++i) {
    if (!std::isnan(s.values[i])) g->addData(static_cast<double>(i) + offset, s.values[i]);
  }
  return g;
}

void setKeyTicks(QCustomPlot* plot, const ChartData& c, const QString& axisLabel) {
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  const int n = c.labels.size();
  constexpr int kMostLabels = 14;  // more would overlap at the panel's usual width
  const int every = n > kMostLabels ? (n + kMostLabels - 1) / kMostLabels : 1;
  for (int i = 0; i < n; i += every) ticker->addTick(i, c.labels[i]);
  plot->xAxis->setTicker(ticker);
  plot->xAxis->setLabel(axisLabel);
  plot->xAxis->setRange(-0.6, std::max(0, n - 1) + 0.6);
  plot->yAxis->setLabel(c.valueLabel);
}

void fitValues(QCustomPlot* plot, bool floorAtZero) {
  bool found = false;
  QCPRange range = QCPRange(0, 1);
  for (int i = 0; i < plot->plottableCount(); ++i) {
    bool ok = false;
    const QCPRange r = plot->plottable(i)->getValueRange(ok);
    if (!ok) continue;
    range = found ? QCPRange(std::min(range.lower, r.lower), std::max(range.upper, r.upper)) : r;
    found = true;
  }
  if (floorAtZero) range.lower = std::min(0.0, range.lower);
  const double pad = std::max(range.size() * 0.08, 1e-9);
  plot->yAxis->setRange(floorAtZero ? range.lower : range.lower - pad, range.upper + pad);
}

}  // namespace

ChartsPanel::ChartsPanel(QWidget* parent) : QWidget(parent) {
  summary_ = new QLabel(this);
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  progress_ = new QProgressBar(this);
  progress_->setMaximumWidth(260);
  progress_->setFormat(tr("analysing %v/%m ranks"));
  progress_->hide();
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(4, 4, 4, 4);
  grid->addWidget(summary_, 0, 0, 1, 2);
  grid->addWidget(progress_, 0, 2, Qt::AlignRight);
  for (int c = 0; c < kChartCount; ++c) {
    auto* plot = new QCustomPlot(this);
    plot->setObjectName(chartName(static_cast<Chart>(c)));
    plot->setMinimumSize(260, kPlotMinHeight);
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, QString(), QFont()));
    plot->legend->setVisible(true);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    plot->legend->setFont(small);
    plot->legend->setRowSpacing(0);
    plot->legend->setColumnSpacing(8);
    // The legend goes under the axes, so it never hides a bar.
    plot->plotLayout()->addElement(2, 0, plot->legend);
    plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    plot->legend->setWrap(3);
    plot->legend->setMargins(QMargins(4, 2, 4, 2));
    plot->plotLayout()->setRowStretchFactor(2, 0.001);
    const auto chart = static_cast<Chart>(c);
    connect(plot, &QCustomPlot::plottableClick, this,
            [this, chart](QCPAbstractPlottable* p, int index, QMouseEvent*) {
              if (auto* bars = qobject_cast<QCPBars*>(p)) {
                if (index >= 0 && index < bars->data()->size())
                  onPlottableClicked(chart, (bars->data()->constBegin() + index)->key);
              } else if (auto* g = qobject_cast<QCPGraph*>(p)) {
                if (index >= 0 && index < g->data()->size())
                  onPlottableClicked(chart, (g->data()->constBegin() + index)->key);
              }
            });
    plots_[c] = plot;
    grid->addWidget(plot, 1 + c / 3, c % 3);
  }
  details_ = new QLabel(this);
  details_->setWordWrap(true);
  details_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  details_->setMargin(8);
  // A comparison adds lines: they scroll rather than being cut off.
  auto* detailsScroll = new QScrollArea(this);
  detailsScroll->setObjectName("details");
  detailsScroll->setFrameShape(QFrame::NoFrame);
  detailsScroll->setWidgetResizable(true);
  detailsScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  detailsScroll->setWidget(details_);
  // Its width is the column's (the plot above it), not the text's one line.
  detailsScroll->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
  detailsScroll->viewport()->setAutoFillBackground(false);  // the panel's background
  details_->setAutoFillBackground(false);
  grid->addWidget(detailsScroll, 2, 2);
  advice_ = new AdviceList(this);
  grid->addWidget(advice_, 3, 0, 1, 3);
  grid->setRowStretch(1, 4);
  grid->setRowStretch(2, 4);
  grid->setRowStretch(3, 2);
  clear();
}

QString ChartsPanel::chartName(Chart chart) {
  static const char* kNames[kChartCount] = {"utilisation", "bubble", "breakdown", "loss", "memory"};
  return QString::fromLatin1(kNames[chart]);
}

void ChartsPanel::clear() {
  hasReport_ = false;
  stagesUnknown_ = false;
  noSteps_ = false;
  for (auto& d : data_) d = ChartData{};
  shownLoss_ = ChartData{};
  shownCurve_.reset();
  comparedCurves_.clear();
  shownDetails_.clear();
  comparedDetails_.clear();
  summary_->setText(tr("No run analysed yet."));
  details_->clear();
  advice_->clear();
  rebuild();
}

QString ChartsPanel::summaryText() const {
  return summary_->text();
}

QString ChartsPanel::detailsText() const {
  return details_->text();
}

void ChartsPanel::setMessage(const QString& text) {
  summary_->setText(text);
}

void ChartsPanel::setProgress(int done, int total) {
  progress_->setVisible(done < total);
  progress_->setRange(0, std::max(total, 1));
  progress_->setValue(done);
}

void ChartsPanel::setReport(const analysis::RunReport& report) {
  hasReport_ = true;
  stagesUnknown_ = !report.ranks.empty() &&
                   std::all_of(report.ranks.begin(), report.ranks.end(),
                               [](const analysis::RankReport& r) { return r.info.pp < 0; });
  noSteps_ = !report.ranks.empty() &&
             std::all_of(report.ranks.begin(), report.ranks.end(),
                         [](const analysis::RankReport& r) { return r.wholeRun; });
  data_[kUtilisation] = utilisationChart(report);
  data_[kBubble] = bubbleChart(report);
  data_[kBreakdown] = breakdownChart(report);
  shownLoss_ = lossChart(report);
  shownCurve_ = lossCurve(report);
  updateLossChart();
  data_[kMemory] = memoryChart(report);
  QString text = tr("<b>run %1</b>").arg(report.run.id);
  if (report.stepTimeMeanNs) {
    text += tr(" · measured mean step %1").arg(formatDuration(*report.stepTimeMeanNs));
    if (report.stepTimeStdNs) text += tr(" ± %1").arg(formatDuration(*report.stepTimeStdNs));
  }
  // The replay's step beside the measured one, each named (an
  // oversubscribed run's two are far apart).
  if (report.replayedStepNs) {
    text += tr(" · replayed on ideal hardware %1").arg(formatDuration(*report.replayedStepNs));
  }
  if (report.tokensPerS) text += tr(" · %1 tokens/s").arg(*report.tokensPerS, 0, 'f', 0);
  if (report.slowestStage) text += tr(" · slowest stage %1").arg(*report.slowestStage);
  if (report.slowestRank) text += tr(" · slowest rank %1").arg(*report.slowestRank);
  summary_->setText(text);
  shownDetails_ = runDetailsHtml(report);
  updateDetails();
  advice_->setAdvice(report.advice);
  rebuild();
}

void ChartsPanel::setComparedRuns(const std::vector<analysis::RunReport>& reports) {
  comparedCurves_.clear();
  for (const analysis::RunReport& r : reports) comparedCurves_.push_back(lossCurve(r));
  comparedDetails_ = comparedCompressionHtml(reports);
  updateLossChart();
  updateDetails();
  rebuild();
}

void ChartsPanel::clearComparedRuns() {
  setComparedRuns({});
}

void ChartsPanel::updateLossChart() {
  if (comparedCurves_.empty()) {
    data_[kLoss] = shownLoss_;
    return;
  }
  std::vector<LossCurve> curves = comparedCurves_;
  if (shownCurve_ && std::none_of(curves.begin(), curves.end(), [&](const LossCurve& c) {
        return c.runId == shownCurve_->runId;
      })) {
    curves.push_back(*shownCurve_);
  }
  data_[kLoss] = lossChart(curves);
}

void ChartsPanel::updateDetails() {
  QString html = shownDetails_;
  if (!comparedDetails_.isEmpty()) html += tr("<br><b>Compared runs</b><br>") + comparedDetails_;
  if (!html.isEmpty()) {
    html +=
        tr("<br><span style='color:gray'>Click a bar to show its rank or stage in the "
           "timeline, a loss point to zoom to its step.</span>");
  }
  details_->setText(html);
}

int ChartsPanel::legendColumns() const {
  // Three legend entries side by side need about 420 px; a narrower chart
  // (a 1280 px screen) takes two, so that none is cut.
  return plots_[0]->width() >= kThreeColumnLegendPx ? 3 : 2;
}

void ChartsPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  if (legendColumns() != builtColumns_) rebuild();
  if (parentWidget() != nullptr) fitChartsTo(parentWidget()->height());
}

bool ChartsPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == parentWidget() && event->type() == QEvent::Resize) {
    fitChartsTo(parentWidget()->height());
  }
  return QWidget::eventFilter(watched, event);
}

void ChartsPanel::fitChartsTo(int visible) {
  auto* grid = static_cast<QGridLayout*>(layout());
  const int spacing = std::max(grid->verticalSpacing(), 0);
  // Where the charts begin: under the summary line, as laid out now.
  const int top = grid->cellRect(1, 0).isValid() ? grid->cellRect(1, 0).top()
                                                 : summary_->sizeHint().height() + spacing;
  const int advice =
      advice_->minimumSizeHint().height() + spacing + grid->contentsMargins().bottom();
  // The whole panel fits: the rows share the height by their stretch. Else
  // the charts take what the view shows and the advice goes below.
  int rows = 0;
  if (visible < top + 2 * kPlotMinHeight + spacing + advice) {
    rows = std::max(kPlotMinHeight, (visible - top - spacing) / 2);
  }
  if (grid->rowMinimumHeight(1) == rows) return;
  grid->setRowMinimumHeight(1, rows);
  grid->setRowMinimumHeight(2, rows);
  grid->setRowStretch(3, rows > 0 ? 100 : 2);  // the advice takes any rest
}

void ChartsPanel::rebuild() {
  builtColumns_ = legendColumns();
  for (int c = 0; c < kChartCount; ++c) {
    QCustomPlot* plot = plots_[c];
    plot->clearPlottables();
    plot->clearGraphs();
    plot->clearItems();
    plot->legend->setWrap(builtColumns_);  // before the items go in
    const ChartData& d = data_[c];
    static_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))
        ->setText(d.title.isEmpty() ? chartName(static_cast<Chart>(c)) : d.title);
    switch (c) {
      case kUtilisation: {
        QCPBars* below = nullptr;
        for (const ChartSeries& s : d.series) {
          if (s.name == "utilisation")
            addBars(plot, s, {-0.2, 0.38}, nullptr);
          else if (s.name == "comm ratio")
            addMarkers(plot, s, 0.2, false, seriesColour(s.name));
          else
            below = addBars(plot, s, {0.2, 0.38}, below);
        }
        setKeyTicks(plot, d, tr("rank"));
        break;
      }
      case kBubble: {
        // Side by side: measured, (replayed,) formula.
        const double n = static_cast<double>(d.series.size());
        const double width = 0.76 / std::max(n, 1.0);
        for (size_t i = 0; i < d.series.size(); ++i)
          addBars(plot, d.series[i], {(static_cast<double>(i) - (n - 1) / 2) * width, width},
                  nullptr);
        setKeyTicks(plot, d, tr("pipeline stage"));
        break;
      }
      case kBreakdown: {
        QCPBars* below = nullptr;
        for (const ChartSeries& s : d.series) below = addBars(plot, s, {0.0, 0.7}, below);
        setKeyTicks(plot, d, tr("rank"));
        break;
      }
      case kLoss: {
        // Compared runs: one colour each, their labels one per legend line.
        const bool compared = !comparedCurves_.empty();
        if (compared) plot->legend->setWrap(1);
        for (size_t i = 0; i < d.series.size(); ++i) {
          const ChartSeries& s = d.series[i];
          addMarkers(plot, s, 0.0, true,
                     compared ? runColour(static_cast<int>(i)) : seriesColour(s.name));
        }
        setKeyTicks(plot, d, tr("step"));
        break;
      }
      case kMemory: {
        QCPBars* below = nullptr;
        const bool formula =
            d.find("formula") != nullptr &&
            std::any_of(d.find("formula")->values.begin(), d.find("formula")->values.end(),
                        [](double v) { return !std::isnan(v); });
        for (const ChartSeries& s : d.series) {
          if (s.name == "formula") {
            if (formula)
              addBars(plot, s, {0.2, 0.38}, nullptr)
                  ->setBrush(QBrush(seriesColour(s.name), Qt::BDiagPattern));
          } else {
            below = addBars(plot, s, {formula ? -0.2 : 0.0, formula ? 0.38 : 0.7}, below);
          }
        }
        setKeyTicks(plot, d, tr("rank"));
        break;
      }
    }
    fitValues(plot, c != kLoss);
    if (c == kLoss && d.labels.size() > 0) plot->xAxis->setRange(-0.3, d.labels.size() - 0.7);
    plot->legend->setVisible(true);  // an invisible layout element collapses the axes
    // Series without a single value (a simulated or imported run's loss)
    // draw nothing either: the chart is empty.
    bool drawn = false;
    for (int i = 0; i < plot->plottableCount(); ++i) {
      drawn = drawn || !plot->plottable(i)->interface1D() ||
              plot->plottable(i)->interface1D()->dataCount() > 0;
    }
    if (!drawn) {
      plot->clearPlottables();
      // An empty legend would cap the layout's width (its maximum size is
      // that of its items): give it one, and say why the chart is empty.
      plot->addGraph()->setName(hasReport_ ? tr("(none)") : tr("(no run)"));
      if (hasReport_) {
        auto* text = new QCPItemText(plot);
        text->position->setType(QCPItemPosition::ptAxisRectRatio);
        text->position->setCoords(0.5, 0.5);
        QString note = tr("no data");
        if (c == kMemory) note = tr("no memory samples in this run");
        if (c == kBubble) {
          note = stagesUnknown_ ? tr("pipeline stages unknown:\nthe trace does not say")
                                : tr("no pipeline in this run (pp = 1)");
          // Before the stages: a run without steps has no bubble at all.
          if (noSteps_) note = tr("no steps in this run:\nno pipeline bubble");
        }
        if (c == kLoss) note = tr("no loss recorded in this run");
        text->setText(note);
        text->setColor(palette().color(QPalette::PlaceholderText));
        // On a box of the plot's colour: no grid or zero line through it.
        text->setBrush(palette().brush(QPalette::Base));
        text->setPadding(QMargins(4, 2, 4, 2));
      }
    }
    applyPalette(plot);
    plot->replot();
  }
}

void ChartsPanel::applyPalette(QCustomPlot* plot) {
  const QPalette pal = palette();
  const QColor text = pal.color(QPalette::WindowText);
  const QColor grid = pal.color(QPalette::Mid);
  plot->setBackground(pal.brush(QPalette::Base));
  plot->axisRect()->setBackground(pal.brush(QPalette::Base));
  for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
    axis->setBasePen(QPen(text));
    axis->setTickPen(QPen(text));
    axis->setSubTickPen(QPen(text));
    axis->setTickLabelColor(text);
    axis->setLabelColor(text);
    axis->grid()->setPen(QPen(grid, 0, Qt::DotLine));
  }
  plot->legend->setBrush(pal.brush(QPalette::Base));
  plot->legend->setTextColor(text);
  plot->legend->setBorderPen(QPen(grid));
  static_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0))->setTextColor(text);
}

void ChartsPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::ParentChange && parentWidget() != nullptr) {
    parentWidget()->installEventFilter(this);
    fitChartsTo(parentWidget()->height());
  }
  if (event->type() == QEvent::PaletteChange) {
    for (QCustomPlot* plot : plots_) {
      applyPalette(plot);
      plot->replot();
    }
  }
}

void ChartsPanel::onPlottableClicked(Chart chart, double key) {
  const ChartData& d = data_[chart];
  const int i = static_cast<int>(std::lround(key));
  if (i < 0 || i >= static_cast<int>(d.ids.size())) return;
  if (chart == kBubble)
    emit stageClicked(d.ids[i]);
  else if (chart == kLoss)
    emit stepClicked(d.ids[i]);
  else
    emit rankClicked(d.ids[i]);
}

std::vector<double> ChartsPanel::plottedValues(Chart chart, const QString& series) const {
  std::vector<double> out;
  QCustomPlot* plot = plots_[chart];
  for (int i = 0; i < plot->plottableCount(); ++i) {
    QCPAbstractPlottable* p = plot->plottable(i);
    if (p->name() != series) continue;
    if (auto* bars = qobject_cast<QCPBars*>(p)) {
      for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
        out.push_back(it->value);
    } else if (auto* g = qobject_cast<QCPGraph*>(p)) {
      for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
        out.push_back(it->value);
    }
  }
  return out;
}

double ChartsPanel::barTopPixel(Chart chart, const QString& series, int index) const {
  QCustomPlot* plot = plots_[chart];
  for (int i = 0; i < plot->plottableCount(); ++i) {
    auto* bars = qobject_cast<QCPBars*>(plot->plottable(i));
    if (bars == nullptr || bars->name() != series) continue;
    for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it) {
      if (std::abs(it->key - index) > 0.45) continue;
      double top = it->value;
      for (QCPBars* b = bars->barBelow(); b != nullptr; b = b->barBelow()) {
        auto below = b->data()->findBegin(it->key - 1e-9, false);
        if (below != b->data()->constEnd() && std::abs(below->key - it->key) < 1e-9)
          top += below->value;
      }
      return plot->yAxis->coordToPixel(top);
    }
  }
  return -1;
}

QString ChartsPanel::emptyNote(Chart chart) const {
  QCustomPlot* plot = plots_[chart];
  for (int i = 0; i < plot->itemCount(); ++i) {
    if (auto* text = qobject_cast<QCPItemText*>(plot->item(i))) return text->text();
  }
  return {};
}

QWidget* ChartsPanel::plotWidget(Chart chart) const {
  return plots_[chart];
}

double ChartsPanel::keyPixel(Chart chart, double key) const {
  return plots_[chart]->xAxis->coordToPixel(key);
}

double ChartsPanel::valuePixel(Chart chart, double value) const {
  return plots_[chart]->yAxis->coordToPixel(value);
}

Status ChartsPanel::exportChart(Chart chart, const QString& path, int width, int height) const {
  QCustomPlot* plot = plots_[chart];
  bool ok = false;
  if (path.endsWith(".svg", Qt::CaseInsensitive)) {
#if BUBBLESCOPE_WITH_SVG
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(QSize(width, height));
    svg.setViewBox(QRect(0, 0, width, height));
    svg.setTitle(data_[chart].title);
    QCPPainter painter;
    ok = painter.begin(&svg);
    if (ok) {
      plot->toPainter(&painter, width, height);
      ok = painter.end();
    }
#else
    return Status::unsupported("this build has no Qt SVG: export to .png instead");
#endif
  } else {
    ok = plot->savePng(path, width, height);
  }
  if (!ok) return Status::ioError("cannot write " + path.toStdString());
  return Status::ok();
}

}  // namespace bubblescope::gui
