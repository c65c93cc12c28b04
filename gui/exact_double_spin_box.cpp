#include "gui/exact_double_spin_box.h"

namespace bubblescope::gui {

ExactDoubleSpinBox::ExactDoubleSpinBox(QWidget* parent) : QDoubleSpinBox(parent) {
  // Connected before any user of valueChanged, so exactValue() is current
  // when they are called.
  connect(this, &QDoubleSpinBox::valueChanged, this, [this](double v) {
    if (!settingExact_) exact_ = v;
  });
}

void ExactDoubleSpinBox::setExactValue(double value) {
  settingExact_ = true;
  setValue(value);
  settingExact_ = false;
  exact_ = value;
}

}  // namespace bubblescope::gui
