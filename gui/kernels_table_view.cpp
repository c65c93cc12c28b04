#include "gui/kernels_table_view.h"

#include <QHeaderView>
#include <QPainter>
#include <QResizeEvent>
#include <algorithm>
#include <cmath>

#include "gui/kernels_table_model.h"

namespace bubblescope::gui {

KernelsTableView::KernelsTableView(QWidget* parent) : QTableView(parent) {
  setWordWrap(false);
  setTextElideMode(Qt::ElideMiddle);
  horizontalHeader()->setStretchLastSection(false);
  horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
}

void KernelsTableView::setModel(QAbstractItemModel* model) {
  if (this->model() != nullptr) disconnect(this->model(), nullptr, this, nullptr);
  QTableView::setModel(model);
  if (model != nullptr) {
    connect(model, &QAbstractItemModel::modelReset, this, &KernelsTableView::fitColumns);
  }
  fitColumns();
}

void KernelsTableView::fitColumns() {
  if (model() == nullptr) return;
  QHeaderView* header = horizontalHeader();
  if (header->count() <= KernelsTableModel::kName) return;
  // rank, type, kernel, then the numbers (a header reset forgets moves).
  if (header->visualIndex(KernelsTableModel::kName) != 2) {
    header->moveSection(header->visualIndex(KernelsTableModel::kName), 2);
  }
  int numbers = 0;
  for (int c = 0; c < model()->columnCount(); ++c) {
    if (c == KernelsTableModel::kName) continue;
    resizeColumnToContents(c);
    numbers += header->sectionSize(c);
  }
  const int room = viewport()->width();
  const int widest = std::max(sizeHintForColumn(KernelsTableModel::kName),
                              header->sectionSizeHint(KernelsTableModel::kName));
  const int least = static_cast<int>(std::ceil(room * kNameShare));
  // What the numbers leave; at least kNameShare of the viewport, and no
  // wider than the names need once that pushes numbers off.
  int name = std::max(room - numbers, std::min(least, widest));
  header->resizeSection(KernelsTableModel::kName, std::max(name, header->minimumSectionSize()));
}

void KernelsTableView::setEmptyText(const QString& text) {
  if (text == emptyText_) return;
  emptyText_ = text;
  viewport()->update();
}

void KernelsTableView::paintEvent(QPaintEvent* event) {
  QTableView::paintEvent(event);
  if (model() == nullptr || model()->rowCount() > 0 || emptyText_.isEmpty()) return;
  QPainter p(viewport());
  p.setPen(palette().color(QPalette::PlaceholderText));
  p.drawText(viewport()->rect().adjusted(24, 24, -24, -24),
             Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap, emptyText_);
}

void KernelsTableView::resizeEvent(QResizeEvent* event) {
  QTableView::resizeEvent(event);
  fitColumns();
}

}  // namespace bubblescope::gui
