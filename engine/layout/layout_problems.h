// Internal to engine_layout: the shared problem collector behind validate()
// and layoutFromJson(). Not a public header.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/layout/layout.h"

namespace bubblescope::layout::detail {

// Every validation problem of `layout`. Checks that read a key listed in
// `unparsed` (keys whose JSON value could not be parsed, so the field holds a
// default) are skipped.
std::vector<std::string> collectProblems(const Layout& layout, std::optional<int32_t> worldSize,
                                         const std::set<std::string>& unparsed);

// ok for no problems, else InvalidArgument "invalid layout: a; b; c".
Status joinProblems(const std::vector<std::string>& problems);

}  // namespace bubblescope::layout::detail
