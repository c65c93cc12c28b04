#include "cli/mpirun.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace bubblescope::cli {

namespace {

Result<std::string> findOnPath(const std::string& name, const std::string& missing) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = dirs.find(':', start);
    const std::string dir = dirs.substr(start, end == std::string::npos ? end : end - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return Status::notFound(missing);
}

}  // namespace

Result<std::string> findMpirun() {
  return findOnPath("mpirun",
                    "mpirun is missing: install openmpi-bin (./scripts/deps.sh does) or put it on "
                    "PATH");
}

Result<std::string> findSrun() {
  return findOnPath("srun", "srun is missing although SLURM_JOB_ID is set: load Slurm's tools");
}

bool underSlurm() {
  const char* job = std::getenv("SLURM_JOB_ID");
  return job != nullptr && *job != '\0';
}

std::vector<std::string> srunCommand(const std::string& srun, int ranks,
                                     const std::vector<std::string>& program) {
  std::vector<std::string> argv = {srun, "-n", std::to_string(ranks), "--kill-on-bad-exit=1",
                                   "--export=ALL,OPENBLAS_NUM_THREADS=1"};
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

std::vector<std::string> mpirunCommand(const std::string& mpirun, const MpirunRequest& r) {
  std::vector<std::string> argv = {mpirun, "-np", std::to_string(r.ranks)};
  if (geteuid() == 0) argv.push_back("--allow-run-as-root");
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (r.hosts.empty() && r.hostfile.empty() && r.ranks > cores) argv.push_back("--oversubscribe");
  if (!r.hosts.empty()) {
    std::string joined;
    for (const auto& h : r.hosts) joined += (joined.empty() ? "" : ",") + h;
    argv.insert(argv.end(), {"--host", joined});
  }
  if (!r.hostfile.empty()) argv.insert(argv.end(), {"--hostfile", r.hostfile});
  // One BLAS thread per rank, exported to every rank.
  argv.insert(argv.end(), {"-x", "OPENBLAS_NUM_THREADS=1"});
  argv.insert(argv.end(), r.program.begin(), r.program.end());
  return argv;
}

Result<int> runChild(const std::vector<std::string>& argv) {
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return Status::ioError(std::string("cannot start a process: ") + strerror(errno));
  if (pid == 0) {
    execvp(cargv[0], cargv.data());
    std::fprintf(stderr, "error: cannot run %s: %s\n", cargv[0], strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Status::ioError(std::string("waitpid: ") + strerror(errno));
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

namespace {

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

}  // namespace

Result<int> runChildStreaming(const std::vector<std::string>& argv, const LineHandler& onLine) {
  int out[2], err[2];
  if (pipe(out) != 0 || pipe(err) != 0) {
    return Status::ioError(std::string("cannot create a pipe: ") + strerror(errno));
  }
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return Status::ioError(std::string("cannot start a process: ") + strerror(errno));
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    close(err[0]);
    close(err[1]);
    execvp(cargv[0], cargv.data());
    std::fprintf(stderr, "error: cannot run %s: %s\n", cargv[0], strerror(errno));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  LineSplitter splitters[2];
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open = 2;
  char buffer[65536];
  while (open > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        close(fds[i].fd);
        fds[i].fd = -1;
        --open;
        continue;
      }
      FILE* sink = i == 0 ? stdout : stderr;
      splitters[i].feed(buffer, static_cast<size_t>(n), [&](const std::string& line) {
        onLine(line, i == 1);
        std::fprintf(sink, "%s\n", line.c_str());
        std::fflush(sink);
      });
    }
  }
  for (int i = 0; i < 2; ++i) {
    if (!splitters[i].pending.empty()) {
      onLine(splitters[i].pending, i == 1);
      std::fprintf(i == 0 ? stdout : stderr, "%s\n", splitters[i].pending.c_str());
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Status::ioError(std::string("waitpid: ") + strerror(errno));
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

std::string selfExecutable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("bubblescope-cli") : p.string();
}

}  // namespace bubblescope::cli
