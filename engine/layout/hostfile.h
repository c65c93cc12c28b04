// mpirun hostfiles (`node1 slots=4` per line, `#` comments): the one reader
// of them, for `run --hostfile` (cli) and the layout editor's hostfile
// picker (gui), so both start the same job.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace bubblescope::layout {

// The hosts of an mpirun hostfile as `--host` entries ("node1:4" for
// "node1 slots=4", "node3" without slots; comments and blank lines
// skipped), or why it cannot be read ("hostfile 'F' cannot be read",
// "hostfile 'F' names no host").
Result<std::vector<std::string>> hostfileHosts(const std::string& path);

}  // namespace bubblescope::layout
