#include "cli/mpirun.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

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

// "a,b,c" (mpirun's and OpenMPI's list syntax).
std::string commaJoined(const std::vector<std::string>& items) {
  std::string joined;
  for (const auto& i : items) joined += (joined.empty() ? "" : ",") + i;
  return joined;
}

// "LD_PRELOAD=<library>[:<this process's LD_PRELOAD>]".
std::string preloadWith(const std::string& library) {
  const char* preload = std::getenv("LD_PRELOAD");
  const std::string rest = preload != nullptr && *preload != '\0' ? std::string(":") + preload : "";
  return "LD_PRELOAD=" + library + rest;
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

Result<std::string> srunMpiPlugin(const std::string& srun) {
  const char* chosen = std::getenv("SLURM_MPI_TYPE");
  if (chosen != nullptr && *chosen != '\0') return std::string();
  const std::string command = "'" + srun + "' --mpi=list 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return Status::ioError("cannot run " + srun + " --mpi=list");
  std::string listed;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) listed += buffer;
  ::pclose(pipe);
  // "MPI plugin types are...\n\tnone\n\tpmi2\n\tpmix\nspecific pmix plugin
  // versions available: pmix_v4"
  std::istringstream words(listed);
  std::vector<std::string> plugins;
  for (std::string w; words >> w;) {
    if (w == "pmix" || w.rfind("pmix_v", 0) == 0) return std::string("pmix");
    if (w == "none" || w.rfind("pmi", 0) == 0 || w.rfind("cray", 0) == 0) plugins.push_back(w);
  }
  std::string offered;
  for (const auto& p : plugins) offered += (offered.empty() ? "" : ", ") + p;
  return Status::failedPrecondition(
      "srun offers no pmix MPI plugin (srun --mpi=list: " +
      (offered.empty() ? std::string("nothing") : offered) +
      "), and OpenMPI's ranks need one to start: install Slurm's pmix plugin, or set "
      "SLURM_MPI_TYPE (or MpiDefault in slurm.conf) to a plugin your MPI supports");
}

std::vector<std::string> srunCommand(const std::string& srun, const SrunRequest& r) {
  std::vector<std::string> argv;
  const bool collected = !r.taskHostfile.empty();
  if (collected) argv = {"env", "SLURM_HOSTFILE=" + r.taskHostfile};
  if (!r.netIf.empty()) {
    if (argv.empty()) argv.push_back("env");
    argv.push_back("OMPI_MCA_btl_tcp_if_include=" + commaJoined(r.netIf));
  }
  argv.insert(argv.end(), {srun, "-n", std::to_string(r.ranks + (collected ? 1 : 0)),
                           "--kill-on-bad-exit=1", "--export=ALL,OPENBLAS_NUM_THREADS=1"});
  if (collected) argv.insert(argv.end(), {"--distribution=arbitrary", "--overcommit"});
  if (!r.mpiPlugin.empty()) argv.push_back("--mpi=" + r.mpiPlugin);
  const std::string shim = r.netIf.empty() ? "" : r.listenLibrary.value_or(listenBindLibrary());
  if (!shim.empty()) {
    // Each task (not srun) binds its listeners to the net's address.
    argv.insert(argv.end(),
                {"env", preloadWith(shim), "BUBBLESCOPE_LISTEN_NET=" + commaJoined(r.netIf)});
  }
  argv.insert(argv.end(), r.program.begin(), r.program.end());
  return argv;
}

std::string listenBindLibrary() {
  const std::string path =
      std::filesystem::path(selfExecutable()).parent_path() / "libbubblescope_listen.so";
  return ::access(path.c_str(), R_OK) == 0 ? path : "";
}

std::vector<std::string> mpirunCommand(const std::string& mpirun, const MpirunRequest& r) {
  const bool local = r.hosts.empty() && r.hostfile.empty();
  const std::string net = commaJoined(r.netIf);  // --net-if
  std::vector<std::string> argv;
  // Every listener of the job binds one address: loopback, or the net's.
  const std::string shim =
      local || !net.empty() ? r.listenLibrary.value_or(listenBindLibrary()) : "";
  if (!shim.empty()) {
    argv = {"env", preloadWith(shim)};
    if (!net.empty()) argv.push_back("BUBBLESCOPE_LISTEN_NET=" + net);
  }
  argv.push_back(mpirun);
  if (geteuid() == 0) argv.push_back("--allow-run-as-root");
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const int processes = r.ranks + (r.collector.empty() ? 0 : 1);
  // The collector shares this machine with whatever ranks run here.
  if ((local && processes > cores) || !r.collector.empty()) argv.push_back("--oversubscribe");
  if (!r.hostfile.empty() && r.collector.empty()) {
    argv.insert(argv.end(), {"--hostfile", r.hostfile});
  }
  // Ranks on one machine talk through shared memory: no TCP BTL listener.
  if (local && r.netIf.empty()) argv.insert(argv.end(), {"--mca", "btl", "self,vader"});
  const std::string interfaces = !net.empty() ? net : local ? "lo" : "";
  if (!interfaces.empty()) {
    argv.insert(argv.end(), {"--mca", "btl_tcp_if_include", interfaces, "--mca",
                             "oob_tcp_if_include", interfaces});
  }
  if (!shim.empty() && !net.empty()) {
    // The ranks (-x: also those on other hosts), and the daemons mpirun
    // starts over ssh (OpenMPI splits the agent at spaces).
    argv.insert(argv.end(), {"-x", "LD_PRELOAD", "-x", "BUBBLESCOPE_LISTEN_NET"});
    if (!local && (shim + net).find_first_of(" \t") == std::string::npos) {
      argv.insert(argv.end(),
                  {"--mca", "orte_launch_agent",
                   "env LD_PRELOAD=" + shim + " BUBBLESCOPE_LISTEN_NET=" + net + " orted"});
    }
  }
  // One BLAS thread per rank, exported to every rank.
  argv.insert(argv.end(), {"-x", "OPENBLAS_NUM_THREADS=1"});
  // The ranks' app context, then the collector's (the job's last rank).
  argv.insert(argv.end(), {"-np", std::to_string(r.ranks)});
  if (!r.hosts.empty()) argv.insert(argv.end(), {"--host", commaJoined(r.hosts)});
  argv.insert(argv.end(), r.program.begin(), r.program.end());
  if (!r.collector.empty()) {
    argv.insert(argv.end(), {":", "-np", "1", "--host", "localhost"});
    argv.insert(argv.end(), r.collector.begin(), r.collector.end());
  }
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

std::string selfExecutable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("bubblescope-cli") : p.string();
}

}  // namespace bubblescope::cli
