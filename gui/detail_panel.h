// DetailPanel: every field of the selected span, and the measured interval.
#pragma once

#include <QLabel>
#include <cstdint>
#include <optional>

#include "trace_model/event.h"

namespace bubblescope::gui {

class DetailPanel : public QLabel {
  Q_OBJECT

 public:
  explicit DetailPanel(QWidget* parent = nullptr);

  // originNs: the run's start, so times read as offsets into the run.
  void showSpan(const trace_model::Event& event, int64_t originNs);
  void showSelection(double t0Ns, double t1Ns, int64_t originNs);
  // Both, the span's (back to the hint) and the interval's.
  void clearDetails();
  void clearSpan();
  void clearSelection();

 private:
  QString selectionText_;
  QString eventText_;
  void refresh();
};

}  // namespace bubblescope::gui
