// NsysExport: one Nsight Systems SQLite export (`nsys export --type sqlite`)
// opened for reading, checked, with what its schema holds: the product and
// export-schema versions (2.x: table EXPORT_META_DATA, Nsight Systems 2022;
// 3.x: META_DATA_EXPORT and ENUM_* tables, 2023 to 2025), its tables and
// their columns, and the enum values it uses (from its ENUM_* tables when it
// has them, else the values NVIDIA documents for the 2.x schema).
//
// Contract: open() fails with one message naming the file when it is not a
// SQLite file, is truncated (shorter than its header says), is locked by
// another process, is damaged, or is a SQLite file but not an Nsight export
// (a Bubblescope trace is named as such). Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "storage/sqlite_db.h"

namespace bubblescope::import {

// The NVTX event types of NVTX_EVENTS.eventType (ENUM_NSYS_EVENT_TYPE).
struct NvtxEventTypes {
  int64_t thread = 39;       // NvtxThread: a thread's name (nvtxNameOsThread)
  int64_t pushPop = 59;      // NvtxPushPopRange
  int64_t startEnd = 60;     // NvtxStartEndRange
  int64_t domainCreate = 75; // NvtxDomainCreate
};

class NsysExport {
 public:
  static Result<std::unique_ptr<NsysExport>> open(const std::string& path);

  storage::SqliteDb& db() { return *db_; }
  const std::string& path() const { return path_; }
  const std::string& productVersion() const { return productVersion_; }  // "" if not stated
  const std::string& schemaVersion() const { return schemaVersion_; }    // "" if not stated
  int schemaMajor() const { return schemaMajor_; }                       // 0 if not stated
  // The 2.x and 3.x schema families this importer follows.
  bool knownSchema() const { return schemaMajor_ == 2 || schemaMajor_ == 3; }
  // E.g. "Nsight Systems 2022.2.1.31, export schema 2.9.1".
  std::string versionText() const;

  bool hasTable(const std::string& table) const { return columns_.count(table) > 0; }
  // The columns of `cols` that `table` lacks (all of them when it is absent).
  std::vector<std::string> missingColumns(const std::string& table,
                                          const std::vector<std::string>& cols) const;
  bool hasColumn(const std::string& table, const std::string& col) const;

  const NvtxEventTypes& nvtxTypes() const { return nvtxTypes_; }
  // Copy kind (copyKind) as Kineto names it: "HtoD", "DtoH", "DtoD", "PtoP" ...
  std::string copyKindName(int64_t kind) const;
  // Memory kind (srcKind, dstKind, memKind): "Pageable", "Pinned", "Device" ...
  std::string memoryKindName(int64_t kind) const;

  // Rows of a two-column query as (int, text); errors name the file.
  Result<std::vector<std::pair<int64_t, std::string>>> intTextRows(const std::string& sql);
  // The first row's first column of `sql` as an integer, nullopt when no row or NULL.
  Result<std::optional<int64_t>> scalar(const std::string& sql);
  // A query's error as one message: the lock, the damage, or SQLite's words.
  Status queryError(const Status& error) const;

 private:
  NsysExport() = default;
  Status readSchema();
  Status readMetadata();
  Status readEnums();

  std::string path_;
  std::unique_ptr<storage::SqliteDb> db_;
  std::map<std::string, std::set<std::string>> columns_;  // table -> its columns
  std::string productVersion_;
  std::string schemaVersion_;
  int schemaMajor_ = 0;
  NvtxEventTypes nvtxTypes_;
  std::map<int64_t, std::string> copyKinds_;
  std::map<int64_t, std::string> memoryKinds_;
};

}  // namespace bubblescope::import
