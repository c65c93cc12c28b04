// The JSON files of resources/hardware and resources/models, compiled into
// the library as text (engine/layout/CMakeLists.txt generates the definitions
// at configure time), so a profile or preset needs no file at run time.
#pragma once

#include <string>
#include <vector>

namespace bubblescope::layout {

struct EmbeddedJson {
  std::string stem;  // the file name without .json: "a100-80g", "gpt"
  std::string text;  // the file's contents
};

// resources/hardware/*.json, in file-name order.
const std::vector<EmbeddedJson>& embeddedHardwareProfiles();
// resources/models/*.json, each {"presets": [ModelConfig JSON, ...]}.
const std::vector<EmbeddedJson>& embeddedModelPresets();

}  // namespace bubblescope::layout
