#include "storage/import/trace_import.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "storage/import/import_run.h"
#include "storage/import/kineto_importer.h"
#include "storage/import/nsys_importer.h"

namespace bubblescope::import {

Result<TraceFormat> detectTraceFormat(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::ioError("cannot open " + path + ": " + std::strerror(errno));
  char head[16] = {};
  in.read(head, sizeof head);
  static const char kSqlite[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                   'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
  if (in.gcount() == sizeof head && std::memcmp(head, kSqlite, sizeof head) == 0) {
    return TraceFormat::kNsysSqlite;
  }
  return TraceFormat::kKineto;
}

const char* toString(TraceFormat format) {
  return format == TraceFormat::kNsysSqlite ? "Nsight Systems SQLite export" : "Kineto JSON trace";
}

Result<ImportSummary> importTraces(storage::TraceWriter& writer,
                                   const std::vector<std::string>& paths,
                                   const ImportOptions& options) {
  if (paths.empty()) return Status::invalidArgument("no trace files to import");
  BS_ASSIGN_OR_RETURN(const TraceFormat first, detectTraceFormat(paths.front()));
  for (size_t i = 1; i < paths.size(); ++i) {
    BS_ASSIGN_OR_RETURN(const TraceFormat f, detectTraceFormat(paths[i]));
    if (f != first) {
      return Status::invalidArgument(paths[i] + ": a " + toString(f) + ", but " +
                                     baseName(paths.front()) + " is a " + toString(first) +
                                     ": one import reads files of one format");
    }
  }
  if (first == TraceFormat::kNsysSqlite) return importNsys(writer, paths, options);
  if (!options.stepRange.empty() || options.rank) {
    return Status::invalidArgument(
        "--step-range and --rank apply to Nsight Systems exports; these are Kineto traces");
  }
  return importKineto(writer, paths, options);
}

}  // namespace bubblescope::import
