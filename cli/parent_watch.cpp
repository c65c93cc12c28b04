#include "cli/parent_watch.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

namespace bubblescope::cli {

std::string launcherArgument(const storage::ProcessIdentity& l) {
  return l.host + ":" + std::to_string(l.pid) + ":" + std::to_string(l.startTicks);
}

Result<storage::ProcessIdentity> parseLauncherArgument(const std::string& text) {
  const size_t last = text.rfind(':');
  const size_t middle =
      last == std::string::npos || last == 0 ? std::string::npos : text.rfind(':', last - 1);
  storage::ProcessIdentity l;
  try {
    if (middle == std::string::npos) throw std::invalid_argument(text);
    l.host = text.substr(0, middle);
    l.pid = std::stoll(text.substr(middle + 1, last - middle - 1));
    l.startTicks = std::stoll(text.substr(last + 1));
  } catch (const std::exception&) {
    return Status::invalidArgument("--launcher wants HOST:PID:TICKS, got '" + text + "'");
  }
  return l;
}

void watchParent(int rank, std::optional<storage::ProcessIdentity> launcher) {
  const pid_t parent = getppid();
  std::thread([rank, launcher, parent] {
    while (true) {
      std::this_thread::sleep_for(std::chrono::milliseconds(kParentPollMs));
      const char* gone = nullptr;
      if (getppid() != parent) {
        gone = "its parent (mpirun)";
      } else if (launcher && storage::livenessOf(*launcher) == storage::Liveness::kGone) {
        gone = "the run that launched it";
      }
      if (gone == nullptr) continue;
      std::fprintf(stderr, "error: rank %d: %s is gone; ending this rank\n", rank, gone);
      std::fflush(stderr);
      _exit(kParentGoneExitCode);
    }
  }).detach();
}

}  // namespace bubblescope::cli
