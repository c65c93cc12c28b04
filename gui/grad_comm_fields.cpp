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

  allReduce_ = new QComboBox(parent);
  allReduce_->setObjectName("all_reduce");
  for (layout::AllReduceAlgorithm a :
       {layout::AllReduceAlgorithm::kFlat, layout::AllReduceAlgorithm::kHierarchical}) {
    allReduce_->addItem(layout::allReduceAlgorithmName(a), static_cast<int>(a));
  }
  allReduce_->setToolTip(
      tr("flat: one ring over the dp group; hierarchical: reduce-scatter inside each node, "
         "all-reduce of the shards across nodes, all-gather inside"));
  rows_.push_back({QStringLiteral("all_reduce"), tr("All-reduce"), allReduce_});
  ranksPerNode_ = new QSpinBox(parent);
  ranksPerNode_->setObjectName("ranks_per_node");
  ranksPerNode_->setRange(0, 1 << 20);
  ranksPerNode_->setSpecialValueText(tr("the hosts"));  // 0
  ranksPerNode_->setToolTip(
      tr("Nodes of K consecutive ranks emulated on this machine (K divides the world and is a "
         "multiple of tp x pp); 0: the nodes are the hosts the ranks run on"));
  rows_.push_back({QStringLiteral("ranks_per_node"), tr("Ranks per node"), ranksPerNode_});
  gbps_ = new ExactDoubleSpinBox(parent);
  gbps_->setObjectName("inter_node_gbps");
  gbps_->setDecimals(3);
  gbps_->setRange(0.0, 1e6);
  gbps_->setSuffix(tr(" Gb/s"));
  gbps_->setSpecialValueText(tr("not paced"));  // 0
  gbps_->setToolTip(
      tr("The emulated link between emulated nodes: messages between nodes are paced to this "
         "bandwidth (10^9 bit/s); 0: not paced"));
  rows_.push_back({QStringLiteral("inter_node_gbps"), tr("Inter-node link"), gbps_});
  latencyUs_ = new ExactDoubleSpinBox(parent);
  latencyUs_->setObjectName("inter_node_latency_us");
  latencyUs_->setDecimals(1);
  latencyUs_->setRange(0.0, 1e7);
  latencyUs_->setSuffix(tr(" µs"));
  latencyUs_->setSpecialValueText(tr("none"));  // 0
  latencyUs_->setToolTip(tr("The emulated link's latency, added to every inter-node message"));
  rows_.push_back({QStringLiteral("inter_node_latency_us"), tr("Inter-node latency"), latencyUs_});

  connect(compression_, &QComboBox::currentIndexChanged, this, &GradCommFields::onEdited);
  connect(ratio_, &QDoubleSpinBox::valueChanged, this, &GradCommFields::onEdited);
  connect(rank_, &QSpinBox::valueChanged, this, &GradCommFields::onEdited);
  connect(allReduce_, &QComboBox::currentIndexChanged, this, &GradCommFields::onEdited);
  connect(ranksPerNode_, &QSpinBox::valueChanged, this, &GradCommFields::onEdited);
  for (ExactDoubleSpinBox* d : {gbps_, latencyUs_}) {
    connect(d, &QDoubleSpinBox::valueChanged, this, &GradCommFields::onEdited);
  }
  set(layout::Layout{});
}

void GradCommFields::set(const layout::Layout& l) {
  updating_ = true;
  const layout::GradCompressionSpec& spec = l.gradCompression;
  compression_->setCurrentIndex(compression_->findData(static_cast<int>(spec.kind)));
  ratio_->setExactValue(spec.kind == GradCompression::kTopK ? spec.ratio : kDefaultTopKRatio);
  rank_->setValue(spec.kind == GradCompression::kPowerSgd ? spec.rank : kDefaultPowerSgdRank);
  allReduce_->setCurrentIndex(allReduce_->findData(static_cast<int>(l.allReduce)));
  ranksPerNode_->setValue(l.ranksPerNode);
  gbps_->setExactValue(l.interNodeGbps);
  latencyUs_->setExactValue(l.interNodeLatencyUs);
  showArgumentOfKind();
  updating_ = false;
}

void GradCommFields::apply(layout::Layout& l) const {
  layout::GradCompressionSpec spec;
  spec.kind = static_cast<GradCompression>(compression_->currentData().toInt());
  if (spec.kind == GradCompression::kTopK) spec.ratio = ratio_->exactValue();
  if (spec.kind == GradCompression::kPowerSgd) spec.rank = rank_->value();
  l.gradCompression = spec;
  l.allReduce = static_cast<layout::AllReduceAlgorithm>(allReduce_->currentData().toInt());
  l.ranksPerNode = ranksPerNode_->value();
  l.interNodeGbps = gbps_->exactValue();
  l.interNodeLatencyUs = latencyUs_->exactValue();
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
