// LinkCosts: which calibrated fit prices a dimension's communication on the
// link its groups cross (docs/prediction.md, section 2), for one layout and
// calibration: the prediction's collectives, pipeline transfers and a
// blocked receive's wake-up.
//
// Contract:
//  - linkOf(dim): the link class the dimension's groups cross where the
//    layout's hosts place its ranks (link_class.h; kSameHost without hosts),
//    computed once per dim;
//  - sharedLinkOf(dim, stepEnd): kSharedCores for a group inside a host whose
//    ranks time-share its cores (core_sharing.h) in the collectives of the
//    step's end, which every rank of the host waits in at once, and for tp's
//    per-layer all-reduces when the calibration measured them between
//    time-shared ranks; else linkOf(dim). A calibration from an
//    oversubscribed run measured its same_host fits between time-shared
//    ranks already: they stand for themselves. A collective between compute
//    ops waits for a peer while the host's other ranks compute, so its wait
//    is the compute the sharing already costs (s x compute): the link's own
//    fit;
//  - collectiveNs(): `calls` collectives moving `bytes` in all over dim on
//    sharedLinkOf(dim, stepEnd): alpha x calls + beta x bytes of the fit of
//    that dim, collective and link, else of another link (said), else of
//    another dim (said unless `sayOtherDim` is false: the step's 8-byte
//    all-reduces, latency alone, which any fit's alpha prices); a
//    reduce-scatter or all-gather with no fit costs half an all-reduce of
//    the same bytes (said; docs/formulas.md); none measured: 0, said;
//  - ownFit(dim, collective): the fit of exactly that dim, collective and
//    linkOf(dim), or null (no stand-in);
//  - receiveWakeNs(): a blocked pipeline receive's wake-up (kReceiveWake):
//    for ranks that time-share a host's cores the kSharedCores fit, else
//    the pipeline link's own; another link's stands in, said; none measured
//    (no pipeline run in the calibration, or one made before it was
//    measured): 0, said.
// What is said goes to `warn` (the prediction's warnings). Not thread-safe.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/layout/layout.h"
#include "planning/calibration.h"

namespace bubblescope::layout {

class LinkCosts {
 public:
  // `placed`: the host of each rank (link_class.h placedHosts); `sharedCores`:
  // the busiest host's ranks time-share its cores and the calibration is not
  // from an oversubscribed run. l, c and placed must outlive this.
  LinkCosts(const Layout& l, const Calibration& c, const std::vector<std::string>& placed,
            bool sharedCores, std::function<void(std::string)> warn);

  const std::string& linkOf(const std::string& dim);
  std::string sharedLinkOf(const std::string& dim, bool stepEnd);
  double collectiveNs(const std::string& dim, const std::string& collective, double bytes,
                      double calls, bool stepEnd, bool sayOtherDim = true);
  const LinkFit* ownFit(const std::string& dim, const std::string& collective);
  double receiveWakeNs();
  bool sharedCores() const { return sharedCores_; }

 private:
  const Layout& l_;
  const Calibration& c_;
  const std::vector<std::string>& placed_;
  const bool sharedCores_;
  std::function<void(std::string)> warn_;
  std::map<std::string, std::string> links_;  // dim -> its link class
};

}  // namespace bubblescope::layout
