// `bubblescope-cli info FILE`: what a trace file holds, run by run.
#include <cmath>
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "storage/analysis/imported_layout.h"
#include "storage/analysis/run_layout.h"
#include "storage/trace_reader.h"

namespace bubblescope::cli {
namespace {

ExitCode printInfo(const std::string& path) {
  auto reader = storage::TraceReader::open(path);
  if (!reader.isOk()) {
    std::fprintf(stderr, "error: %s\n", reader.status().message().c_str());
    return 1;
  }
  auto runs = (*reader)->runs();
  if (!runs.isOk()) {
    std::fprintf(stderr, "error: %s\n", runs.status().message().c_str());
    return 1;
  }
  std::printf("%s: Bubblescope trace, schema v%d, %zu run(s)\n", path.c_str(),
              (*reader)->schemaVersion(), runs->size());
  for (const auto& run : *runs) {
    auto ranks = (*reader)->ranks(run.id);
    auto steps = (*reader)->steps(run.id);
    auto range = (*reader)->timeRange(run.id);
    if (!ranks.isOk() || !steps.isOk() || !range.isOk()) {
      const Status& s = !ranks.isOk()   ? ranks.status()
                        : !steps.isOk() ? steps.status()
                                        : range.status();
      std::fprintf(stderr, "error: %s\n", s.message().c_str());
      return 1;
    }
    std::printf("run %lld  %s  [%s]  backend %s, world %d, %s\n", static_cast<long long>(run.id),
                run.info.name.c_str(), toString(run.health), run.info.backend.c_str(),
                run.info.worldSize, storage::sourceName(run.info));
    if (!run.error.empty()) std::printf("  error: %s\n", run.error.c_str());
    std::printf("  events %lld over %.3f ms, ranks %zu, step records %zu\n",
                static_cast<long long>(run.eventCount), (range->second - range->first) / 1e6,
                ranks->size(), steps->size());
    if (run.info.imported) {
      std::printf("  layout: %s\n", analysis::importedLayoutSummary(run.info).c_str());
    } else if (const auto layout = analysis::runLayout(run.info.layoutJson, run.info.modelJson);
               layout && layout->emulatesInterNodeLink()) {
      std::printf("  %s\n", layout::interNodeLinkLine(*layout).c_str());
    }
    for (const auto& r : *ranks) {
      // The clock: the offset added to this rank's times and its bound
      // (docs/tracer.md, "One timeline").
      using analysis::coordinateText;
      // A GPU rank's GPU times add the bound of their conversion (CUPTI ->
      // the rank's host clock); none when it converted no GPU time.
      char gpuClock[48] = "";
      if (r.gpuClockUncertaintyNs >= 0) {
        std::snprintf(gpuClock, sizeof gpuClock, "  gpu clock +- %.3f us",
                      static_cast<double>(r.gpuClockUncertaintyNs) / 1e3);
      }
      std::printf(
          "  rank %d  dp%s tp%s pp%s  %s  host %s pid %lld  clock offset %+.6f s +- %.3f ms%s\n",
          r.rank, coordinateText(r.dp).c_str(), coordinateText(r.tp).c_str(),
          coordinateText(r.pp).c_str(), r.device.c_str(), r.host.c_str(),
          static_cast<long long>(r.pid), static_cast<double>(r.clockOffsetNs) / 1e9,
          static_cast<double>(r.clockUncertaintyNs) / 1e6, gpuClock);
    }
    int shown = 0;
    for (const auto& s : *steps) {
      if (std::isnan(s.loss)) continue;
      if (++shown > 10) {
        std::printf("  ...\n");
        break;
      }
      std::printf("  step %4d  loss %.4f  tokens %lld  %.2f ms\n", s.step, s.loss,
                  static_cast<long long>(s.tokens), (s.endNs - s.startNs) / 1e6);
    }
  }
  return 0;
}

}  // namespace

void addInfoCommand(Command app, CommandRunner& runner) {
  Command cmd = app.subcommand("info", "Print what a trace file holds");
  auto path = std::make_shared<std::string>();
  cmd.option("file", *path, "Trace file (.db)").required();
  cmd.callback([&runner, path] { runner = [path] { return printInfo(*path); }; });
}

}  // namespace bubblescope::cli
