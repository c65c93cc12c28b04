// MainWindow's Kernels tab (docs/analysis.md, "GPU kernels, launches and
// memory copies"): the shown run's GPU kernels per rank from its report,
// sortable by any column. Selecting a row marks the kernel's rank in the
// timeline, highlights every instance of the kernel on that rank's GPU
// streams (at every zoom; cleared with the selection) and selects its
// longest record (outlined); a double-click shows that record in the
// timeline.
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <algorithm>

#include "gui/kernels_table_model.h"
#include "gui/kernels_table_view.h"
#include "gui/main_window.h"
#include "gui/timeline_panel.h"
#include "gui/timeline_view.h"

namespace bubblescope::gui {

void MainWindow::buildKernelsTab() {
  kernels_ = new KernelsTableModel(this);
  auto* sorted = new QSortFilterProxyModel(this);
  sorted->setSourceModel(kernels_);
  sorted->setSortRole(KernelsTableModel::kValueRole);
  kernelsView_ = new KernelsTableView(this);
  kernelsView_->setObjectName("kernelsView");
  kernelsView_->setModel(sorted);
  kernelsView_->verticalHeader()->hide();
  kernelsView_->setAlternatingRowColors(true);
  kernelsView_->setSelectionBehavior(QAbstractItemView::SelectRows);
  kernelsView_->setSelectionMode(QAbstractItemView::SingleSelection);
  kernelsView_->setSortingEnabled(true);
  kernelsView_->sortByColumn(KernelsTableModel::kTotalMs, Qt::DescendingOrder);
  tabs_->insertTab(kKernelsTab, kernelsView_, tr("Kernels"));
  clearKernels();
  // A kernel name can be 500 characters: kernels_table_view.h gives it
  // what the numbers leave, at least 40% of the width (the whole name in its
  // tooltip).
  auto recordOf = [this, sorted](const QModelIndex& index) {
    return kernels_->longestRecordAt(sorted->mapToSource(index).row());
  };
  connect(kernelsView_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this, recordOf](const QModelIndex& current) {
            const auto record = recordOf(current);
            if (!record) {
              timeline_->view()->setHighlightedKernel(std::nullopt);
              return;
            }
            TimelineView* view = timeline_->view();
            view->markRanks({record->rank});
            view->setHighlightedKernel(TimelineView::HighlightedKernel{record->rank, record->name});
            view->setSelectedSpan(record);
            setStatus(tr("%1: its %2 records on rank %3 are highlighted in the timeline, the "
                         "longest selected (double-click the row to show it)")
                          .arg(QString::fromStdString(record->name).left(60))
                          .arg(view->kernelInstances().size())
                          .arg(record->rank));
          });
  // No row selected (deselected, or a new report): no kernel highlighted.
  connect(kernelsView_->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
    if (!kernelsView_->selectionModel()->hasSelection())
      timeline_->view()->setHighlightedKernel(std::nullopt);
  });
  connect(kernels_, &QAbstractItemModel::modelReset, this,
          [this] { timeline_->view()->setHighlightedKernel(std::nullopt); });
  connect(kernelsView_, &QTableView::doubleClicked, this,
          [this, recordOf](const QModelIndex& index) {
            const auto record = recordOf(index);
            if (!record) return;
            // The record with ten times its length on each side (at least 20 µs).
            const double pad = std::max(10.0 * (record->endNs - record->startNs), 20'000.0);
            TimelineView* view = timeline_->view();
            view->setFollowing(false);
            view->setViewRange(record->startNs - pad, record->endNs + pad);
            view->markRanks({record->rank});
            view->setSelectedSpan(record);
            tabs_->setCurrentIndex(kTimelineTab);
          });
}

void MainWindow::clearKernels() {
  kernels_->clear();
  kernelsView_->setEmptyText(tr("The shown run's GPU kernels are listed once it is analysed."));
}

void MainWindow::showKernels(const analysis::RunReport& report) {
  kernels_->setReport(report);
  // A CPU run (measured here or simulated) has no GPU records: said so,
  // not a blank table.
  kernelsView_->setEmptyText(
      tr("No GPU kernel records in run %1. This tab lists the kernels of a run with GPU "
         "streams: an imported PyTorch profiler (Kineto) or Nsight Systems trace.")
          .arg(report.run.id));
}

}  // namespace bubblescope::gui
