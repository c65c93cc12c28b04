// The layout line of an imported run (runs.source 'imported'): what the
// import knows of the job, never a made-up dp/tp/pp. The importer stores
// {"source", "files", "process_groups": [{name, desc, size, ranks, dim}]}
// (docs/import.md); degrees are unknown unless the user named a group's
// dimension (`import --group NAME=dp`).
#pragma once

#include <string>

#include "storage/run_info.h"

namespace bubblescope::analysis {

// E.g. "imported kineto traces: 2 files of world 128; parallel dimensions
// unknown (name process groups: import --group NAME=dp|tp|pp|ep)", or
// "imported kineto traces: 1 file of world 2; group 0 (default_pg, 2 ranks)
// dp; other dimensions unknown"; an Nsight import names the version:
// "imported nsys traces (Nsight Systems 2022.2.1.31, export schema 2.9.1): ...".
std::string importedLayoutSummary(const storage::RunInfo& info);

// A rank coordinate for display: the number, or "-" when unknown (< 0).
std::string coordinateText(int32_t coordinate);

}  // namespace bubblescope::analysis
