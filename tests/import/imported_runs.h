// Test helpers: import fixtures into a trace file and read the run back.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "storage/import/kineto_importer.h"
#include "storage/trace_reader.h"
#include "storage/trace_writer.h"
#include "tests/import/kineto_fixtures.h"

namespace bubblescope::testing {

struct Imported {
  import::ImportSummary summary;
  std::unique_ptr<storage::TraceReader> reader;
};

// Imports the traces at `paths` as one run appended to `db`, then opens `db`
// for reading.
inline Result<Imported> importPaths(const std::string& db, const std::vector<std::string>& paths,
                                    import::ImportOptions options = {}) {
  BS_ASSIGN_OR_RETURN(auto writer, storage::TraceWriter::open(db));
  BS_ASSIGN_OR_RETURN(auto summary, import::importKineto(*writer, paths, options));
  writer.reset();
  BS_ASSIGN_OR_RETURN(auto reader, storage::TraceReader::open(db));
  return Imported{std::move(summary), std::move(reader)};
}

// importPaths on the fixtures `files` (relative to the fixtures folder).
inline Result<Imported> importFiles(const std::string& db, const std::vector<std::string>& files,
                                    import::ImportOptions options = {}) {
  std::vector<std::string> paths;
  for (const auto& f : files) paths.push_back(kinetoFixture(f));
  return importPaths(db, paths, std::move(options));
}

inline std::vector<trace_model::Event> allEvents(storage::TraceReader& reader, int64_t runId) {
  std::vector<trace_model::Event> out;
  int64_t cursor = 0;
  for (;;) {
    auto page = reader.eventsAfter(runId, cursor);
    EXPECT_TRUE(page.isOk());
    if (!page.isOk() || page->events.empty()) break;
    out.insert(out.end(), page->events.begin(), page->events.end());
    cursor = page->cursor;
  }
  return out;
}

}  // namespace bubblescope::testing
