#include "engine/safetensors.h"

#include <bit>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/available_memory.h"

namespace bubblescope::engine {
namespace {

void putLe64(char* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t getLe64(const char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

}  // namespace

Status writeSafetensors(const std::string& path, const std::vector<SafetensorsTensorView>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    if (static_cast<int64_t>(t.data.size()) != shapeNumel(t.shape)) {
      return Status::internal("tensor '" + t.name + "' has " + std::to_string(t.data.size()) +
                              " values for shape " + shapeToString(t.shape));
    }
    const uint64_t bytes = t.data.size() * sizeof(float);
    header[t.name] = {
        {"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::invalidArgument("checkpoint '" + path + "' is a directory; give a file name");
  }
  const std::string tmp = path + ".tmp";
  // Whatever fails after the temporary file exists removes it.
  auto failed = [&tmp](Status why) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    return why;
  };
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return failed(Status::ioError("cannot write checkpoint '" + tmp + "'"));
    char len[8];
    putLe64(len, json.size());
    out.write(len, 8);
    out.write(json.data(), static_cast<std::streamsize>(json.size()));
    static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");
    for (const auto& t : tensors) {
      out.write(reinterpret_cast<const char*>(t.data.data()),
                static_cast<std::streamsize>(t.data.size() * sizeof(float)));
    }
    out.flush();
    if (!out) return failed(Status::ioError("failed while writing checkpoint '" + tmp + "'"));
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    return failed(
        Status::ioError("cannot rename '" + tmp + "' to '" + path + "': " + ec.message()));
  }
  return Status::ok();
}

Result<SafetensorsFile> SafetensorsFile::read(const std::string& path) {
  std::error_code ec;
  // A regular file that fits in memory: /dev/zero used to be read until
  // std::bad_alloc.
  BS_RETURN_IF_ERROR(checkFileFitsInMemory("checkpoint '" + path + "'", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::ioError("cannot open checkpoint '" + path + "'");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto corrupt = [&](const std::string& why) {
    return Status::corrupt("checkpoint '" + path + "' is not a valid safetensors file: " + why);
  };
  if (bytes.size() < 8) return corrupt("shorter than its 8-byte header length");
  const uint64_t headerLen = getLe64(bytes.data());
  if (headerLen > bytes.size() - 8) return corrupt("header length exceeds the file size");
  auto header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + headerLen, nullptr,
                                      /*allow_exceptions=*/false);
  if (!header.is_object()) return corrupt("header is not a JSON object");

  SafetensorsFile file;
  file.path_ = path;
  file.data_.assign(bytes.begin() + 8 + static_cast<std::ptrdiff_t>(headerLen), bytes.end());
  for (auto it = header.begin(); it != header.end(); ++it) {
    const auto& v = it.value();
    if (it.key() == "__metadata__") {
      if (!v.is_object()) return corrupt("__metadata__ is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string())
          return corrupt("metadata value '" + m.key() + "' is not a string");
        file.metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") ||
        !v.contains("data_offsets")) {
      return corrupt("entry '" + it.key() + "' lacks dtype, shape or data_offsets");
    }
    if (v["dtype"] != "F32") {
      return Status::unsupported("checkpoint '" + path + "': tensor '" + it.key() + "' has dtype " +
                                 v["dtype"].dump() + "; only F32 is supported");
    }
    Entry e;
    for (const auto& d : v["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0)
        return corrupt("bad shape of '" + it.key() + "'");
      e.shape.push_back(d.get<int64_t>());
    }
    const auto& offs = v["data_offsets"];
    if (!offs.is_array() || offs.size() != 2 || !offs[0].is_number_unsigned() ||
        !offs[1].is_number_unsigned()) {
      return corrupt("bad data_offsets of '" + it.key() + "'");
    }
    e.begin = offs[0].get<size_t>();
    e.end = offs[1].get<size_t>();
    if (e.begin > e.end || e.end > file.data_.size() ||
        e.end - e.begin != static_cast<size_t>(shapeNumel(e.shape)) * sizeof(float)) {
      return corrupt("data of '" + it.key() + "' is out of bounds or does not match its shape");
    }
    file.entries_[it.key()] = std::move(e);
  }
  return file;
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> names;
  for (const auto& [name, e] : entries_) names.push_back(name);
  return names;
}

Status SafetensorsFile::copyTo(const std::string& name, const Shape& shape,
                               std::span<float> out) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return Status::invalidArgument("checkpoint '" + path_ + "' has no tensor '" + name + "'");
  }
  if (it->second.shape != shape) {
    return Status::invalidArgument("checkpoint '" + path_ + "': tensor '" + name + "' has shape " +
                                   shapeToString(it->second.shape) + ", the model expects " +
                                   shapeToString(shape));
  }
  if (out.size() != static_cast<size_t>(shapeNumel(shape))) {
    return Status::internal("destination of '" + name + "' has the wrong size");
  }
  std::memcpy(out.data(), data_.data() + it->second.begin, it->second.end - it->second.begin);
  return Status::ok();
}

}  // namespace bubblescope::engine
