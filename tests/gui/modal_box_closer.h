// Closes every modal dialog the window opens while a test drives it (a
// message box or a file dialog would block the test until its timeout) and
// keeps what it closed, for the test to report: a headless test never
// leaves a modal dialog open.
#pragma once

#include <QApplication>
#include <QDialog>
#include <QMessageBox>
#include <QStringList>
#include <QTimer>

namespace bubblescope::testing {

class ModalBoxCloser {
 public:
  ModalBoxCloser() {
    timer_.setInterval(50);
    QObject::connect(&timer_, &QTimer::timeout, [this] {
      QWidget* modal = QApplication::activeModalWidget();
      if (auto* box = qobject_cast<QMessageBox*>(modal)) {
        texts_ << box->text();
        box->reject();
      } else if (auto* dialog = qobject_cast<QDialog*>(modal)) {
        texts_ << QStringLiteral("%1: %2").arg(dialog->metaObject()->className(),
                                               dialog->windowTitle());
        dialog->reject();
      }
    });
    timer_.start();
  }
  // What was closed: message box texts, or "QFileDialog: title".
  const QStringList& texts() const { return texts_; }

 private:
  QTimer timer_;
  QStringList texts_;
};

}  // namespace bubblescope::testing
