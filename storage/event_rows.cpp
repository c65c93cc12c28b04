#include "storage/event_rows.h"

namespace bubblescope::storage {
namespace {

constexpr bool hasColumn(const char* column) { return column != nullptr; }

// Each row column after the keys belongs to an attribute of the list, and
// every attribute's column is older than event blocks.
constexpr bool columnsArePlausible() {
  bool ok = true;
#define BUBBLESCOPE_CHECK_COLUMN(Type, member, initial, column, since, bit, span) \
  ok = ok && (!hasColumn(column) || (since >= 1 && since <= kLastEventRowVersion));
  BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_EVENT_SKIP, BUBBLESCOPE_CHECK_COLUMN)
#undef BUBBLESCOPE_CHECK_COLUMN
  return ok;
}
static_assert(columnsArePlausible(), "an events column needs a schema version 1..5");

constexpr const char* kKeyColumns = "rank, name, start_ns, end_ns";
constexpr int kKeyColumnCount = 4;

}  // namespace

std::string eventRowColumns(int32_t version) {
  std::string columns = kKeyColumns;
#define BUBBLESCOPE_SELECT_COLUMN(Type, member, initial, column, since, bit, span)        \
  columns += ", ";                                                                       \
  columns += hasColumn(column) && version >= since                                       \
                 ? std::string(column)                                                   \
                 : std::to_string(static_cast<int64_t>(trace_model::integerOf(initial)));
  BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_EVENT_SKIP, BUBBLESCOPE_SELECT_COLUMN)
#undef BUBBLESCOPE_SELECT_COLUMN
  return columns;
}

std::string eventRowInsertColumns() {
  std::string columns = kKeyColumns;
#define BUBBLESCOPE_INSERT_COLUMN(Type, member, initial, column, since, bit, span) \
  if (hasColumn(column)) columns += std::string(", ") + column;
  BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_EVENT_SKIP, BUBBLESCOPE_INSERT_COLUMN)
#undef BUBBLESCOPE_INSERT_COLUMN
  return columns;
}

int eventRowColumnCount() {
  int count = kKeyColumnCount;
#define BUBBLESCOPE_COUNT_COLUMN(Type, member, initial, column, since, bit, span) \
  if (hasColumn(column)) ++count;
  BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_EVENT_SKIP, BUBBLESCOPE_COUNT_COLUMN)
#undef BUBBLESCOPE_COUNT_COLUMN
  return count;
}

void readEventRow(const SqliteStatement& s, int first, int64_t& rank, StoredEvent& out) {
  rank = s.columnInt(first);
  out.nameId = s.columnInt(first + 1);
  out.startNs = s.columnInt(first + 2);
  out.endNs = s.columnInt(first + 3);
  int c = first + kKeyColumnCount;
#define BUBBLESCOPE_READ_COLUMN(Type, member, ...) \
  out.member = static_cast<trace_model::IntegerOf<Type>>(s.columnInt(c++));
  BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_EVENT_SKIP, BUBBLESCOPE_READ_COLUMN)
#undef BUBBLESCOPE_READ_COLUMN
}

void bindEventRow(SqliteStatement& s, int first, const trace_model::Event& e, int64_t nameId) {
  s.bind(first, int64_t{e.rank});
  s.bind(first + 1, nameId);
  s.bind(first + 2, e.startNs);
  s.bind(first + 3, e.endNs);
  int p = first + kKeyColumnCount;
#define BUBBLESCOPE_BIND_COLUMN(Type, member, initial, column, since, bit, span) \
  if (hasColumn(column)) s.bind(p++, static_cast<int64_t>(trace_model::integerOf(e.member)));
  BUBBLESCOPE_EVENT_FIELDS(BUBBLESCOPE_EVENT_SKIP, BUBBLESCOPE_BIND_COLUMN)
#undef BUBBLESCOPE_BIND_COLUMN
}

}  // namespace bubblescope::storage
