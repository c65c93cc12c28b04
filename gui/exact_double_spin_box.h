// ExactDoubleSpinBox: a QDoubleSpinBox that gives back the exact value it
// was set to until the user edits it. A spin box rounds what it holds to its
// decimals; a layout field loaded from a file (a Top-K ratio of 0.00125 in a
// box of 4 decimals, a link of 0.0005 Gb/s) must still save as it was read.
//
// Contract: setExactValue() shows `value` (rounded and clamped for display)
// and exactValue() returns it unchanged; once the shown value changes by any
// other way (typing, arrows, setValue) exactValue() is the shown value.
// GUI thread only.
#pragma once

#include <QDoubleSpinBox>

namespace bubblescope::gui {

class ExactDoubleSpinBox : public QDoubleSpinBox {
  Q_OBJECT

 public:
  explicit ExactDoubleSpinBox(QWidget* parent = nullptr);

  void setExactValue(double value);
  double exactValue() const { return exact_; }

 private:
  double exact_ = 0.0;
  bool settingExact_ = false;
};

}  // namespace bubblescope::gui
