// `bubblescope-cli bench import FILE`: the Kineto importer's throughput
// against a bare streaming parse of the same file (nlohmann's SAX parser with
// a handler that does nothing, through the same gzip stream), in one run.
// parse_ratio = bare parse time / import time (goal >= 0.5: the import costs
// at most twice the parse).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "storage/import/kineto_importer.h"
#include "storage/import/kineto_parser.h"
#include "storage/import/trace_file_stream.h"
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

Result<double> bareParseSeconds(const std::string& file) {
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
  BS_ASSIGN_OR_RETURN(auto summary, import::importKineto(*writer, {file}, {}));
  writer.reset();  // the last commit counts
  return std::make_pair(secondsSince(t0), summary.events);
}

ExitCode runBenchImport(const BenchImportArgs& a) {
  const std::string db =
      (std::filesystem::path(a.dir) / ("bench-import-" + std::to_string(::getpid()) + ".db"))
          .string();
  double parse = 1e300, import = 1e300;
  int64_t events = 0;
  for (int i = 0; i < a.repetitions; ++i) {  // best of: the least disturbed run
    auto p = bareParseSeconds(a.file);
    auto m = importSeconds(a.file, db);
    if (!p.isOk() || !m.isOk()) {
      std::fprintf(stderr, "error: %s\n",
                   (!p.isOk() ? p.status() : m.status()).withContext(a.file).message().c_str());
      std::filesystem::remove(db);
      return 1;
    }
    parse = std::min(parse, *p);
    import = std::min(import, m->first);
    events = m->second;
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
  std::printf("file: %s\nfile_bytes: %lld\nevents: %lld\n", a.file.c_str(),
              static_cast<long long>(std::filesystem::file_size(a.file)),
              static_cast<long long>(events));
  std::printf("parse_s: %.4f\nimport_s: %.4f\n", parse, import);
  std::printf("parse_events_per_s: %.0f\nevents_per_s: %.0f\nparse_ratio: %.3f\n", events / parse,
              events / import, parse / import);
  return 0;
}

}  // namespace

void addBenchImport(Command bench, CommandRunner& runner) {
  Command cmd = bench.subcommand(
      "import", "Kineto import throughput against a bare streaming JSON parse of the same file");
  auto a = std::make_shared<BenchImportArgs>();
  cmd.option("file", a->file, "A Kineto trace (.json or .json.gz)").required().existingFile();
  cmd.option("--dir", a->dir, "Folder for the scratch trace file").showDefault();
  cmd.option("--repetitions", a->repetitions, "Runs of each; the best is kept")
      .positive()
      .showDefault();
  cmd.callback([&runner, a] { runner = [a] { return runBenchImport(*a); }; });
}

}  // namespace bubblescope::cli
