// MainWindow::importTraces: File > Import PyTorch traces once its dialogs
// have answered (gui/kineto_import.h).
#include <QLabel>
#include <QMessageBox>

#include "gui/kineto_import.h"
#include "gui/main_window.h"

namespace bubblescope::gui {

Status MainWindow::importTraces(const QStringList& files, const QString& target) {
  BS_ASSIGN_OR_RETURN(const import::ImportSummary summary,
                      importKinetoFiles(files, target, headless_ ? nullptr : this));
  BS_RETURN_IF_ERROR(openFile(target));  // the imported run is the last: it is shown
  if (summary.warnings.empty()) return Status::ok();
  QStringList notes;
  for (const auto& w : summary.warnings) notes << QString::fromStdString(w);
  const QString text =
      tr("Imported run %1 with %n note(s): ", nullptr, notes.size()).arg(summary.runId) +
      notes.join(QStringLiteral("; "));
  setStatus(text);
  if (!headless_) QMessageBox::information(this, tr("Imported with notes"), notes.join("\n"));
  return Status::ok();
}

}  // namespace bubblescope::gui
