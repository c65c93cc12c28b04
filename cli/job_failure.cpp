#include "cli/job_failure.h"

#include <string.h>

#include <csignal>
#include <regex>

namespace bubblescope::cli {

void JobFailure::noteRank(int rank, const std::string& why, bool own) {
  if (!rank_) rank_ = rank;
  if (*rank_ != rank) return;  // a later, consequential failure
  if (own && own_.empty()) own_ = why;
  if (!own && why_.empty()) why_ = why;
}

void JobFailure::scan(const std::string& line) {
  static const std::regex ownError(R"(^error: rank (\d+): (.*)$)");
  static const std::regex collectorError(R"(^error: trace collector: (.*)$)");
  static const std::regex signal(
      R"(process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+)( \(([^)]*)\))?)");
  static const std::regex aborted(R"(MPI_ABORT was invoked on rank (\d+))");
  static const std::regex processName(R"(Process name: \[\[\d+,\d+\],(\d+)\])");
  static const std::regex exitCode(R"(Exit code:\s+(\d+))");
  static const std::regex slurm(R"(srun: error: \S+: tasks? (\d+)[^:]*: (.*)$)");
  std::smatch m;
  if (std::regex_search(line, m, collectorError)) {
    if (collectorOwn_.empty()) collectorOwn_ = m[1];
  } else if (std::regex_search(line, m, ownError)) {
    noteRank(std::stoi(m[1]), m[2], true);
  } else if (std::regex_search(line, m, signal)) {
    std::string why = "was killed by signal " + m[2].str();
    if (m[4].matched) why += " (" + m[4].str() + ")";
    noteRank(std::stoi(m[1]), why, false);
  } else if (std::regex_search(line, m, aborted)) {
    noteRank(std::stoi(m[1]), "aborted", false);
  } else if (std::regex_search(line, m, processName)) {
    processNameRank_ = std::stoi(m[1]);
  } else if (processNameRank_ >= 0 && std::regex_search(line, m, exitCode)) {
    noteRank(processNameRank_, "exited with code " + m[1].str(), false);
    processNameRank_ = -1;
  } else if (std::regex_search(line, m, slurm)) {
    noteRank(std::stoi(m[1]), "failed under srun: " + m[2].str(), false);
  }
}

std::string JobFailure::message(int exitCode, std::optional<int> collectorRank) const {
  // The collector stopped the job (a full disk) and no rank said why it
  // failed: the collector's reason, not the abort it caused.
  if (!collectorOwn_.empty() && own_.empty()) return "the trace collector failed: " + collectorOwn_;
  if (!rank_ && exitCode > 128 && exitCode < 128 + NSIG) {
    const int signal = exitCode - 128;
    return "the job's launcher was ended by signal " + std::to_string(signal) + " (" +
           strsignal(signal) + ") before any rank reported a failure";
  }
  if (!rank_) return "the job failed with exit code " + std::to_string(exitCode);
  const std::string rank =
      rank_ == collectorRank ? "the trace collector" : "rank " + std::to_string(*rank_);
  if (!own_.empty()) return rank + " failed: " + own_;
  if (!why_.empty()) return rank + " " + why_;
  return rank + " failed (exit code " + std::to_string(exitCode) + ")";
}

}  // namespace bubblescope::cli
