#include "storage/analysis/imported_layout.h"

#include <nlohmann/json.hpp>

namespace bubblescope::analysis {

std::string importedLayoutSummary(const storage::RunInfo& info) {
  const auto layout = nlohmann::json::parse(info.layoutJson, nullptr, false);
  std::string source = "trace";
  size_t files = 0;
  std::string named;
  std::string version;
  if (layout.is_object()) {
    if (layout.contains("format_version") && layout["format_version"].is_string()) {
      version = layout["format_version"].get<std::string>();
    }
    if (layout.contains("source") && layout["source"].is_string()) {
      source = layout["source"].get<std::string>();
    }
    if (layout.contains("files") && layout["files"].is_array()) files = layout["files"].size();
    if (layout.contains("process_groups") && layout["process_groups"].is_array()) {
      for (const auto& g : layout["process_groups"]) {
        if (!g.is_object() || !g.contains("dim") || !g["dim"].is_string()) continue;
        const std::string dim = g["dim"].get<std::string>();
        if (dim == "unknown" || dim == "none") continue;
        const std::string name = g.value("name", std::string());
        const std::string desc = g.value("desc", std::string());
        const size_t ranks = g.contains("ranks") && g["ranks"].is_array() ? g["ranks"].size() : 0;
        if (!named.empty()) named += ", ";
        named += "group " + name + " (" + (desc.empty() ? "" : desc + ", ") +
                 std::to_string(ranks) + " ranks) " + dim;
      }
    }
  }
  std::string out = "imported " + source + " traces" +
                    (version.empty() ? std::string() : " (" + version + ")") + ": " +
                    std::to_string(files) +
                    (files == 1 ? " file" : " files") + " of world " +
                    std::to_string(info.worldSize) + "; ";
  if (named.empty()) {
    return out +
           "parallel dimensions unknown (name process groups: import --group "
           "NAME=dp|tp|pp|ep)";
  }
  return out + named + "; other dimensions unknown";
}

std::string coordinateText(int32_t coordinate) {
  return coordinate < 0 ? "-" : std::to_string(coordinate);
}

}  // namespace bubblescope::analysis
