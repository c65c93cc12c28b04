// The events table's INSERT and how one event binds to it: the one
// definition the trace writer and the insert baseline share. Private to
// storage/ (docs/trace-format.md describes the columns).
#pragma once

#include <cstdint>

#include "storage/sqlite_db.h"
#include "trace_model/event.h"

namespace bubblescope::storage {

inline constexpr const char* kInsertEventSql =
    "INSERT INTO events(run, rank, lane, kind, name, start_ns, end_ns, step, micro_batch, "
    "stage, chunk, dim, bytes, flops, peer, correlation, cpu_ns) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

// Binds every parameter of kInsertEventSql; `nameId` is the strings row of e.name.
void bindEventRow(SqliteStatement& insert, int64_t runId, const trace_model::Event& e,
                  int64_t nameId);

}  // namespace bubblescope::storage
