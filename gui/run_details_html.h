// runDetailsHtml(): the text the Charts tab shows beside its charts for one
// run, as HTML: measured step time (or that the trace marks none), the
// ideal-hardware replay's step and bubbles, the bubble formula, the
// communication volume per dimension against its formula, the gradient
// compression, the emulated inter-node link, the stragglers and the
// report's notes. Pure: the report in, the text out.
#pragma once

#include <QString>

#include "storage/analysis/run_report.h"

namespace bubblescope::gui {

QString runDetailsHtml(const analysis::RunReport& report);

}  // namespace bubblescope::gui
