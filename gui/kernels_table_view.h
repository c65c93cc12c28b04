// KernelsTableView: the Kernels tab's table (a QTableView over
// KernelsTableModel, usually through a sorting proxy) whose kernel names stay
// readable on a small screen.
//
// Contract: the kernel name column is shown third (rank, type, kernel, then
// the numbers; the model's column order is unchanged). The numbers take their
// contents' width; the name takes what they leave of the viewport, but never
// less than kNameShare of it (nor more than its widest name needs when the
// numbers would otherwise be pushed off): on a 1280 px screen the last
// numbers scroll sideways rather than the names shrinking to a few letters.
// Long names are elided in the middle (a kernel's distinguishing suffix,
// "_nn" or "_tn", stays); the whole name is in the tooltip. Columns are fitted
// again on every model reset and resize; a user's drag of the name's edge
// holds until then. With no rows the viewport says why (setEmptyText: no run
// analysed yet, or a run without GPU kernel records), not a blank pane.
#pragma once

#include <QTableView>

namespace bubblescope::gui {

class KernelsTableView : public QTableView {
  Q_OBJECT

 public:
  static constexpr double kNameShare = 0.4;

  explicit KernelsTableView(QWidget* parent = nullptr);
  void setModel(QAbstractItemModel* model) override;
  // Sizes the columns as the contract says (called on reset and resize).
  void fitColumns();
  // What the empty table says in its middle.
  void setEmptyText(const QString& text);
  QString emptyText() const { return emptyText_; }

 protected:
  void resizeEvent(QResizeEvent* event) override;
  void paintEvent(QPaintEvent* event) override;

 private:
  QString emptyText_;
};

}  // namespace bubblescope::gui
