// File > Import PyTorch traces…: Kineto traces or Nsight Systems SQLite
// exports (one per rank; the format read from the files' content) imported
// as one run (storage/import/trace_import.h, docs/import.md). chooseKinetoImport asks for the files
// and, when no trace file is open, where to store them (interactive only:
// headless modes never call it); importKinetoFiles does the import, with a
// progress dialog only when given a parent for it (MainWindow::importTraces
// calls both).
#pragma once

#include <QString>
#include <QStringList>

#include "common/result.h"
#include "storage/import/import_summary.h"

class QWidget;

namespace bubblescope::gui {

struct KinetoImportChoice {
  QStringList files;  // empty: the user cancelled
  QString target;     // the trace file to append the run to
};

KinetoImportChoice chooseKinetoImport(QWidget* parent, const QString& openTrace);

// Imports `files` as one run appended to `target`. `progressParent`: the
// window a progress dialog belongs to; nullptr for none (headless, tests).
Result<import::ImportSummary> importKinetoFiles(const QStringList& files, const QString& target,
                                                QWidget* progressParent);

}  // namespace bubblescope::gui
