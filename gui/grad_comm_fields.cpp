#include "gui/grad_comm_fields.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QSpinBox>
#include <QWidget>

#include "gui/exact_double_spin_box.h"

namespace bubblescope::gui {

namespace {

using layout::GradCompression;

constexpr GradCompression kKinds[] = {GradCompression::kNone, GradCompression::kFp16,
                                      GradCompression::kBf16, GradCompression::kInt8,
                                      GradCompression::kTopK, GradCompression::kPowerSgd};
constexpr double kDefaultTopKRatio = 0.01;  // what choosing topk starts from
constexpr int kDefaultPowerSgdRank = 4;

// "topk" of "topk:0.01": the kind's name as grad_compression spells it.
QString kindName(GradCompression kind) {
  layout::GradCompressionSpec spec;
  spec.kind = kind;
  return QString::fromStdString(spec.toString()).section(':', 0, 0);
}

}  // namespace

GradCommFields::GradCommFields(QWidget* parent) : QObject(parent) {
  auto* row = new QWidget(parent);
  auto* box = new QHBoxLayout(row);
  box->setContentsMargins(0, 0, 0, 0);
  compression_ = new QComboBox(row);
  compression_->setObjectName("grad_compression");
  for (GradCompression k : kKinds) compression_->addItem(kindName(k), static_cast<int>(k));
  compression_->setToolTip(
      tr("How each dp gradient bucket is compressed for its all-reduce (ZeRO stage 0 only)"));
  ratio_ = new ExactDoubleSpinBox(row);
  ratio_->setObjectName("grad_compression_ratio");
  ratio_->setDecimals(4);
  ratio_->setRange(0.0001, 1.0);
  ratio_->setSingleStep(0.01);
  ratio_->setPrefix(tr("keep "));
  ratio_->setToolTip(tr("Top-K: the fraction of each bucket kept (0 < ratio <= 1)"));
  rank_ = new QSpinBox(row);
  rank_->setObjectName("grad_compression_rank");
  rank_->setRange(1, 4096);
  rank_->setPrefix(tr("rank "));
  rank_->setToolTip(tr("PowerSGD: the rank of the factorisation"));
  box->addWidget(compression_, 1);
  box->addWidget(ratio_);
  box->addWidget(rank_);
  rows_.push_back({QStringLiteral("grad_compression"), tr("Gradient compression"), row});

  connect(compression_, &QComboBox::currentIndexChanged, this, &GradCommFields::onEdited);
  connect(ratio_, &QDoubleSpinBox::valueChanged, this, &GradCommFields::onEdited);
  connect(rank_, &QSpinBox::valueChanged, this, &GradCommFields::onEdited);
  set(layout::Layout{});
}

void GradCommFields::set(const layout::Layout& l) {
  updating_ = true;
  const layout::GradCompressionSpec& spec = l.gradCompression;
  compression_->setCurrentIndex(compression_->findData(static_cast<int>(spec.kind)));
  ratio_->setExactValue(spec.kind == GradCompression::kTopK ? spec.ratio : kDefaultTopKRatio);
  rank_->setValue(spec.kind == GradCompression::kPowerSgd ? spec.rank : kDefaultPowerSgdRank);
  showArgumentOfKind();
  updating_ = false;
}

void GradCommFields::apply(layout::Layout& l) const {
  layout::GradCompressionSpec spec;
  spec.kind = static_cast<GradCompression>(compression_->currentData().toInt());
  if (spec.kind == GradCompression::kTopK) spec.ratio = ratio_->exactValue();
  if (spec.kind == GradCompression::kPowerSgd) spec.rank = rank_->value();
  l.gradCompression = spec;
}

void GradCommFields::showArgumentOfKind() {
  const auto kind = static_cast<GradCompression>(compression_->currentData().toInt());
  ratio_->setVisible(kind == GradCompression::kTopK);
  rank_->setVisible(kind == GradCompression::kPowerSgd);
}

void GradCommFields::onEdited() {
  if (updating_) return;
  showArgumentOfKind();
  emit edited();
}

}  // namespace bubblescope::gui
