// LayoutEditor: edits a layout::Layout field by field.
//
// As the user types it shows the world size (dp × tp × pp), the global batch
// (micro-batch size × micro-batches × dp, in sequences and tokens) and the
// formula bubble of the schedule, the predicted step (PredictionLabel,
// debounced), and puts each problem of
// layout::layoutProblems() under the field it concerns (problems of no single
// field go under the summary). Loads and saves layout JSON
// (docs/layout-format.md); "Samples" lists samples/layouts/*.jsonc and
// *.json, and the Load dialog shows both.
//
// Layout: the buttons, then the fields in a scroll area (objectName
// "fieldsScroll"), then, always in sight, the summary, the prediction, the
// problems of no single field and the Run and Simulate buttons: the editor
// needs little height whatever its fields and problems.
//
// Field widgets are named by their layout key (objectName "tp", "schedule",
// "grad_compression", ...) so tests and scripts can find them.
#pragma once

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMap>
#include <QSpinBox>
#include <QStringList>
#include <QWidget>

class QFormLayout;
class QMenu;
class QPushButton;
class QScrollArea;

#include "common/status.h"
#include "engine/layout/layout.h"

namespace bubblescope::gui {

class GradCommFields;
class PredictionLabel;

class LayoutEditor : public QWidget {
  Q_OBJECT

 public:
  explicit LayoutEditor(QWidget* parent = nullptr);

  // The layout the fields describe (valid or not).
  layout::Layout layout() const;
  void setLayout(const layout::Layout& layout);
  // The problems of layout(), and the one shown under `field` ("" if none).
  QStringList problems() const { return problems_; }
  QString problemFor(const QString& field) const { return fieldProblems_.value(field); }
  bool isValid() const { return problems_.isEmpty(); }
  QString summaryText() const;
  // The predicted step of layout() (objectName "prediction").
  PredictionLabel* prediction() const { return prediction_; }

  Status loadFile(const QString& path);
  Status saveFile(const QString& path) const;
  // Fills the Hosts field from an mpirun hostfile (`node1 slots=4` per line)
  // as `node1:4, ...`, read by layout::hostfileHosts, as `run --hostfile`
  // reads it: Run then starts the same job as the CLI would. On an error
  // (unreadable, no host) the field is left as it was. The "Hostfile…"
  // button next to the field asks for the path in a dialog and calls this;
  // tests and headless callers call it directly (no dialog).
  Status loadHostfile(const QString& path);
  // Folders searched for sample layouts, first existing wins.
  static QStringList sampleFolders();
  // The layout files (*.jsonc, *.json) of the first sample folder that has
  // any, by name; empty when none has.
  static QStringList sampleFiles();

 signals:
  void layoutChanged();
  void runRequested();
  // "Simulate": show the layout's ideal schedule in the teaching lab.
  void simulateRequested();

 private:
  QSpinBox* addSpin(const QString& key, const QString& label, int min, int max);
  void addRow(const QString& key, const QString& label, QWidget* field);
  void onPresetChosen();
  void onFieldEdited();
  void revalidate();
  void fillSamplesMenu();
  void fitScrollWidth();

  QWidget* fields_ = nullptr;  // the form, in scroll_
  QScrollArea* scroll_ = nullptr;
  QFormLayout* form_ = nullptr;
  QComboBox* preset_ = nullptr;
  QMap<QString, QSpinBox*> spins_;
  QComboBox* zero_ = nullptr;
  QComboBox* schedule_ = nullptr;
  QComboBox* backend_ = nullptr;
  QCheckBox* recompute_ = nullptr;
  QCheckBox* overlap_ = nullptr;
  GradCommFields* gradComm_ = nullptr;  // grad_compression, all_reduce, nodes, link
  QLineEdit* hosts_ = nullptr;
  QLabel* summary_ = nullptr;
  PredictionLabel* prediction_ = nullptr;
  QLabel* generalProblems_ = nullptr;
  QMap<QString, QLabel*> problemLabels_;
  QMenu* samplesMenu_ = nullptr;
  QPushButton* runButton_ = nullptr;
  QStringList problems_;
  QMap<QString, QString> fieldProblems_;
  layout::Layout base_;  // keys the editor does not show are kept from here
  bool updating_ = false;
};

}  // namespace bubblescope::gui
