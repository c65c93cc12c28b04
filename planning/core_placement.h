// CorePlacement: which core each pipeline stage's rank runs on when the
// stages outnumber a host's cores, by the rules Linux's scheduler was seen to
// follow (docs/prediction.md, "Four stages on two cores"; issue 35, point 1).
//
// Measured (dp1 x pp4 GPipe m16 on 2 cores, thread CPU time against wall
// time per op): through the fill, stage 0 ran its sixteen forwards at a whole
// core's pace while stages 1-3 shared the other core at a third of one each,
// and through the drain the last stage ran alone while the others shared;
// processor sharing over all the cores (time_sharing.h) has every runnable
// rank at half a core there and put the step 6-16 % and its bubble 16-18
// points under the measured ones. The rules:
//  - a rank that runs keeps its core until it blocks in a receive (or waits
//    for the step's end): no migration while it runs;
//  - a rank that wakes takes an idle core if there is one (the one it last
//    ran on first), else joins the core of the rank that woke it (the sender
//    of the message it waited for: the scheduler's wake-affine choice), else,
//    with no such rank running, the least crowded core;
//  - a core left idle while another holds two or more ranks takes, at once,
//    the longest-resident rank of the most crowded one (idle balancing).
// A rank's share is then 1 / (the ranks on its core). One rank per stage
// (dp = tp = 1) and no background load: with more ranks per stage, or busy
// threads of other work, processor sharing stays the model.
//
// Pure and deterministic; no threads.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "planning/simulator.h"

namespace bubblescope::layout {

class CorePlacement {
 public:
  // The placement over `sim`'s timeline (a simulation of `schedule`) on
  // `cores` cores (>= 1). A stage runs from the start of each op that is not
  // a receive to its end; a receive that waited (end > start) blocks it.
  // A rank sharing its core with n - 1 others runs at 1 / stretch(n) of a
  // core's pace, stretch(n) = 1 + (n - 1) · paid (time_sharing.h's share
  // paid, in [0, 1]).
  CorePlacement(const Schedule& schedule, const Simulation& sim, int32_t cores, double paid = 1);

  // The integral over [0, t] of 1 / stretch(ranks on stage k's core): the
  // work stage k's rank did by t in units of a whole core's pace (time
  // outside its runs counts at pace 1).
  double inverseStretchIntegral(int32_t stage, double t) const;

  // The ranks on stage k's core from time t on (0 while it is blocked).
  int32_t sharersAt(int32_t stage, double t) const;

 private:
  struct Breakpoint {
    double time = 0;
    int32_t sharers = 0;  // from `time` on
    double integral = 0;  // of 1 / stretch over [first breakpoint, time]
  };
  double paid_ = 1;
  std::vector<std::vector<Breakpoint>> stages_;
};

}  // namespace bubblescope::layout
