// Which layout-editor field a validation problem belongs to.
//
// layout::layoutProblems() returns sentences that name the keys involved
// ("heads 4 is not divisible by tp 3", "schedule zb-h1 needs micro_batches
// >= pp, ..."). fieldOfProblem() picks the one field the user should change.
#pragma once

#include <QString>
#include <string>

namespace bubblescope::gui {

// A layout JSON key ("tp", "micro_batches", "model", ...), or "" when the
// problem belongs to no single field.
QString fieldOfProblem(const std::string& problem);

}  // namespace bubblescope::gui
