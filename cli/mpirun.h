// Starting MPI jobs: the mpirun (or, under Slurm, srun) command line this
// machine needs, and a child process (the job itself: job_process.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace bubblescope::cli {

struct MpirunRequest {
  int ranks = 1;
  std::vector<std::string> hosts;  // empty: this machine
  std::string hostfile;            // empty: none
  // Network interfaces OpenMPI's TCP transports may use (--net-if); empty:
  // loopback ("lo") when every rank is on this machine, OpenMPI's choice
  // otherwise.
  std::vector<std::string> netIf;
  std::vector<std::string> program;  // argv of each rank
  // The listen-bind library (listen_bind.c) to preload; nullopt: the one
  // next to this executable (listenBindLibrary()); "": none.
  std::optional<std::string> listenLibrary;
  // argv of the trace collector (collected_job.h): one more process, the
  // job's last, on this machine (mpirun's own host); empty: none.
  std::vector<std::string> collector;
};

// The path of mpirun, or a clear error when it is missing.
Result<std::string> findMpirun();
// The path of srun, or a clear error when it is missing.
Result<std::string> findSrun();
// True inside a Slurm allocation (SLURM_JOB_ID is set): jobs start with srun.
bool underSlurm();

// mpirun's argv: as root it adds --allow-run-as-root; with more processes
// than cores (on one host) --oversubscribe; hosts and hostfile pass through.
// With a collector, the job has two app contexts (MPMD): the ranks (on
// request.hosts, or the hostfile's hosts given as --host entries of the
// ranks' context: the hostfile must have been read into request.hosts by
// layout::hostfileHosts) and then the collector on `localhost`, which OpenMPI
// starts itself, never over ssh. The
// TCP transports (btl_tcp, and oob_tcp of mpirun and its daemons) use
// request.netIf. A job on this machine alone (and no netIf) uses shared
// memory between ranks (btl self,vader) and oob_tcp on "lo". OpenMPI's TCP
// listeners bind the wildcard addresses whatever their interface lists say,
// so a job on this machine alone, or one given netIf, runs with
// libbubblescope_listen.so preloaded (listen_bind.c), which binds them to
// loopback, or to each host's address on netIf (BUBBLESCOPE_LISTEN_NET):
// mpirun runs under `env LD_PRELOAD=... [BUBBLESCOPE_LISTEN_NET=...]`, and
// with netIf the ranks get both variables (-x) and the daemons mpirun starts
// over ssh are started as `env LD_PRELOAD=... BUBBLESCOPE_LISTEN_NET=...
// orted` (orte_launch_agent; the library must be at the same path on every
// host, as bubblescope-cli is). Nothing of the job listens on another
// interface.
std::vector<std::string> mpirunCommand(const std::string& mpirun, const MpirunRequest& request);

// The listen-bind library next to this executable, or "" when missing.
std::string listenBindLibrary();

// The MPI plugin srun must start the ranks with (OpenMPI's ranks need a
// PMI server: Slurm's default MpiDefault=none makes MPI_Init fail): "" when
// SLURM_MPI_TYPE is set (the user's choice, which srun honours), "pmix" when
// `srun --mpi=list` offers a pmix plugin, otherwise an error saying what
// srun offers and what to set.
Result<std::string> srunMpiPlugin(const std::string& srun);

struct SrunRequest {
  int ranks = 1;
  std::vector<std::string> program;  // argv of every task
  std::string mpiPlugin;             // srun's --mpi ("pmix", ...); "": Slurm's default
  // With the trace collector (collected_job.h): one more task, the job's
  // last, running the same program (which turns into the collector on that
  // task: train --collector-task). The tasks are placed one per line of
  // this file (slurm_placement.h), passed as SLURM_HOSTFILE with
  // --distribution=arbitrary, and --overcommit lets the collector share a
  // node's slots with the trainers. "": no collector, Slurm places the tasks.
  std::string taskHostfile;
  // --net-if: the interfaces (or networks) the ranks' TCP transport may use,
  // set in srun's environment as OMPI_MCA_btl_tcp_if_include (srun exports
  // it to every task); empty: OpenMPI's choice. With it each task runs under
  // `env LD_PRELOAD=<listen library> BUBBLESCOPE_LISTEN_NET=<nets>`, so the
  // ranks' listeners bind the net's address (srun itself is not preloaded).
  std::vector<std::string> netIf;
  // As MpirunRequest::listenLibrary: nullopt: listenBindLibrary(); "": none.
  std::optional<std::string> listenLibrary;
};

// srun's argv: one task per rank (and the collector), and the whole step
// killed when a task fails (--kill-on-bad-exit), as mpirun does by default.
std::vector<std::string> srunCommand(const std::string& srun, const SrunRequest& request);

// Runs argv[0] with argv, inheriting stdout and stderr; returns its exit
// code (128 + signal when a signal ended it).
Result<int> runChild(const std::vector<std::string>& argv);

// The running executable, to start more ranks of itself.
std::string selfExecutable();

}  // namespace bubblescope::cli
