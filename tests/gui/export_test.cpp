// Export of the timeline to share: the PNG has the run's title and the legend
// above the rows and stops below the last row; the SVG's hatching is a plain
// pattern (no mask) that a renderer draws as a hatch, not a solid block.
#include <gtest/gtest.h>

#include <QApplication>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QStandardPaths>

#include "gui/main_window.h"
#include "gui/span_palette.h"
#include "gui/svg_patterns.h"
#include "gui/timeline_export.h"
#include "gui/timeline_panel.h"
#include "gui/timeline_view.h"
#include "tests/gui/pipeline_trace.h"

namespace bubblescope::gui {
namespace {

// What QSvgGenerator (Qt 6.4) writes for a Qt::BDiagPattern brush.
const char* const kMaskedPattern = R"svg(<defs>
<mask id="patternmask12" x="0" y="0" width="8" height="8" stroke="none" fill="#ffffff" patternUnits="userSpaceOnUse" >
<rect x="7" y="0" width="1" height="1" />
<rect x="0" y="7" width="1" height="1" />
</mask>

<pattern id="fillpattern12_d32f2f" x="0" y="0" width="8" height="8" patternUnits="userSpaceOnUse" >
<rect x="0" y="0" width="8" height="8" stroke="none" fill="#d32f2f" mask="url(#patternmask12)" />
</pattern>
</defs>
<g fill="url(#fillpattern12_d32f2f)"><rect x="10" y="10" width="80" height="60"/></g>)svg";

TEST(SvgPatterns, MaskedPatternBecomesThePixelsInTheFillColour) {
  const QString out = QString::fromUtf8(inlinePatternMasks(kMaskedPattern));
  EXPECT_FALSE(out.contains("mask")) << out.toStdString();
  EXPECT_TRUE(out.contains(R"svg(<pattern id="fillpattern12_d32f2f")svg"));
  // The pattern holds the mask's two pixels, filled with the colour, and no
  // solid 8 x 8 rect.
  EXPECT_TRUE(
      out.contains(QStringLiteral("<g stroke=\"none\" fill=\"#d32f2f\">\n"
                                  "<rect x=\"7\" y=\"0\" width=\"1\" height=\"1\" />\n"
                                  "<rect x=\"0\" y=\"7\" width=\"1\" height=\"1\" />\n"
                                  "</g>")))
      << out.toStdString();
  EXPECT_FALSE(out.contains(R"svg(width="8" height="8" stroke="none")svg"));
  EXPECT_TRUE(out.contains(R"svg(<g fill="url(#fillpattern12_d32f2f)">)svg")) << "the use is kept";
  const QByteArray plain = "<svg><rect x=\"0\" y=\"0\" width=\"1\" height=\"1\"/></svg>";
  EXPECT_EQ(inlinePatternMasks(plain), plain);
}

struct ExportFixture : ::testing::Test {
  bubblescope::testing::TempDir dir;
  std::string path = dir.file("runs.db");
  std::unique_ptr<MainWindow> window;

  void SetUp() override {
    bubblescope::testing::writePipelineRun(path);
    window = std::make_unique<MainWindow>();
    window->resize(1400, 900);
    ASSERT_TRUE(window->openFile(QString::fromStdString(path)).isOk());
    window->show();
    QApplication::processEvents();
  }
};

bool hasColour(const QImage& image, int y0, int y1, QColor colour) {
  for (int y = y0; y < y1; ++y) {
    for (int x = 0; x < image.width(); ++x) {
      if (image.pixelColor(x, y).rgb() == colour.rgb()) return true;
    }
  }
  return false;
}

// True when some size x size square of the image is all (near) black.
bool hasSolidBlackSquare(const QImage& image, int size) {
  const QImage img = image.convertToFormat(QImage::Format_RGB32);
  std::vector<int> run(img.width(), 0);  // black pixels straight above, per column
  for (int y = 0; y < img.height(); ++y) {
    int across = 0;
    for (int x = 0; x < img.width(); ++x) {
      const QRgb c = img.pixel(x, y);
      const bool black = qRed(c) < 40 && qGreen(c) < 40 && qBlue(c) < 40;
      run[x] = black ? run[x] + 1 : 0;
      across = run[x] >= size ? across + 1 : 0;
      if (across >= size) return true;
    }
  }
  return false;
}

TEST_F(ExportFixture, PngHasTitleAndLegendAndStopsBelowTheLastRow) {
  TimelineView* view = window->timeline()->view();
  const QString png = QString::fromStdString(dir.file("t.png"));
  const QString title = "run 1 · the pipeline run";
  ASSERT_TRUE(exportTimeline(view, title, png).isOk());
  const QImage image(png);
  ASSERT_FALSE(image.isNull());
  EXPECT_EQ(image.size(), timelinePictureSize(view));
  EXPECT_EQ(image.width(), view->width());
  // Two ranks of three lanes: far shorter than the view on a 900 px window.
  const int rowsHeight = TimelinePlacement::kRulerHeight + view->contentHeight();
  ASSERT_LT(rowsHeight + 200, view->height()) << "the fixture's view must be taller than its rows";
  const int legendBottom = image.height() - rowsHeight - 6;
  EXPECT_GT(legendBottom, 30) << "a title and a legend sit above the rows";
  EXPECT_LT(image.height(), view->height()) << "the empty area below the rows is cut";
  // The legend's forward swatch is above the rows; the title is dark text on
  // the top line.
  EXPECT_TRUE(hasColour(image, 0, legendBottom, colourOf(trace_model::EventKind::kForward)));
  bool titleInk = false;
  for (int y = 0; y < 16 && !titleInk; ++y) {
    for (int x = 0; x < 200 && !titleInk; ++x) titleInk = image.pixelColor(x, y).lightness() < 100;
  }
  EXPECT_TRUE(titleInk) << "no title text on the first line";
  // The rows are drawn: stage 0's forward span of each step is in the bottom band.
  EXPECT_TRUE(
      hasColour(image, legendBottom, image.height(), colourOf(trace_model::EventKind::kForward)));
}

TEST_F(ExportFixture, SvgHatchingIsAPatternEveryRendererDraws) {
#if !BUBBLESCOPE_WITH_SVG
  GTEST_SKIP() << "built without Qt SVG";
#endif
  TimelineView* view = window->timeline()->view();
  const QString svg = QString::fromStdString(dir.file("t.svg"));
  ASSERT_TRUE(exportTimeline(view, "run 1 · the pipeline run", svg).isOk());
  QFile f(svg);
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  const QByteArray text = f.readAll();
  EXPECT_TRUE(text.contains("<pattern")) << "the idle bubble of stage 0 is hatched";
  EXPECT_FALSE(text.contains("<mask"));
  EXPECT_TRUE(text.contains("the pipeline run")) << "the title stays text";
  EXPECT_TRUE(text.contains("forward")) << "the legend stays text";

  const QString rsvg = QStandardPaths::findExecutable("rsvg-convert");
  if (rsvg.isEmpty()) GTEST_SKIP() << "rsvg-convert not installed: the SVG was not rendered";
  const QString png = QString::fromStdString(dir.file("rendered.png"));
  ASSERT_EQ(QProcess::execute(rsvg, {svg, "-o", png}), 0);
  const QImage rendered(png);
  ASSERT_FALSE(rendered.isNull());
  EXPECT_FALSE(hasSolidBlackSquare(rendered, 12)) << "a solid black area in the rendered SVG";
  EXPECT_TRUE(
      hasColour(rendered, 0, rendered.height(), colourOf(trace_model::EventKind::kForward)));
}

}  // namespace
}  // namespace bubblescope::gui
