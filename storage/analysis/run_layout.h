// The layout a run was stored with, read by engine/layout's one parser.
//
// Contract: runs.layout_json parsed and validated by layout::layoutFromString
// (missing keys keep the Layout defaults, as for any layout file); when the
// layout names no model, runs.model_json supplies it. std::nullopt when the
// text is not a valid layout (an imported trace, a damaged row): the report
// then shows no formula rather than a wrong one.
#pragma once

#include <optional>
#include <string>

#include "engine/layout/layout.h"

namespace bubblescope::analysis {

std::optional<layout::Layout> runLayout(const std::string& layoutJson,
                                        const std::string& modelJson);

}  // namespace bubblescope::analysis
