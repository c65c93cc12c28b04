// File > Import PyTorch traces…: Kineto traces or Nsight Systems SQLite
// exports (one per rank; the format read from the files' content) imported
// as one run (storage/import/trace_import.h, docs/import.md). chooseKinetoImport asks for the files
// and where to store them (interactive only:
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

// Asks for the files, then where the run goes: with a file open,
// askImportTarget; without one, a new file's name.
KinetoImportChoice chooseKinetoImport(QWidget* parent, const QString& openTrace);

// With a trace file open, where an import goes is asked, never assumed
// (appending changes a file the user may not mean to touch): a message box
// with "Add to <file>" (the default), "New file…" and Cancel.
enum class ImportTarget { kOpenFile, kNewFile, kCancel };
ImportTarget askImportTarget(QWidget* parent, const QString& openTrace);

// Imports `files` as one run appended to `target`. `progressParent`: the
// window a progress dialog belongs to; nullptr for none (headless, tests).
Result<import::ImportSummary> importKinetoFiles(const QStringList& files, const QString& target,
                                                QWidget* progressParent);

}  // namespace bubblescope::gui
