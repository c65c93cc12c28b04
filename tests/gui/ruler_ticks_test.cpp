// The ruler's labels: one unit per view, the origin reads "0" (not
// "0.00 ns"), and labels never overlap, whatever the zoom.
#include "gui/ruler_ticks.h"

#include <gtest/gtest.h>

#include <QApplication>
#include <QStyle>
#include <QStyleFactory>

#include "gui/palette.h"
#include "gui/span_palette.h"
#include "gui/time_format.h"
#include "tests/gui/contrast.h"

namespace bubblescope::gui {
namespace {

// A fixed-pitch stand-in for font metrics: 7 px per character.
int widthOf(const QString& text) {
  return 7 * static_cast<int>(text.size());
}

TimelinePlacement placement(double t0Ns, double t1Ns, int widthPx) {
  TimelinePlacement at;
  at.plot = QRect(200, 28, widthPx, 400);
  at.t0Ns = t0Ns;
  at.t1Ns = t1Ns;
  at.originNs = 1'000'000'000;
  return at;
}

TEST(RulerTicks, TheOriginReadsZeroAndLabelsShareAUnit) {
  const RulerLayout l = rulerLayout(placement(1e9, 1e9 + 500e6, 1000), widthOf);
  ASSERT_FALSE(l.ticks.empty());
  EXPECT_EQ(l.ticks.front().label, "0");
  EXPECT_DOUBLE_EQ(l.ticks.front().x, 200);
  QStringList labels;
  for (const RulerTick& t : l.ticks) {
    if (!t.label.isEmpty()) labels << t.label;
  }
  EXPECT_EQ(labels, (QStringList{"0", "50 ms", "100 ms", "150 ms", "200 ms", "250 ms", "300 ms",
                                 "350 ms", "400 ms", "450 ms"}))
      << "500 ms would run past the right edge";
}

TEST(RulerTicks, LabelsNeverOverlapAtAnyZoom) {
  // From a whole 60 s run down to 100 ns, at several widths and offsets.
  for (int widthPx : {300, 800, 1300}) {
    for (double spanNs : {60e9, 7.3e9, 1.1e9, 333e6, 48e6, 2.2e6, 91e3, 1e3, 100.0}) {
      for (double offsetNs : {0.0, 0.37 * spanNs, 59e9 - spanNs}) {
        const double t0 = 1e9 + std::max(0.0, offsetNs);
        const RulerLayout l = rulerLayout(placement(t0, t0 + spanNs, widthPx), widthOf);
        double lastEnd = -1e9;
        int labelled = 0;
        for (const RulerTick& t : l.ticks) {
          EXPECT_GE(t.x, 200 - 1e-6);
          EXPECT_LE(t.x, 200 + widthPx);
          if (t.label.isEmpty()) continue;
          ++labelled;
          EXPECT_NE(t.label, "0.00 ns");
          EXPECT_GT(t.x + 3, lastEnd + 8) << "overlap at width " << widthPx << " span " << spanNs;
          lastEnd = t.x + 3 + widthOf(t.label);
          EXPECT_LE(lastEnd, 200 + widthPx);
        }
        EXPECT_GE(labelled, 1) << "width " << widthPx << " span " << spanNs;
      }
    }
  }
}

// Step marks (issue 31: step lines ran through the "step N" labels): at
// every step density no line falls inside a label's text, labels do not
// overlap, and each step that shows gets a line or sits under a label.
TEST(RulerTicks, StepLinesNeverRunThroughAStepLabel) {
  for (const double stepPx : {3.0, 5.0, 9.0, 20.0, 45.0, 120.0}) {
    const int widthPx = 900;
    std::vector<trace_model::StepWindow> steps;
    const double nsPerPx = 1e6;
    for (int s = 0; s * stepPx < widthPx; ++s) {
      const auto start = static_cast<int64_t>(1e9 + s * stepPx * nsPerPx);
      steps.push_back({s, start, static_cast<int64_t>(start + stepPx * nsPerPx)});
    }
    const TimelinePlacement at = placement(1e9, 1e9 + widthPx * nsPerPx, widthPx);
    const std::vector<StepMark> marks = stepMarks(at, steps, widthOf);
    ASSERT_FALSE(marks.empty());
    std::vector<std::pair<double, double>> labels;  // [start, end) of each label's text
    for (const StepMark& m : marks) {
      if (m.label.isEmpty()) continue;
      const double start = m.x + kStepLabelOffsetPx;
      if (!labels.empty()) {
        EXPECT_GE(start, labels.back().second) << "labels overlap";
      }
      labels.push_back({start, start + widthOf(m.label)});
      EXPECT_LE(labels.back().second, at.plot.right());
    }
    EXPECT_FALSE(labels.empty()) << stepPx << " px a step";
    double lastLine = -1e9;
    for (const StepMark& m : marks) {
      EXPECT_GE(m.x - lastLine, kStepLineGapPx);
      lastLine = m.x;
      if (m.underLabel) continue;  // drawn without its line
      for (const auto& [start, end] : labels) {
        EXPECT_FALSE(m.x >= start - 1 && m.x <= end + 1)
            << "the line of a step at x " << m.x << " runs through the label at " << start << " ("
            << stepPx << " px a step)";
      }
    }
  }
}

TEST(TimeFormat, TickLabelsHaveTheDecimalsTheirSpacingNeeds) {
  EXPECT_EQ(formatTickLabel(0, 50e6, 500e6), "0");
  EXPECT_EQ(formatTickLabel(1.5e6, 0.5e6, 2e6), "1.5 ms");
  EXPECT_EQ(formatTickLabel(1e6, 0.5e6, 2e6), "1.0 ms");
  EXPECT_EQ(formatTickLabel(59.98e9, 20e6, 60e9), "59.98 s");
  EXPECT_EQ(formatTickLabel(300, 100, 900), "300 ns");
  EXPECT_EQ(formatTickLabel(40e3, 20e3, 91e3), QString::fromUtf8("40 µs"));
}

// The step marks and their "step N" labels are legible on both palettes
// (issue 31 walk: dark blue on the dark palette's window read about 2:1):
// WCAG's 4.5:1 for text against the ruler's background, the window colour.
TEST(RulerTicks, StepLabelsAreLegibleOnBothPalettes) {
  const QPalette savedPalette = QApplication::palette();
  const QString savedStyle = QApplication::style()->name();
  for (bool dark : {false, true}) {
    applyPalette(dark);
    const QPalette palette = QApplication::palette();
    const QColor mark = stepMarkColour(palette);
    const QColor window = palette.color(QPalette::Window);
    EXPECT_GE(bubblescope::testing::contrastRatio(mark, window), 4.5)
        << (dark ? "dark: " : "light: ") << mark.name().toStdString() << " on "
        << window.name().toStdString();
  }
  QApplication::setStyle(QStyleFactory::create(savedStyle));
  QApplication::setPalette(savedPalette);
}

}  // namespace
}  // namespace bubblescope::gui
