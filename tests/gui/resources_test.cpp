// The app's icon renders through Qt SVG (no unsupported SVG features), with
// its red bubble hatching; the .desktop file starts the app with it.
#include <gtest/gtest.h>

#include <QFile>
#include <QIcon>
#include <QImage>

namespace {

TEST(Resources, IconRendersWithItsBubbles) {
  const QImage image = QIcon(":/bubblescope/icon.svg").pixmap(64, 64).toImage();
  ASSERT_FALSE(image.isNull());
  int red = 0;
  for (int y = 0; y < image.height(); ++y) {
    for (int x = 0; x < image.width(); ++x) {
      const QColor c = image.pixelColor(x, y);
      red += c.red() > 150 && c.green() < 100 && c.blue() < 100;
    }
  }
  EXPECT_GT(red, 20) << "the hatched gaps are drawn";
  if (!qEnvironmentVariableIsEmpty("BUBBLESCOPE_SAVE_ICON"))
    image.save(qEnvironmentVariable("BUBBLESCOPE_SAVE_ICON"));
}

TEST(Resources, DesktopFileStartsTheApp) {
  QFile f(QStringLiteral(BUBBLESCOPE_SOURCE_DIR "/resources/bubblescope.desktop"));
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  const QString text = QString::fromUtf8(f.readAll());
  EXPECT_TRUE(text.contains("Exec=bubblescope"));
  EXPECT_TRUE(text.contains("Icon=bubblescope"));
}

}  // namespace
