#include "storage/import/import_run.h"

#include <cctype>
#include <filesystem>

namespace bubblescope::import {

Result<int64_t> ImportRun::begin(const storage::RunInfo& info) {
  if (sink_) return runId_;
  BS_ASSIGN_OR_RETURN(runId_, writer_.beginRun(info));
  sink_ = std::make_unique<AsyncSink>(writer_);
  return runId_;
}

Result<int32_t> ImportRun::claimRank(int64_t rank, const std::string& source,
                                     const std::string& path) {
  if (rank < 0 || rank > (1 << 24)) {
    return Status::invalidArgument("rank " + std::to_string(rank) + " is out of range");
  }
  const auto r32 = static_cast<int32_t>(rank);
  if (auto [it, inserted] = fileOfRank_.emplace(r32, path); !inserted) {
    return Status::invalidArgument("rank " + std::to_string(rank) + " (from " + source +
                                   ") is also the rank of " + it->second);
  }
  return r32;
}

Status ImportRun::finish() {
  BS_RETURN_IF_ERROR(sink_->drain());
  return writer_.finishRun(storage::RunStatus::kFinished);
}

Status ImportRun::fail(const Status& error) {
  if (sink_) {
    (void)sink_->drain();  // the import's own error is the one to report
    (void)writer_.finishRun(storage::RunStatus::kFailed, error.message());
  }
  return error;
}

std::string baseName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

std::string defaultRunName(const std::vector<std::string>& paths) {
  if (paths.empty()) return "import";
  return "import " + baseName(paths.front()) +
         (paths.size() > 1 ? " +" + std::to_string(paths.size() - 1) : "");
}

std::optional<int32_t> rankFromFileName(const std::string& path) {
  const std::string name = baseName(path);
  for (size_t at = name.find("rank"); at != std::string::npos; at = name.find("rank", at + 4)) {
    size_t i = at + 4;
    if (i < name.size() && (name[i] == '-' || name[i] == '_')) ++i;
    int64_t n = 0;
    size_t digits = 0;
    for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && digits < 8;
         ++i, ++digits) {
      n = n * 10 + (name[i] - '0');
    }
    if (digits > 0) return static_cast<int32_t>(n);
  }
  return std::nullopt;
}

}  // namespace bubblescope::import
