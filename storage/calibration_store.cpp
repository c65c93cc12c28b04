#include "storage/calibration_store.h"

#include <nlohmann/json.hpp>

#include "storage/process_identity.h"
#include "storage/sqlite_db.h"
#include "storage/trace_file_access.h"
#include "storage/trace_writer.h"

namespace bubblescope::storage {
namespace {

Status insertAll(SqliteDb& db, const layout::Calibration& c, int64_t* id) {
  BS_ASSIGN_OR_RETURN(auto head,
                      db.prepare("INSERT INTO calibrations(name, source_run, method, "
                                 "created_unix_ns, host, cores, ranks_per_host, model_json, "
                                 "backend) VALUES (?,?,?,?,?,?,?,?,?)"));
  head.bind(1, std::string_view(c.name));
  head.bind(2, c.sourceRun);
  head.bind(3, std::string_view(c.method));
  head.bind(4, unixNowNs());
  head.bind(5, std::string_view(c.host));
  head.bind(6, int64_t{c.cores});
  head.bind(7, int64_t{c.ranksPerHost});
  const std::string model = layout::toJson(c.model).dump();
  head.bind(8, std::string_view(model));
  head.bind(9, std::string_view(c.backend));
  BS_RETURN_IF_ERROR(head.run());
  *id = db.lastInsertRowId();
  BS_ASSIGN_OR_RETURN(auto op, db.prepare("INSERT INTO calibration_ops(calibration, part, op, "
                                          "micro_batch_size, tp, wall_ns, cpu_ns, samples) "
                                          "VALUES (?,?,?,?,?,?,?,?)"));
  for (const layout::OpCostEntry& e : c.ops) {
    op.bind(1, *id);
    op.bind(2, std::string_view(e.part));
    op.bind(3, std::string_view(e.op));
    op.bind(4, int64_t{e.microBatchSize});
    op.bind(5, int64_t{e.tp});
    op.bind(6, e.wallNs);
    op.bind(7, e.cpuNs);
    op.bind(8, e.samples);
    BS_RETURN_IF_ERROR(op.run());
  }
  BS_ASSIGN_OR_RETURN(auto link,
                      db.prepare("INSERT INTO calibration_links(calibration, dim, link, "
                                 "collective, group_size, alpha_ns, beta_ns_per_byte, samples, "
                                 "min_bytes, max_bytes) VALUES (?,?,?,?,?,?,?,?,?,?)"));
  for (const layout::LinkFit& f : c.links) {
    link.bind(1, *id);
    link.bind(2, std::string_view(f.dim));
    link.bind(3, std::string_view(f.link));
    link.bind(4, std::string_view(f.collective));
    link.bind(5, int64_t{f.groupSize});
    link.bind(6, f.alphaNs);
    link.bind(7, f.betaNsPerByte);
    link.bind(8, f.samples);
    link.bind(9, f.minBytes);
    link.bind(10, f.maxBytes);
    BS_RETURN_IF_ERROR(link.run());
  }
  return Status::ok();
}

Status readParts(SqliteDb& db, layout::Calibration& c) {
  BS_ASSIGN_OR_RETURN(auto op, db.prepare("SELECT part, op, micro_batch_size, tp, wall_ns, "
                                          "cpu_ns, samples FROM calibration_ops WHERE "
                                          "calibration = ? ORDER BY part, op, tp, "
                                          "micro_batch_size"));
  op.bind(1, c.id);
  while (true) {
    BS_ASSIGN_OR_RETURN(const bool row, op.step());
    if (!row) break;
    c.ops.push_back({op.columnText(0), op.columnText(1), static_cast<int32_t>(op.columnInt(2)),
                     static_cast<int32_t>(op.columnInt(3)), op.columnDouble(4), op.columnDouble(5),
                     op.columnInt(6)});
  }
  BS_ASSIGN_OR_RETURN(auto link, db.prepare("SELECT dim, link, collective, group_size, alpha_ns, "
                                            "beta_ns_per_byte, samples, min_bytes, max_bytes "
                                            "FROM calibration_links WHERE calibration = ? "
                                            "ORDER BY dim, collective, link, group_size"));
  link.bind(1, c.id);
  while (true) {
    BS_ASSIGN_OR_RETURN(const bool row, link.step());
    if (!row) break;
    c.links.push_back({link.columnText(0), link.columnText(1), link.columnText(2),
                       static_cast<int32_t>(link.columnInt(3)), link.columnDouble(4),
                       link.columnDouble(5), link.columnInt(6), link.columnInt(7),
                       link.columnInt(8)});
  }
  return Status::ok();
}

}  // namespace

Result<int64_t> saveCalibration(const std::string& path, const layout::Calibration& c) {
  {  // creates the file or migrates it to the current schema
    BS_ASSIGN_OR_RETURN(auto writer, TraceWriter::open(path));
  }
  BS_ASSIGN_OR_RETURN(auto db, SqliteDb::open(path, SqliteDb::Mode::kReadWriteCreate));
  BS_RETURN_IF_ERROR(db->exec("BEGIN IMMEDIATE"));
  int64_t id = 0;
  Status s = insertAll(*db, c, &id);
  if (!s.isOk()) {
    (void)db->exec("ROLLBACK");
    return s.withContext("cannot store the calibration in " + path);
  }
  BS_RETURN_IF_ERROR(db->exec("COMMIT"));
  return id;
}

Result<std::vector<layout::Calibration>> loadCalibrations(const std::string& path) {
  BS_ASSIGN_OR_RETURN(ReadingConnection conn, openForReading(path));
  std::vector<layout::Calibration> out;
  if (conn.schemaVersion < 5) return out;
  SqliteDb& db = *conn.db;
  BS_ASSIGN_OR_RETURN(auto q, db.prepare("SELECT id, name, source_run, method, host, cores, "
                                         "ranks_per_host, model_json, backend FROM "
                                         "calibrations ORDER BY id"));
  while (true) {
    BS_ASSIGN_OR_RETURN(const bool row, q.step());
    if (!row) break;
    layout::Calibration c;
    c.id = q.columnInt(0);
    c.name = q.columnText(1);
    c.sourceRun = q.columnInt(2);
    c.method = q.columnText(3);
    c.host = q.columnText(4);
    c.cores = static_cast<int32_t>(q.columnInt(5));
    c.ranksPerHost = static_cast<int32_t>(q.columnInt(6));
    const auto model = nlohmann::json::parse(q.columnText(7), nullptr, false);
    auto parsed = layout::modelConfigFromJson(model);
    if (model.is_discarded() || !parsed.isOk()) {
      return Status::corrupt(path + ": calibration " + std::to_string(c.id) +
                             " has an unreadable model_json");
    }
    c.model = *parsed;
    c.backend = q.columnText(8);
    out.push_back(std::move(c));
  }
  for (layout::Calibration& c : out) BS_RETURN_IF_ERROR(readParts(db, c));
  return out;
}

Result<layout::Calibration> loadCalibration(const std::string& path, int64_t id) {
  BS_ASSIGN_OR_RETURN(std::vector<layout::Calibration> all, loadCalibrations(path));
  if (all.empty()) {
    return Status::notFound(path +
                            " holds no calibration: make one with `bubblescope-cli calibrate "
                            "--trace " +
                            path + "` (from a measured run in it)");
  }
  if (id == 0) return all.back();
  for (layout::Calibration& c : all) {
    if (c.id == id) return std::move(c);
  }
  return Status::notFound(path + " has no calibration " + std::to_string(id));
}

}  // namespace bubblescope::storage
