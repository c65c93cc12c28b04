// trace_append_runs PATH RUNS EVENTS: appends RUNS finished runs of EVENTS
// events and 3 steps each to the trace at PATH, one writer connection per
// run (opened, written, closed), as successive `bubblescope-cli run`s do.
// A separate process for the multi-process reader tests; exits 0 on success,
// 1 with one line on stderr otherwise.
#include <cstdio>
#include <string>
#include <vector>

#include "storage/trace_writer.h"
#include "tests/storage/trace_fixtures.h"

namespace {

bubblescope::Status appendRun(const std::string& path, int64_t events) {
  using namespace bubblescope;
  BS_ASSIGN_OR_RETURN(auto writer, storage::TraceWriter::open(path));
  BS_RETURN_IF_ERROR(writer->beginRun({.name = "appended", .worldSize = 4}).status());
  BS_RETURN_IF_ERROR(writer->appendEvents(testing::makeEvents(0, events)));
  std::vector<trace_model::StepRecord> steps;
  for (int32_t s = 0; s < 3; ++s) steps.push_back({0, s, 5.0 - s, 64, s * 1000, s * 1000 + 900});
  BS_RETURN_IF_ERROR(writer->appendSteps(steps));
  return writer->finishRun(storage::RunStatus::kFinished);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: trace_append_runs PATH RUNS EVENTS\n");
    return 1;
  }
  const std::string path = argv[1];
  const int runs = std::stoi(argv[2]);
  const int64_t events = std::stoll(argv[3]);
  for (int r = 0; r < runs; ++r) {
    const bubblescope::Status s = appendRun(path, events);
    if (!s.isOk()) {
      std::fprintf(stderr, "error: run %d: %s\n", r, s.message().c_str());
      return 1;
    }
  }
  return 0;
}
