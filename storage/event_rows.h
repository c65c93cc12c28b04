// The `events` rows of trace files before event blocks (schema v1..v5, one
// row per event; docs/trace-format.md): the columns a reader selects, how a
// row reads as a StoredEvent, and how an event binds as a row (the baseline
// table of `bench store`). All of it follows trace_model/event.h's field
// list: the key columns rank, name, start_ns, end_ns first, then every
// attribute in the list's order. Private to storage/.
#pragma once

#include <cstdint>
#include <string>

#include "storage/event_block.h"
#include "storage/sqlite_db.h"
#include "trace_model/event.h"

namespace bubblescope::storage {

// The last schema version with `events` rows (from v6 on, event_blocks).
inline constexpr int32_t kLastEventRowVersion = 5;

// The SELECT list of a row of a `version` file (1..5), laid out as above; an
// attribute whose column that version lacks reads as the attribute's initial
// value.
std::string eventRowColumns(int32_t version);

// The column names of a v5 row, laid out as above, for an INSERT.
std::string eventRowInsertColumns();
int eventRowColumnCount();

// Reads a row selected with eventRowColumns() from column `first`: its rank
// (as stored: callers check its range) and the event.
void readEventRow(const SqliteStatement& s, int first, int64_t& rank, StoredEvent& out);

// Binds `e`, named `nameId`, as the columns of eventRowInsertColumns() from
// parameter `first`.
void bindEventRow(SqliteStatement& s, int first, const trace_model::Event& e, int64_t nameId);

}  // namespace bubblescope::storage
