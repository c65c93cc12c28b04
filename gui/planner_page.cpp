#include "gui/planner_page.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

namespace bubblescope::gui {

QTableView* makeCandidatesTable(QWidget* page, QAbstractItemModel* model, const char* objectName) {
  auto* table = new QTableView(page);
  table->setObjectName(objectName);
  table->setModel(model);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setSelectionMode(QAbstractItemView::SingleSelection);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setStretchLastSection(true);
  table->setAlternatingRowColors(true);
  table->setWordWrap(false);
  return table;
}

QLabel* makePlanStatus(QWidget* page) {
  auto* status = new QLabel(page);
  status->setObjectName("planStatus");
  status->setWordWrap(true);
  return status;
}

void layOutPlannerPage(QWidget* page, QFormLayout* form, QLabel* status, QTableView* table) {
  auto* results = new QVBoxLayout;
  results->addWidget(status);
  results->addWidget(table, 1);
  auto* inputs = new QWidget(page);
  auto* inputsColumn = new QVBoxLayout(inputs);
  inputsColumn->setContentsMargins(0, 0, 0, 0);
  inputsColumn->addLayout(form);
  inputsColumn->addStretch(1);
  inputs->setMaximumWidth(kPlannerInputsMaxWidth);
  auto* row = new QHBoxLayout(page);
  row->addWidget(inputs);
  row->addLayout(results, 1);
}

}  // namespace bubblescope::gui
