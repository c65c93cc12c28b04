// `bubblescope-cli bench import FILE`: the Kineto importer's throughput and
// peak memory against a bare streaming parse of the same file (nlohmann's
// SAX parser with a handler that does nothing, through the same gzip
// stream), in one process: every parse first, then every import, so the
// process's peak resident size after each phase is that phase's peak.
// parse_ratio = bare parse time / import time (goal >= 0.5: the import costs
// at most twice the parse); memory_ratio = import peak / parse peak.
//
// An Nsight Systems export (told by its content) is read bare as a SQLite
// scan of the rows the import reads (import::scanNsysRows).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "storage/import/kineto_parser.h"
#include "storage/import/nsys_importer.h"
#include "storage/import/trace_file_stream.h"
#include "storage/import/trace_import.h"
#include "storage/trace_writer.h"

namespace bubblescope::cli {
namespace {

struct BenchImportArgs {
  std::string file;
  std::string dir = "/tmp";
  int repetitions = 3;
};

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The process's peak resident size so far, in MiB (ru_maxrss is KiB on Linux).
double peakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;
}

// The 1-minute load average (/proc/loadavg); -1 when unreadable.
double loadAverage() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  in >> load;
  return load;
}

Result<double> bareParseSeconds(const std::string& file) {
  BS_ASSIGN_OR_RETURN(const auto format, import::detectTraceFormat(file));
  if (format == import::TraceFormat::kNsysSqlite) {
    const auto t0 = std::chrono::steady_clock::now();
    BS_ASSIGN_OR_RETURN(const int64_t rows, import::scanNsysRows(file));
    (void)rows;
    return secondsSince(t0);
  }
  BS_ASSIGN_OR_RETURN(auto in, import::TraceFileStream::open(file));
  const auto t0 = std::chrono::steady_clock::now();
  int64_t values = 0;
  BS_RETURN_IF_ERROR(import::parseJsonOnly(in->stream(), values));
  return secondsSince(t0);
}

Result<std::pair<double, int64_t>> importSeconds(const std::string& file, const std::string& db) {
  std::filesystem::remove(db);
  std::filesystem::remove(db + "-wal");
  std::filesystem::remove(db + "-shm");
  BS_ASSIGN_OR_RETURN(auto writer, storage::TraceWriter::open(db));
  const auto t0 = std::chrono::steady_clock::now();
  BS_ASSIGN_OR_RETURN(auto summary, import::importTraces(*writer, {file}, {}));
  writer.reset();  // the last commit counts
  return std::make_pair(secondsSince(t0), summary.events);
}

ExitCode runBenchImport(const BenchImportArgs& a) {
  const std::string db =
      (std::filesystem::path(a.dir) / ("bench-import-" + std::to_string(::getpid()) + ".db"))
          .string();
  double parse = 1e300, import = 1e300;
  int64_t events = 0;
  const double loadBefore = loadAverage();
  const double startRssMb = peakRssMb();
  auto fail = [&](const Status& s) {
    std::fprintf(stderr, "error: %s\n", s.withContext(a.file).message().c_str());
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
    return 1;
  };
  for (int i = 0; i < a.repetitions; ++i) {  // best of: the least disturbed run
    auto p = bareParseSeconds(a.file);
    if (!p.isOk()) return fail(p.status());
    parse = std::min(parse, *p);
  }
  const double parseRssMb = peakRssMb();
  for (int i = 0; i < a.repetitions; ++i) {
    auto m = importSeconds(a.file, db);
    if (!m.isOk()) return fail(m.status());
    import = std::min(import, m->first);
    events = m->second;
  }
  const double importRssMb = peakRssMb();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
  std::printf("file: %s\nfile_bytes: %lld\nevents: %lld\n", a.file.c_str(),
              static_cast<long long>(std::filesystem::file_size(a.file)),
              static_cast<long long>(events));
  std::printf("parse_s: %.4f\nimport_s: %.4f\n", parse, import);
  std::printf("parse_events_per_s: %.0f\nevents_per_s: %.0f\nparse_ratio: %.3f\n", events / parse,
              events / import, parse / import);
  std::printf("start_rss_mb: %.1f\nparse_peak_rss_mb: %.1f\nimport_peak_rss_mb: %.1f\n", startRssMb,
              parseRssMb, importRssMb);
  // What each phase added to the process (its code and libraries are in
  // start_rss_mb), and the peaks' ratio.
  std::printf("parse_added_mb: %.1f\nimport_added_mb: %.1f\n", parseRssMb - startRssMb,
              importRssMb - startRssMb);
  std::printf("memory_ratio: %.3f\n", importRssMb / parseRssMb);
  std::printf("load_average: %.2f %.2f\n", loadBefore, loadAverage());
  return 0;
}

}  // namespace

void addBenchImport(Command bench, CommandRunner& runner) {
  Command cmd = bench.subcommand(
      "import",
      "Import throughput (Kineto JSON or Nsight Systems SQLite) against a bare read of the same "
      "file");
  auto a = std::make_shared<BenchImportArgs>();
  cmd.option("file", a->file,
             "A Kineto trace (.json or .json.gz) or an Nsight Systems export (.sqlite)").required().existingFile();
  cmd.option("--dir", a->dir, "Folder for the scratch trace file").showDefault();
  cmd.option("--repetitions", a->repetitions, "Runs of each; the best is kept")
      .positive()
      .showDefault();
  cmd.callback([&runner, a] { runner = [a] { return runBenchImport(*a); }; });
}

}  // namespace bubblescope::cli
