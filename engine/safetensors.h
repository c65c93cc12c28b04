// Reading and writing the safetensors format (F32 tensors only).
//
// Layout: 8-byte little-endian header length N, N bytes of JSON
// {"<name>": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]},
//  "__metadata__": {"key": "value", ...}} padded with spaces to a multiple of
// 8, then the raw little-endian data; offsets are relative to the data start.
// See https://github.com/huggingface/safetensors.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/tensor.h"

namespace bubblescope::engine {

struct SafetensorsTensorView {
  std::string name;
  Shape shape;
  std::span<const float> data;  // shapeNumel(shape) values
};

// Writes atomically (a temporary file renamed over `path`).
Status writeSafetensors(const std::string& path, const std::vector<SafetensorsTensorView>& tensors,
                        const std::map<std::string, std::string>& metadata);

// A whole safetensors file read into memory and validated (offsets in bounds,
// sizes consistent with shapes, dtype F32).
class SafetensorsFile {
 public:
  static Result<SafetensorsFile> read(const std::string& path);

  const std::string& path() const { return path_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  std::vector<std::string> names() const;
  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  // Copies tensor `name` into `out`; an error if it is missing or its shape
  // differs from `shape` (the message names both shapes).
  Status copyTo(const std::string& name, const Shape& shape, std::span<float> out) const;

 private:
  struct Entry {
    Shape shape;
    size_t begin = 0;  // byte offsets into data_
    size_t end = 0;
  };
  std::string path_;
  std::vector<char> data_;
  std::map<std::string, Entry> entries_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace bubblescope::engine
