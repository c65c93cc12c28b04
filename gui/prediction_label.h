// PredictionLabel: the predicted step of the layout being edited
// (layout::predictLayout, docs/prediction.md), as one line under the layout
// editor's summary.
//
// Contract: setLayout() only schedules the prediction; it is computed
// kDebounceMs after the last call (typing a number calls it per key), or at
// once by predictNow(). An invalid layout shows predictLayout's error, the
// same "invalid layout: ..." message `run` prints. The costs are the
// calibration set with setCalibration(), or, without one, the FLOPs estimate
// of the edited model (prediction_format.h). GUI thread only.
#pragma once

#include <QLabel>
#include <QTimer>
#include <optional>

#include "planning/calibration.h"
#include "engine/layout/layout.h"
#include "planning/prediction.h"

namespace bubblescope::gui {

class PredictionLabel : public QLabel {
  Q_OBJECT

 public:
  static constexpr int kDebounceMs = 250;

  explicit PredictionLabel(QWidget* parent = nullptr);

  void setLayout(const layout::Layout& layout);
  // `source` names the calibration ("calibration 2 of runs.db"); nullopt:
  // the FLOPs estimate.
  void setCalibration(std::optional<layout::Calibration> calibration, const QString& source);
  void predictNow();

  bool pending() const { return timer_.isActive(); }
  // The last prediction shown (nullopt when the layout was invalid).
  const std::optional<layout::Prediction>& prediction() const { return prediction_; }
  // The last error shown ("" when a prediction is shown).
  const QString& error() const { return error_; }

 signals:
  void predicted();

 private:
  QTimer timer_;
  layout::Layout layout_;
  std::optional<layout::Calibration> calibration_;
  QString source_;
  std::optional<layout::Prediction> prediction_;
  QString error_;
};

}  // namespace bubblescope::gui
