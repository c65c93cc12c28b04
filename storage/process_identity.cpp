#include "storage/process_identity.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

namespace bubblescope::storage {
namespace {

// Field 22 of /proc/PID/stat; 0 when the process does not exist or has
// ended (state Z, a zombie its parent has not reaped yet, or X). The command
// name (field 2) may hold spaces, so parsing starts after its closing ')'.
int64_t startTicksOf(int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return 0;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  if (!(fields >> field) || field == "Z" || field == "X") return 0;
  // Fields after the name start at 3 (state); start time is field 22.
  for (int i = 4; i <= 22; ++i) {
    if (!(fields >> field)) return 0;
  }
  return std::stoll(field);
}

}  // namespace

std::string currentHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

ProcessIdentity currentProcess() {
  return processIdentityOf(getpid());
}

ProcessIdentity processIdentityOf(int64_t pid) {
  return {currentHostName(), pid, startTicksOf(pid)};
}

Liveness livenessOf(const ProcessIdentity& process) {
  if (process.host != currentHostName()) return Liveness::kUnknown;
  const int64_t ticks = startTicksOf(process.pid);
  return ticks != 0 && ticks == process.startTicks ? Liveness::kAlive : Liveness::kGone;
}

int64_t unixNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace bubblescope::storage
