#include "storage/analysis/run_layout.h"

#include <nlohmann/json.hpp>

namespace bubblescope::analysis {

std::optional<layout::Layout> runLayout(const std::string& layoutJson,
                                        const std::string& modelJson) {
  using nlohmann::json;
  json j = json::parse(layoutJson, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (!j.is_object()) return std::nullopt;
  if (!j.contains("model")) {
    const json model = json::parse(modelJson, nullptr, false, true);
    if (model.is_object() && !model.empty()) {
      j["model"] = model;
      if (model.value("preset", "") == "custom") j["model"].erase("preset");  // sizes alone
    }
  }
  Result<layout::Layout> l = layout::layoutFromJson(j);
  if (!l.isOk()) return std::nullopt;
  return l.value();
}

}  // namespace bubblescope::analysis
