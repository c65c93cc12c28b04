#include "gui/prediction_label.h"

#include "gui/prediction_format.h"

namespace bubblescope::gui {

PredictionLabel::PredictionLabel(QWidget* parent) : QLabel(parent) {
  setObjectName("prediction");
  setWordWrap(true);
  setTextFormat(Qt::RichText);
  timer_.setSingleShot(true);
  timer_.setInterval(kDebounceMs);
  connect(&timer_, &QTimer::timeout, this, &PredictionLabel::predictNow);
}

void PredictionLabel::setLayout(const layout::Layout& layout) {
  layout_ = layout;
  timer_.start();
}

void PredictionLabel::setCalibration(std::optional<layout::Calibration> calibration,
                                     const QString& source) {
  calibration_ = std::move(calibration);
  source_ = source;
  timer_.start();
}

void PredictionLabel::predictNow() {
  timer_.stop();
  const QString source = calibration_ ? source_
                                      : tr("FLOPs estimate, %1 GFLOP/s, communication free")
                                            .arg(kFlopsEstimatePerSecond / 1e9, 0, 'f', 0);
  auto p = layout::predictLayout(layout_, calibrationFor(calibration_, layout_.model));
  if (!p.isOk()) {
    prediction_.reset();
    error_ = QString::fromStdString(p.status().message());
    setText(
        tr("<b>Predicted:</b> <span style='color:#c62828'>%1</span>").arg(error_.toHtmlEscaped()));
  } else {
    prediction_ = std::move(*p);
    error_.clear();
    QString text = tr("<b>Predicted</b> (%1): %2")
                       .arg(source.toHtmlEscaped(), predictionLine(*prediction_).toHtmlEscaped());
    for (const QString& w : shownWarnings(prediction_->warnings, calibration_.has_value())) {
      text += "<br><i>" + w.toHtmlEscaped() + "</i>";
    }
    setText(text);
  }
  setToolTip(tr("The schedule simulator over this layout's op lists, costed from %1 "
                "(docs/prediction.md)")
                 .arg(source));
  emit predicted();
}

}  // namespace bubblescope::gui
