#include "gui/teaching_lab_model.h"

#include <algorithm>
#include <cmath>

#include "planning/formulas.h"
#include "gui/time_format.h"

namespace bubblescope::gui {

TeachingLabModel::TeachingLabModel() {
  (void)setParams(TeachingParams{});
}

Status TeachingLabModel::setParams(const TeachingParams& p) {
  for (double ratio : {p.backward, p.weight, p.comm}) {
    if (!(ratio >= 0.0) || !std::isfinite(ratio)) {
      return Status::invalidArgument("cost ratios must be finite and >= 0");
    }
  }
  if (!(p.unitNs > 0.0)) return Status::invalidArgument("t_F must be > 0 ns");
  BS_ASSIGN_OR_RETURN(layout::Schedule schedule, layout::makeSchedule(p.kind, p.p, p.m, p.v));
  layout::CostModel costs;
  costs.forward = p.unitNs;
  costs.backwardInput = p.backward * p.unitNs;
  costs.backwardWeight = p.weight * p.unitNs;
  costs.comm = p.comm * p.unitNs;
  BS_ASSIGN_OR_RETURN(layout::Simulation simulation, layout::simulate(schedule, costs));
  params_ = p;
  schedule_ = std::move(schedule);
  simulation_ = std::move(simulation);
  order_ = layout::playbackOrder(schedule_, simulation_);
  shown_ = order_.size();
  updatePlayback();
  return Status::ok();
}

TeachingParams TeachingParams::withLayout(const layout::Layout& l) const {
  TeachingParams t = *this;
  t.kind = l.schedule;
  t.p = l.pp;
  t.m = l.microBatches;
  t.v = std::max(l.virtualChunks, 2);
  const bool split = t.kind == layout::ScheduleKind::kZeroBubbleH1;
  if (split && t.weight == 0.0) {  // a fused backward, split in halves
    t.backward /= 2;
    t.weight = t.backward;
  } else if (!split) {  // a split backward, fused
    t.backward += t.weight;
    t.weight = 0.0;
  }
  return t;
}

TeachingParams TeachingLabModel::paramsFor(const layout::Layout& l) const {
  // The formulas' assumptions: t_F = t_B (= t_W for zb-h1), no comm.
  TeachingParams costs;
  costs.backward = 1.0;
  costs.weight = l.schedule == layout::ScheduleKind::kZeroBubbleH1 ? 1.0 : 0.0;
  if (measured_) {
    const layout::CostModel c = analysis::idealCostsOf(measured_->costs, measured_->chunks);
    costs.unitNs = c.forward;
    costs.backward = c.backwardInput / c.forward;
    costs.weight = c.backwardWeight / c.forward;
    costs.comm = c.comm / c.forward;
  }
  return costs.withLayout(l);
}

void TeachingLabModel::setShown(size_t shown) {
  shown_ = std::min(shown, order_.size());
  updatePlayback();
}

void TeachingLabModel::updatePlayback() {
  shownUntilNs_ = 0;
  for (size_t i = 0; i < shown_; ++i) shownUntilNs_ = std::max(shownUntilNs_, order_[i].end);
  inFlight_ = layout::activationsInFlight(order_, schedule_.stages, shown_);
}

double TeachingLabModel::bubbleSoFar() const {
  return layout::bubbleSoFar(order_, schedule_.stages, shown_);
}

std::vector<int32_t> TeachingLabModel::peakInFlight() const {
  std::vector<int32_t> peaks;
  for (const auto& stage : inFlight_) peaks.push_back(layout::peakOf(stage));
  return peaks;
}

layout::Layout TeachingParams::appliedTo(layout::Layout base) const {
  base.schedule = kind;
  base.pp = p;
  base.microBatches = m;
  base.virtualChunks = chunks();
  return base;
}

double TeachingLabModel::formulaBubble() const {
  return layout::formulaBubble(params_.appliedTo({}));
}

QString TeachingLabModel::formulaText() const {
  return QString::fromStdString(layout::bubbleFormulaText(params_.appliedTo({})));
}

QString TeachingLabModel::timelineFormulaText() const {
  return QStringLiteral("bubble = %1 · simulated %2%")
      .arg(formulaText())
      .arg(simulation_.bubbleFraction * 100, 0, 'f', 1);
}

void TeachingLabModel::setMeasured(std::optional<analysis::MeasuredStep> step, QString runLabel) {
  measured_ = std::move(step);
  measuredLabel_ = std::move(runLabel);
  sameTimeScale_ = !measured_ || measured_->oversubscribed.empty();
  replay_.reset();
  noReplayReason_.clear();
}

void TeachingLabModel::setReplay(std::optional<analysis::IdealReplay> replay, QString whyNone) {
  replay_ = std::move(replay);
  noReplayReason_ = replay_ ? QString() : std::move(whyNone);
}

QString TeachingLabModel::replayNote() const {
  if (!replay_ || oversubscribedNote().isEmpty()) return {};
  QStringList bubbles;
  for (double b : replay_->bubble) bubbles << QStringLiteral("%1%").arg(b * 100, 0, 'f', 0);
  return QStringLiteral(
             "Replayed on ideal hardware (its thread-CPU op costs through the simulator, one "
             "core per rank; %1 %2): step %3 · bubble per stage %4")
      .arg(replay_->steps)
      .arg(replay_->steps == 1 ? QStringLiteral("step") : QStringLiteral("steps"))
      .arg(formatDuration(replay_->stepNs))
      .arg(bubbles.join(QStringLiteral(" · ")));
}

QString TeachingLabModel::oversubscribedNote() const {
  if (!measured_ || measured_->oversubscribed.empty()) return {};
  QStringList hosts;
  for (const std::string& h : measured_->oversubscribed) hosts << QString::fromStdString(h);
  const QString replay =
      replay_
          ? QStringLiteral("its replay on ideal hardware is below")
          : QStringLiteral("no ideal-hardware replay: %1")
                .arg(noReplayReason_.isEmpty() ? QStringLiteral("not computed") : noReplayReason_);
  return QStringLiteral(
             "%1 was oversubscribed (%2): its spans stretch unevenly; compare shapes, not "
             "lengths (%3).")
      .arg(measuredLabel_.isEmpty() ? QStringLiteral("The measured run") : measuredLabel_)
      .arg(hosts.join(", "))
      .arg(replay);
}

}  // namespace bubblescope::gui
