#include "cli/job_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

namespace bubblescope::cli {
namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

// The write end of the self-pipe the signal handler reports to.
int gSignalWriteFd = -1;

void onStopSignal(int signal) {
  const unsigned char s = static_cast<unsigned char>(signal);
  const int saved = errno;
  (void)!write(gSignalWriteFd, &s, 1);
  errno = saved;
}

// Catches the stop signals into a pipe while it lives; restores them after.
class StopSignals {
 public:
  StopSignals() {
    if (pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) return;
    gSignalWriteFd = fds_[1];
    struct sigaction action {};
    action.sa_handler = onStopSignal;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < std::size(kStopSignals); ++i) {
      sigaction(kStopSignals[i], &action, &old_[i]);
    }
  }
  ~StopSignals() {
    if (fds_[0] < 0) return;
    for (size_t i = 0; i < std::size(kStopSignals); ++i)
      sigaction(kStopSignals[i], &old_[i], nullptr);
    gSignalWriteFd = -1;
    close(fds_[0]);
    close(fds_[1]);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  int readFd() const { return fds_[0]; }

 private:
  int fds_[2] = {-1, -1};
  struct sigaction old_[std::size(kStopSignals)]{};
};

// Splits what came on one stream into lines; hands complete lines on.
struct LineSplitter {
  std::string pending;
  void feed(const char* data, size_t n, const std::function<void(const std::string&)>& line) {
    pending.append(data, n);
    size_t start = 0;
    for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      line(pending.substr(start, nl - start));
    }
    pending.erase(0, start);
  }
};

// How long processes killed with SIGKILL get to disappear.
constexpr int64_t kKilledWaitMs = 2000;

// State (field 3) and parent (field 4) of /proc/PID/stat; false when gone.
bool readStat(const std::string& dir, std::string* state, long long* parent) {
  std::ifstream in(dir + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(line.substr(close + 2));
  return static_cast<bool>(fields >> *state >> *parent);
}

// The job's processes: the launcher and its descendants. OpenMPI puts each
// rank in a process group of its own, so the launcher's group is not enough.
std::vector<pid_t> jobProcesses(pid_t launcher) {
  std::vector<std::pair<pid_t, pid_t>> parents;  // (pid, parent)
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string state;
    long long parent = 0;
    if (readStat(entry.path(), &state, &parent)) {
      parents.emplace_back(static_cast<pid_t>(std::stoll(name)), static_cast<pid_t>(parent));
    }
  }
  std::vector<pid_t> job = {launcher};
  for (size_t i = 0; i < job.size(); ++i) {
    for (const auto& [pid, parent] : parents) {
      if (parent == job[i]) job.push_back(pid);
    }
  }
  return job;
}

void addNew(std::vector<pid_t>& into, const std::vector<pid_t>& more) {
  for (pid_t p : more) {
    if (std::find(into.begin(), into.end(), p) == into.end()) into.push_back(p);
  }
}

// Whether one of `pids` still runs (a zombie does not).
bool anyRuns(const std::vector<pid_t>& pids) {
  for (pid_t p : pids) {
    std::string state;
    long long parent = 0;
    if (readStat("/proc/" + std::to_string(p), &state, &parent) && state != "Z" && state != "X") {
      return true;
    }
  }
  return false;
}

void killAll(const std::vector<pid_t>& pids, int signal) {
  for (pid_t p : pids) kill(p, signal);
}

// In the forked child: the launcher's process, then exec. Never returns.
[[noreturn]] void execLauncher(std::vector<char*>& argv, int out, int err, pid_t parent) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(127);  // `run` died before prctl
  const int devNull = open("/dev/null", O_RDONLY);
  if (devNull >= 0) dup2(devNull, STDIN_FILENO);
  dup2(out, STDOUT_FILENO);
  dup2(err, STDERR_FILENO);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "error: cannot run %s: %s\n", argv[0], strerror(errno));
  _exit(127);
}

}  // namespace

int64_t monotonicNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string signalName(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGKILL: return "SIGKILL";
    default: return "signal " + std::to_string(signal);
  }
}

Result<JobExit> runJobProcess(const std::vector<std::string>& argv, const JobHooks& hooks) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    return Status::ioError(std::string("cannot create a pipe: ") + strerror(errno));
  }
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  StopSignals signals;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return Status::ioError(std::string("cannot start a process: ") + strerror(errno));
  if (pid == 0) execLauncher(cargv, out[1], err[1], parent);
  setpgid(pid, pid);  // also here: no race with a signal before the child did it
  close(out[1]);
  close(err[1]);

  JobExit result;
  int64_t deadlineMs = 0;
  bool killed = false;
  std::vector<pid_t> members;  // the job's processes, once it is being stopped
  auto killJob = [&] {
    addNew(members, jobProcesses(pid));
    killAll(members, SIGKILL);
    killed = true;
  };
  auto stopping = [&] { return result.stopSignal != 0 || !result.abortReason.empty(); };
  auto stop = [&](int signal) {
    if (!result.abortReason.empty()) return;  // already being killed
    if (result.stopSignal == 0) {
      result.stopSignal = signal;
      deadlineMs = monotonicNowMs() + hooks.stopGraceMs;
      members = jobProcesses(pid);
      kill(-pid, signal);  // mpirun ends its ranks
    } else if (!killed) {  // a second signal: stop now
      killJob();
    }
  };
  LineSplitter splitters[2];
  pollfd fds[3] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}, {signals.readFd(), POLLIN, 0}};
  int open = 2;
  char buffer[65536];
  int status = 0;
  bool reaped = false;
  while (!reaped) {
    int timeoutMs = open > 0 ? (hooks.shouldAbort ? kJobTickMs : -1) : 50;
    if (result.stopSignal != 0 && !killed) {
      const int64_t left = std::max<int64_t>(0, deadlineMs - monotonicNowMs());
      timeoutMs = timeoutMs < 0 ? static_cast<int>(left) : std::min<int>(timeoutMs, left);
    }
    if (poll(fds, 3, timeoutMs) < 0 && errno != EINTR) break;
    if (fds[2].fd >= 0 && (fds[2].revents & POLLIN) != 0) {
      unsigned char s;
      while (read(fds[2].fd, &s, 1) == 1) stop(s);
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open;
        continue;
      }
      if (stopping()) continue;  // the job's output is noise now
      FILE* sink = i == 0 ? stdout : stderr;
      splitters[i].feed(buffer, static_cast<size_t>(n), [&](const std::string& line) {
        if (hooks.onLine && !hooks.onLine(line, i == 1)) return;
        std::fprintf(sink, "%s\n", line.c_str());
        std::fflush(sink);
      });
    }
    if (!stopping() && hooks.shouldAbort) {
      if (auto reason = hooks.shouldAbort()) {
        result.abortReason = *reason;
        killJob();
      }
    }
    if (result.stopSignal != 0 && !killed && monotonicNowMs() >= deadlineMs) killJob();
    if (open == 0) reaped = waitpid(pid, &status, WNOHANG) == pid;
  }
  for (int i = 0; i < 2; ++i) {
    if (fds[i].fd >= 0) close(fds[i].fd);
    const std::string& line = splitters[i].pending;
    if (!line.empty() && !stopping() && (!hooks.onLine || hooks.onLine(line, i == 1))) {
      std::fprintf(i == 0 ? stdout : stderr, "%s\n", line.c_str());
    }
  }
  if (!reaped) {
    while (waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) return Status::ioError(std::string("waitpid: ") + strerror(errno));
    }
  }
  if (stopping()) {
    // Nothing of the job outlives this call: what is left of it (a rank
    // mpirun did not end in time) has the rest of the grace period, then is
    // killed, and is waited for (bounded).
    while (anyRuns(members) && monotonicNowMs() < deadlineMs) usleep(20000);
    killAll(members, SIGKILL);
    const int64_t killedMs = monotonicNowMs();
    while (anyRuns(members) && monotonicNowMs() - killedMs < kKilledWaitMs) usleep(10000);
  }
  result.exitCode = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  return result;
}

}  // namespace bubblescope::cli
