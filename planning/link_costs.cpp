#include "planning/link_costs.h"

#include <utility>

#include "planning/core_sharing.h"
#include "planning/link_class.h"

namespace bubblescope::layout {

LinkCosts::LinkCosts(const Layout& l, const Calibration& c, const std::vector<std::string>& placed,
                     bool sharedCores, std::function<void(std::string)> warn)
    : l_(l), c_(c), placed_(placed), sharedCores_(sharedCores), warn_(std::move(warn)) {}

const std::string& LinkCosts::linkOf(const std::string& dim) {
  auto [it, added] = links_.try_emplace(dim);
  if (added) it->second = l_.hosts.empty() ? kSameHost : worldLinkClass(l_, placed_, dim);
  return it->second;
}

std::string LinkCosts::sharedLinkOf(const std::string& dim, bool stepEnd) {
  const std::string& link = linkOf(dim);
  if (!sharedCores_ || link != kSameHost) return link;
  if (stepEnd) return kSharedCores;
  if (dim == "tp" && hasSharedTpFit(c_)) return kSharedCores;
  return link;
}

double LinkCosts::collectiveNs(const std::string& dim, const std::string& collective,
                               double bytes, double calls, bool stepEnd, bool sayOtherDim) {
  const std::string link = sharedLinkOf(dim, stepEnd);
  if (const LinkFit* f = c_.linkFit(dim, collective, link)) {
    if (f->link != link) {
      warn_("no " + link + " " + collective + " fit in the calibration: costed as " + f->link);
    }
    if (f->dim != dim && sayOtherDim) {
      warn_("no " + collective + " fit of dim " + dim + " in the calibration: costed with dim " +
            f->dim + "'s");
    }
    return calls * f->alphaNs + f->betaNsPerByte * bytes;
  }
  if (collective != "allreduce" && collective != "p2p") {
    if (const LinkFit* f = c_.linkFit(dim, "allreduce", link)) {
      warn_("no " + collective + " fit (dim " + dim + ") in the calibration: costed as half the " +
            f->dim + " allreduce fit");
      return (calls * f->alphaNs + f->betaNsPerByte * bytes) / 2;
    }
  }
  warn_("no " + collective + " time measured (dim " + dim + "): taken as 0");
  return 0.0;
}

const LinkFit* LinkCosts::ownFit(const std::string& dim, const std::string& collective) {
  const std::string& link = linkOf(dim);
  const LinkFit* f = c_.linkFit(dim, collective, link);
  return f && f->dim == dim && f->link == link ? f : nullptr;
}

double LinkCosts::receiveWakeNs() {
  const std::string& link = linkOf("pp");
  const LinkFit* f = nullptr;
  if (sharedCores_ && link == kSameHost) {
    f = c_.linkFit("pp", kReceiveWake, kSharedCores);
    if (f && (f->dim != "pp" || f->link != kSharedCores)) f = nullptr;
  }
  if (f == nullptr) f = ownFit("pp", kReceiveWake);
  if (f == nullptr) {
    f = c_.linkFit("pp", kReceiveWake, link);
    if (f == nullptr || f->dim != "pp") {
      warn_("no wake-up of a blocked pipeline receive measured: taken as 0");
      return 0.0;
    }
    warn_("no " + link + " wake-up of a blocked pipeline receive in the calibration: costed as " +
          f->link);
  }
  return f->alphaNs;
}

}  // namespace bubblescope::layout
