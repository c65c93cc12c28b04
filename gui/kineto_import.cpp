#include "gui/kineto_import.h"

#include <QApplication>
#include <QFileDialog>
#include <QMessageBox>
#include <QProgressDialog>

#include "storage/import/kineto_importer.h"
#include "storage/trace_writer.h"

namespace bubblescope::gui {

Result<QString> importKinetoTraces(QWidget* parent, const QString& openTrace) {
  const QStringList files = QFileDialog::getOpenFileNames(
      parent, QObject::tr("Import PyTorch profiler traces (one per rank)"), {},
      QObject::tr("Kineto traces (*.json *.json.gz);;All files (*)"));
  if (files.isEmpty()) return QString();
  QString target = openTrace;
  if (target.isEmpty()) {
    target = QFileDialog::getSaveFileName(parent, QObject::tr("Store the imported run in"),
                                          QStringLiteral("imported.db"),
                                          QObject::tr("Bubblescope traces (*.db)"));
    if (target.isEmpty()) return QString();
  }
  BS_ASSIGN_OR_RETURN(auto writer, storage::TraceWriter::open(target.toStdString()));
  QProgressDialog progress(QObject::tr("Importing…"), QString(), 0, 1000, parent);
  progress.setWindowModality(Qt::WindowModal);
  progress.setMinimumDuration(300);
  import::ImportOptions options;
  std::vector<std::string> paths;
  for (const QString& f : files) paths.push_back(f.toStdString());
  options.progress = [&](const import::ImportProgress& p) {
    const double file = p.fileBytes > 0 ? static_cast<double>(p.bytesRead) / p.fileBytes : 1.0;
    progress.setValue(static_cast<int>(1000 * (p.fileIndex + file) / p.fileCount));
    progress.setLabelText(QObject::tr("Importing %1…").arg(QString::fromStdString(*p.path)));
    QApplication::processEvents();
  };
  BS_ASSIGN_OR_RETURN(auto summary, import::importKineto(*writer, paths, options));
  progress.setValue(1000);
  if (!summary.warnings.empty()) {
    QString text;
    for (const auto& w : summary.warnings) text += QString::fromStdString(w) + "\n";
    QMessageBox::information(parent, QObject::tr("Imported with notes"), text);
  }
  return target;
}

}  // namespace bubblescope::gui
