#include "storage/import/nsys_export.h"

#include <cctype>

namespace bubblescope::import {
namespace {

constexpr char kSqliteMagic[] = "SQLite format 3";  // and a NUL: 16 bytes
constexpr int kLockWaitMs = 100;

uint32_t bigEndian(const std::string& bytes, size_t at, size_t width) {
  uint32_t v = 0;
  for (size_t i = 0; i < width; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

// "CUDA_MEMCPY_KIND_HTOD" -> "HtoD"; "" when the name is not of that form.
std::string copyKindFromEnumName(const std::string& name) {
  const auto u = name.rfind('_');
  const std::string tail = u == std::string::npos ? name : name.substr(u + 1);
  if (tail.size() == 4 && tail.substr(1, 2) == "TO") {
    return std::string(1, tail[0]) + "to" + tail[3];
  }
  return "";
}

// The 2.x schema's documented values (CUDA_MEMCPY_KIND, CUDA_MEMOPR_MEMORY_KIND).
const std::map<int64_t, std::string> kCopyKinds = {
    {0, "Unknown"}, {1, "HtoD"}, {2, "DtoH"}, {3, "HtoA"},  {4, "AtoH"},
    {5, "AtoA"},    {6, "AtoD"}, {7, "DtoA"}, {8, "DtoD"},  {9, "HtoH"},
    {10, "PtoP"},   {11, "HtoD"}, {12, "DtoH"}, {13, "DtoD"},  // 11-13: unified memory
};
const std::map<int64_t, std::string> kMemoryKinds = {
    {0, "Pageable"}, {1, "Pinned"},        {2, "Device"},         {3, "Array"},
    {4, "Managed"},  {5, "Device Static"}, {6, "Managed Static"}, {7, "Unknown"},
};

}  // namespace

Result<std::unique_ptr<NsysExport>> NsysExport::open(const std::string& path) {
  std::unique_ptr<NsysExport> e(new NsysExport());
  e->path_ = path;
  BS_ASSIGN_OR_RETURN(e->db_, storage::SqliteDb::open(path, storage::SqliteDb::Mode::kReadOnly));
  // A file another process holds locked (nsys still writing it) is reported
  // after a short wait rather than SQLite's usual 5 s per attempt.
  e->db_->setBusyTimeout(kLockWaitMs);
  // The header: a SQLite file, and as long as it says it is.
  BS_ASSIGN_OR_RETURN(const std::string header, e->db_->readFileBytes(0, 100));
  if (header.size() < 100 || header.compare(0, 16, std::string(kSqliteMagic, 16)) != 0) {
    return Status::invalidArgument(path + ": not a SQLite file");
  }
  BS_ASSIGN_OR_RETURN(const int64_t fileBytes, e->db_->fileSizeBytes());
  int64_t pageBytes = bigEndian(header, 16, 2);
  if (pageBytes == 1) pageBytes = 65536;
  const int64_t pages = bigEndian(header, 28, 4);
  const bool pagesValid = pages > 0 && bigEndian(header, 24, 4) == bigEndian(header, 92, 4);
  if (pageBytes >= 512 && ((pagesValid && fileBytes < pages * pageBytes) ||
                           fileBytes % pageBytes != 0)) {
    return Status::corrupt(path + ": truncated: the file has " + std::to_string(fileBytes) +
                           " bytes, its SQLite header says " +
                           std::to_string(pagesValid ? pages * pageBytes : fileBytes) +
                           " (whole pages of " + std::to_string(pageBytes) + ")");
  }
  BS_RETURN_IF_ERROR(e->readSchema());
  BS_RETURN_IF_ERROR(e->readMetadata());
  BS_RETURN_IF_ERROR(e->readEnums());
  return e;
}

Status NsysExport::queryError(const Status& error) const {
  if (db_->lastErrorWasBusy()) {
    return Status::ioError(path_ +
                           ": locked by another process (is nsys still exporting it?); "
                           "import it when that is done");
  }
  if (error.code() == StatusCode::kCorrupt) {
    return Status::corrupt(path_ + ": damaged or truncated SQLite file (" + error.message() +
                           ")");
  }
  return error;
}

Status NsysExport::readSchema() {
  auto stmt = db_->prepare(
      "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p "
      "WHERE m.type IN ('table', 'view')");
  if (!stmt.isOk()) return queryError(stmt.status());
  for (;;) {
    auto row = stmt->step();
    if (!row.isOk()) return queryError(row.status());
    if (!*row) break;
    columns_[stmt->columnText(0)].insert(stmt->columnText(1));
  }
  return Status::ok();
}

std::vector<std::string> NsysExport::missingColumns(const std::string& table,
                                                    const std::vector<std::string>& cols) const {
  std::vector<std::string> out;
  auto t = columns_.find(table);
  for (const auto& c : cols) {
    if (t == columns_.end() || t->second.count(c) == 0) out.push_back(c);
  }
  return out;
}

bool NsysExport::hasColumn(const std::string& table, const std::string& col) const {
  auto t = columns_.find(table);
  return t != columns_.end() && t->second.count(col) > 0;
}

Status NsysExport::readMetadata() {
  std::string table;
  for (const char* t : {"META_DATA_EXPORT", "EXPORT_META_DATA"}) {
    if (missingColumns(t, {"name", "value"}).empty()) {
      table = t;
      break;
    }
  }
  if (table.empty()) {
    if (hasTable("meta") && hasTable("runs") && hasTable("ranks")) {
      return Status::invalidArgument(
          path_ +
          ": a Bubblescope trace, not an Nsight Systems export: open it with info, report or "
          "the app (import reads Kineto JSON traces and Nsight Systems SQLite exports)");
    }
    return Status::invalidArgument(
        path_ +
        ": a SQLite database but not an Nsight Systems export (it has no EXPORT_META_DATA or "
        "META_DATA_EXPORT table; export a report with `nsys export --type sqlite`)");
  }
  auto stmt = db_->prepare("SELECT name, value FROM " + table);
  if (!stmt.isOk()) return queryError(stmt.status());
  std::map<std::string, std::string> meta;
  for (;;) {
    auto row = stmt->step();
    if (!row.isOk()) return queryError(row.status());
    if (!*row) break;
    meta[stmt->columnText(0)] = stmt->columnText(1);
  }
  for (const char* key : {"EXPORT_PRODUCT_VERSION", "NSYS_VERSION", "PRODUCT_VERSION"}) {
    if (auto it = meta.find(key); it != meta.end() && productVersion_.empty()) {
      productVersion_ = it->second;
    }
  }
  if (auto it = meta.find("EXPORT_SCHEMA_VERSION"); it != meta.end()) schemaVersion_ = it->second;
  std::string major = schemaVersion_;
  if (auto it = meta.find("EXPORT_SCHEMA_VERSION_MAJOR"); it != meta.end()) major = it->second;
  size_t i = 0;
  while (i < major.size() && i < 4 && std::isdigit(static_cast<unsigned char>(major[i]))) {
    schemaMajor_ = schemaMajor_ * 10 + (major[i++] - '0');
  }
  return Status::ok();
}

Result<std::vector<std::pair<int64_t, std::string>>> NsysExport::intTextRows(
    const std::string& sql) {
  auto stmt = db_->prepare(sql);
  if (!stmt.isOk()) return queryError(stmt.status());
  std::vector<std::pair<int64_t, std::string>> out;
  for (;;) {
    auto row = stmt->step();
    if (!row.isOk()) return queryError(row.status());
    if (!*row) break;
    out.emplace_back(stmt->columnInt(0), stmt->columnText(1));
  }
  return out;
}

Result<std::optional<int64_t>> NsysExport::scalar(const std::string& sql) {
  auto stmt = db_->prepare(sql);
  if (!stmt.isOk()) return queryError(stmt.status());
  auto row = stmt->step();
  if (!row.isOk()) return queryError(row.status());
  if (!*row || stmt->columnIsNull(0)) return std::optional<int64_t>();
  return std::optional<int64_t>(stmt->columnInt(0));
}

Status NsysExport::readEnums() {
  copyKinds_ = kCopyKinds;
  memoryKinds_ = kMemoryKinds;
  if (missingColumns("ENUM_NSYS_EVENT_TYPE", {"id", "name"}).empty()) {
    BS_ASSIGN_OR_RETURN(auto rows, intTextRows("SELECT id, name FROM ENUM_NSYS_EVENT_TYPE"));
    for (const auto& [id, name] : rows) {
      if (name == "NvtxThread") nvtxTypes_.thread = id;
      if (name == "NvtxPushPopRange") nvtxTypes_.pushPop = id;
      if (name == "NvtxStartEndRange") nvtxTypes_.startEnd = id;
      if (name == "NvtxDomainCreate") nvtxTypes_.domainCreate = id;
    }
  }
  if (missingColumns("ENUM_CUDA_MEMCPY_OPER", {"id", "name"}).empty()) {
    BS_ASSIGN_OR_RETURN(auto rows,
                        intTextRows("SELECT id, name FROM ENUM_CUDA_MEMCPY_OPER"));
    for (const auto& [id, name] : rows) {
      const std::string kind = copyKindFromEnumName(name);
      copyKinds_[id] = kind.empty() ? name : kind;
    }
  }
  if (missingColumns("ENUM_CUDA_MEM_KIND", {"id", "label"}).empty()) {
    BS_ASSIGN_OR_RETURN(auto rows, intTextRows("SELECT id, label FROM ENUM_CUDA_MEM_KIND"));
    for (const auto& [id, label] : rows) memoryKinds_[id] = label;
  }
  return Status::ok();
}

std::string NsysExport::copyKindName(int64_t kind) const {
  auto it = copyKinds_.find(kind);
  return it == copyKinds_.end() ? "kind " + std::to_string(kind) : it->second;
}

std::string NsysExport::memoryKindName(int64_t kind) const {
  auto it = memoryKinds_.find(kind);
  return it == memoryKinds_.end() ? "kind " + std::to_string(kind) : it->second;
}

std::string NsysExport::versionText() const {
  return "Nsight Systems " + (productVersion_.empty() ? std::string("(version not stated)")
                                                      : productVersion_) +
         ", export schema " + (schemaVersion_.empty() ? std::string("?") : schemaVersion_);
}

}  // namespace bubblescope::import
