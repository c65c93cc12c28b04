// Placeholder window until the desktop app issue lands.
#include <QApplication>
#include <QLabel>

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QLabel label("Bubblescope");
  label.show();
  return app.exec();
}
