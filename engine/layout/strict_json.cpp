#include "engine/layout/strict_json.h"

#include <set>
#include <vector>

namespace bubblescope::layout {

Result<nlohmann::json> parseStrictJson(const std::string& text, std::string_view what) {
  using nlohmann::json;
  // The keys seen in each open object; the innermost last.
  std::vector<std::set<std::string>> open;
  std::string duplicate, lastKey;
  auto seeKeys = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        open.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!open.empty()) open.pop_back();
        break;
      case json::parse_event_t::key:
        lastKey = parsed.get<std::string>();
        if (!open.empty() && !open.back().insert(lastKey).second && duplicate.empty()) {
          duplicate = lastKey;
        }
        break;
      default:
        break;
    }
    return true;
  };
  json j;
  try {
    j = json::parse(text, seeKeys, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::out_of_range& e) {
    // 406: "number overflow parsing '1e400'": name the key and the number.
    const std::string message = e.what();
    const size_t from = message.find('\''), to = message.rfind('\'');
    const std::string number =
        from != std::string::npos && to > from ? message.substr(from + 1, to - from - 1) : message;
    return Status::invalidArgument(
        outOfRangeMessage(lastKey.empty() ? std::string(what) : lastKey, number,
                          rangeText(lowestValue<double>(), highestValue<double>())));
  } catch (const json::exception& e) {
    return Status::invalidArgument(std::string(what) + " is not valid JSON: " + e.what());
  }
  if (!duplicate.empty()) {
    return Status::invalidArgument(std::string(what) + ": duplicate key '" + duplicate +
                                   "' (a key may be given once per object)");
  }
  return j;
}

}  // namespace bubblescope::layout
