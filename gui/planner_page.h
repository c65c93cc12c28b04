// How a planner page is laid out (the Planner tab's "This machine" and
// "GPU cluster" pages): the inputs in a form column at most kInputsMaxWidth
// wide on the left, a status line over the candidates' table on the right.
//
// Contract: GUI thread only; the widgets are reparented to `page`.
#pragma once

class QAbstractItemModel;
class QFormLayout;
class QLabel;
class QTableView;
class QWidget;

namespace bubblescope::gui {

inline constexpr int kPlannerInputsMaxWidth = 300;  // pixels: the candidates get the rest

// A read-only table of candidates, one selectable row each, over `model`.
QTableView* makeCandidatesTable(QWidget* page, QAbstractItemModel* model, const char* objectName);
// A wrapping status label named "planStatus".
QLabel* makePlanStatus(QWidget* page);
// Lays `form` and (status over table) side by side as `page`'s layout.
void layOutPlannerPage(QWidget* page, QFormLayout* form, QLabel* status, QTableView* table);

}  // namespace bubblescope::gui
