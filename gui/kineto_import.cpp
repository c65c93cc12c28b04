#include "gui/kineto_import.h"

#include <QApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QProgressDialog>
#include <QPushButton>
#include <memory>

#include "storage/import/trace_import.h"
#include "storage/trace_writer.h"

namespace bubblescope::gui {

KinetoImportChoice chooseKinetoImport(QWidget* parent, const QString& openTrace) {
  KinetoImportChoice choice;
  const QStringList files = QFileDialog::getOpenFileNames(
      parent, QObject::tr("Import PyTorch profiler or Nsight Systems traces (one per rank)"), {},
      QObject::tr("Kineto traces (*.json *.json.gz);;Nsight Systems SQLite exports (*.sqlite);;"
                  "All files (*)"));
  if (files.isEmpty()) return choice;
  const ImportTarget where =
      openTrace.isEmpty() ? ImportTarget::kNewFile : askImportTarget(parent, openTrace);
  if (where == ImportTarget::kCancel) return choice;
  choice.target = openTrace;
  if (where == ImportTarget::kNewFile) {
    choice.target = QFileDialog::getSaveFileName(parent, QObject::tr("Store the imported run in"),
                                                 QStringLiteral("imported.db"),
                                                 QObject::tr("Bubblescope traces (*.db)"));
    if (choice.target.isEmpty()) return choice;
  }
  choice.files = files;
  return choice;
}

ImportTarget askImportTarget(QWidget* parent, const QString& openTrace) {
  const QString name = QFileInfo(openTrace).fileName();
  QMessageBox box(QMessageBox::Question, QObject::tr("Import PyTorch traces"),
                  QObject::tr("Add the imported run to %1, beside its runs, or store it in a "
                              "new trace file?")
                      .arg(name),
                  QMessageBox::NoButton, parent);
  QPushButton* add = box.addButton(QObject::tr("Add to %1").arg(name), QMessageBox::AcceptRole);
  QPushButton* fresh = box.addButton(QObject::tr("New file…"), QMessageBox::ActionRole);
  box.addButton(QMessageBox::Cancel);
  box.setDefaultButton(add);
  box.exec();
  if (box.clickedButton() == add) return ImportTarget::kOpenFile;
  if (box.clickedButton() == fresh) return ImportTarget::kNewFile;
  return ImportTarget::kCancel;
}

Result<import::ImportSummary> importKinetoFiles(const QStringList& files, const QString& target,
                                                QWidget* progressParent) {
  BS_ASSIGN_OR_RETURN(auto writer, storage::TraceWriter::open(target.toStdString()));
  std::unique_ptr<QProgressDialog> progress;
  import::ImportOptions options;
  if (progressParent != nullptr) {
    progress = std::make_unique<QProgressDialog>(QObject::tr("Importing…"), QString(), 0, 1000,
                                                 progressParent);
    progress->setWindowModality(Qt::WindowModal);
    progress->setMinimumDuration(300);
    options.progress = [&progress](const import::ImportProgress& p) {
      const double file = p.fileBytes > 0 ? static_cast<double>(p.bytesRead) / p.fileBytes : 1.0;
      progress->setValue(static_cast<int>(1000 * (p.fileIndex + file) / p.fileCount));
      progress->setLabelText(QObject::tr("Importing %1…").arg(QString::fromStdString(*p.path)));
      QApplication::processEvents();
    };
  }
  std::vector<std::string> paths;
  for (const QString& f : files) paths.push_back(f.toStdString());
  auto summary = import::importTraces(*writer, paths, options);
  if (progress) progress->setValue(1000);
  return summary;
}

}  // namespace bubblescope::gui
