// TeachingLabModel: the teaching lab's state without widgets: the ideal
// schedule for (schedule, p, m, v, F : B : W : comm), its simulation, the op
// playback (how many ops are shown, the bubble so far, activations in flight
// per stage) and a measured run's representative step beside it.
//
// Contract: computes nothing itself: schedules, simulation and playback come
// from engine/layout (schedule.h, simulator.h, schedule_playback.h), the
// formula from formulas.h, the measured step from storage/analysis
// (measured_step.h). Times are ns: t_F = unitNs, the other costs are ratios of
// it, so the simulated step and the measured one share one time scale. GUI
// thread only.
#pragma once

#include <QString>
#include <QStringList>
#include <cstddef>
#include <optional>
#include <vector>

#include "common/status.h"
#include "engine/layout/layout.h"
#include "planning/schedule_playback.h"
#include "storage/analysis/ideal_replay.h"
#include "storage/analysis/measured_step.h"

namespace bubblescope::gui {

struct TeachingParams {
  layout::ScheduleKind kind = layout::ScheduleKind::kOneFOneB;
  int32_t p = 4;  // pipeline stages
  int32_t m = 8;  // micro-batches
  int32_t v = 2;  // chunks per stage; used by the interleaved schedule only
  // Costs as multiples of t_F. A fused backward costs B + W; a split one
  // (zb-h1) runs B and W as separate ops.
  double backward = 1.0;
  double weight = 0.0;
  double comm = 0.0;
  double unitNs = 1e6;  // t_F in ns: one micro-batch through a whole stage

  int32_t chunks() const { return kind == layout::ScheduleKind::kInterleaved ? v : 1; }
  // These costs with `l`'s schedule, pp, micro-batches and chunks (v at
  // least 2, for when interleaving is chosen), the backward fitted to the
  // schedule: a fused one (weight 0) split in halves for zb-h1, a split one
  // fused (B + W) for every other schedule. The step costs the same either
  // way; the ratios the user set are kept.
  TeachingParams withLayout(const layout::Layout& l) const;
  // `base` with this schedule, pp = p, micro-batches = m and chunks(); every
  // other key (model, dp, tp, ZeRO, steps, ...) is base's.
  layout::Layout appliedTo(layout::Layout base) const;
  bool operator==(const TeachingParams&) const = default;
};

class TeachingLabModel {
 public:
  TeachingLabModel();

  // Rebuilds the schedule, its simulation and playback, and shows every op.
  // An error (p, m, v the schedule does not allow, a negative cost) leaves
  // the previous state as it was.
  Status setParams(const TeachingParams& params);
  const TeachingParams& params() const { return params_; }

  // The parameters for a layout: its schedule, pp, micro-batches and chunks;
  // the cost ratios from the measured run's median spans when one is set
  // (analysis::idealCostsOf), else t_F = t_B = 1 ms (and t_W = 1 ms for
  // zb-h1), no communication cost: the formulas' assumptions.
  TeachingParams paramsFor(const layout::Layout& layout) const;

  const layout::Schedule& schedule() const { return schedule_; }
  const layout::Simulation& simulation() const { return simulation_; }
  const std::vector<layout::PlaybackOp>& order() const { return order_; }

  // Step-through: the first shown() ops of order() are drawn.
  size_t shown() const { return shown_; }
  void setShown(size_t shown);
  bool atEnd() const { return shown_ >= order_.size(); }
  // The time up to which the shown ops ran (their latest end), in ns.
  double shownUntilNs() const { return shownUntilNs_; }
  double bubbleSoFar() const;
  // Per stage, activations in flight over the shown ops.
  const std::vector<std::vector<layout::InFlightPoint>>& inFlight() const { return inFlight_; }
  std::vector<int32_t> peakInFlight() const;

  // The bubble the papers predict for the shown parameters, and its text
  // with the numbers: "(p-1)/(m+p-1) = 3/11 = 0.273".
  double formulaBubble() const;
  QString formulaText() const;
  // What the timeline writes over the simulated bubble:
  // "bubble = (p-1)/(m+p-1) = 3/11 = 0.273 · simulated 27.3%".
  QString timelineFormulaText() const;

  // A measured run's step, drawn beside the simulated one; runLabel names it.
  void setMeasured(std::optional<analysis::MeasuredStep> step, QString runLabel);
  const std::optional<analysis::MeasuredStep>& measured() const { return measured_; }
  const QString& measuredLabel() const { return measuredLabel_; }
  // "run 3 was oversubscribed (host h0 ran 8 ranks on 2 cores): ..." or "".
  QString oversubscribedNote() const;
  // The measured run replayed on ideal hardware (analysis::
  // replayIdealHardware: its thread-CPU op costs through the simulator, one
  // core per rank), shown beside an oversubscribed measured step; or none
  // and why (e.g. the run recorded no thread CPU times). setMeasured()
  // clears it.
  void setReplay(std::optional<analysis::IdealReplay> replay, QString whyNone = {});
  const std::optional<analysis::IdealReplay>& replay() const { return replay_; }
  // "Replayed on ideal hardware (...): step 1.02 s · bubble per stage 20% ·
  // 25% · 27% · 30%" for an oversubscribed measured step with a replay, else
  // "".
  QString replayNote() const;
  // Whether the measured step is drawn on the ideal one's time scale (else
  // stretched to the ideal step's length). setMeasured() turns it off for an
  // oversubscribed run, whose lengths mean little, and on otherwise.
  bool sameTimeScale() const { return sameTimeScale_; }
  void setSameTimeScale(bool same) { sameTimeScale_ = same; }

 private:
  void updatePlayback();

  TeachingParams params_;
  layout::Schedule schedule_;
  layout::Simulation simulation_;
  std::vector<layout::PlaybackOp> order_;
  size_t shown_ = 0;
  double shownUntilNs_ = 0;
  std::vector<std::vector<layout::InFlightPoint>> inFlight_;
  std::optional<analysis::MeasuredStep> measured_;
  QString measuredLabel_;
  std::optional<analysis::IdealReplay> replay_;
  QString noReplayReason_;
  bool sameTimeScale_ = true;
};

}  // namespace bubblescope::gui
