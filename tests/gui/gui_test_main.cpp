// gui_test's main: one QApplication (offscreen unless a platform is set) for
// every test.
#include <gtest/gtest.h>

#include <QApplication>

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QApplication::setOrganizationName("BubblescopeTest");
  Q_INIT_RESOURCE(bubblescope);  // the icons of the static bubblescope_gui
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
