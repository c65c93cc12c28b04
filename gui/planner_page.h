// How a planner page is laid out (the Planner tab's "This machine" and
// "GPU cluster" pages): the inputs in a form column at most kInputsMaxWidth
// wide on the left, a status line over the candidates' table on the right.
//
// The candidates' columns fit the table's width (fitCandidateColumns): each
// at its content's width, and short of room the widest give up width first,
// down to a common width, their text wrapping at spaces (the model's
// tooltips give it whole), so no column is off to the right at 1280 px.
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

// A read-only table of candidates, one selectable row each, over `model`;
// it refits its columns (fitCandidateColumns) when its width changes.
QTableView* makeCandidatesTable(QWidget* page, QAbstractItemModel* model, const char* objectName);
// Sizes the columns to their contents, then narrows the widest to one common
// width until they fit the viewport, none below its widest word (nor
// kLeastColumnPx): a number is never elided, a word never broken; when even
// that is too wide the table scrolls sideways. Sizes the rows to their
// wrapped text. Call after the model's rows change.
void fitCandidateColumns(QTableView* table);
inline constexpr int kLeastColumnPx = 40;
// A wrapping status label named "planStatus".
QLabel* makePlanStatus(QWidget* page);
// Lays `form` and (status over table) side by side as `page`'s layout.
void layOutPlannerPage(QWidget* page, QFormLayout* form, QLabel* status, QTableView* table);

}  // namespace bubblescope::gui
