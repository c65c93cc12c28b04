// GradCommFields: the layout editor's fields for how the data-parallel
// gradients travel (issue 19, engine/layout/grad_comm.h): the gradient
// compression (`grad_compression`: a kind, with the Top-K ratio or the
// PowerSGD rank beside it when the kind takes one), the all-reduce algorithm
// (`all_reduce`: flat or hierarchical), the nodes (`ranks_per_node`: 0 = the
// hosts, K = emulated nodes of K ranks) and the emulated inter-node link
// (`inter_node_gbps`, `inter_node_latency_us`: 0 = not paced / none).
//
// Contract: owns its widgets (children of the parent given); the editor adds
// rows() to its form, so each key has its own problem label. set() fills the
// fields from a layout without emitting edited(); apply() writes them into a
// layout, every other key untouched; the doubles come back exactly as set
// until edited (exact_double_spin_box.h). Widgets are named by their layout
// key ("grad_compression", "all_reduce", "ranks_per_node", ...), the
// compression's argument fields "grad_compression_ratio" and
// "grad_compression_rank". GUI thread only.
#pragma once

#include <QObject>
#include <QString>
#include <vector>

#include "engine/layout/layout.h"

class QComboBox;
class QSpinBox;
class QWidget;

namespace bubblescope::gui {

class ExactDoubleSpinBox;

class GradCommFields : public QObject {
  Q_OBJECT

 public:
  struct Row {
    QString key;  // the layout key whose problems go under the row
    QString label;
    QWidget* field = nullptr;
  };

  explicit GradCommFields(QWidget* parent);

  std::vector<Row> rows() const { return rows_; }
  void set(const layout::Layout& l);
  void apply(layout::Layout& l) const;

 signals:
  void edited();

 private:
  // Shows the ratio for topk and the rank for powersgd only.
  void showArgumentOfKind();
  void onEdited();

  std::vector<Row> rows_;
  QComboBox* compression_ = nullptr;
  ExactDoubleSpinBox* ratio_ = nullptr;  // the layout's ratio exactly until edited
  QSpinBox* rank_ = nullptr;
  QComboBox* allReduce_ = nullptr;
  QSpinBox* ranksPerNode_ = nullptr;
  ExactDoubleSpinBox* gbps_ = nullptr;
  ExactDoubleSpinBox* latencyUs_ = nullptr;
  bool updating_ = false;
};

}  // namespace bubblescope::gui
