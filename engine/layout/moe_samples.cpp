#include "engine/layout/moe_samples.h"

#include <charconv>

namespace bubblescope::layout {
namespace {

constexpr std::string_view kPrefix = "moe.h";

// Reads a non-negative integer at the front of `s`, consuming it.
std::optional<int32_t> takeNumber(std::string_view& s) {
  int32_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end == s.data() || value < 0) return std::nullopt;
  s.remove_prefix(static_cast<size_t>(end - s.data()));
  return value;
}

bool takePrefix(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

}  // namespace

std::string moeSampleName(const MoeSampleKey& key) {
  std::string name = std::string(kPrefix) + std::to_string(key.block) + ".";
  switch (key.series) {
    case MoeSeries::kAuxLoss:
      return name + "aux_loss";
    case MoeSeries::kRouted:
      return name + "routed.e" + std::to_string(key.expert);
    case MoeSeries::kDropped:
      return name + "dropped.e" + std::to_string(key.expert);
  }
  return name;
}

std::optional<MoeSampleKey> parseMoeSampleName(const std::string& name) {
  std::string_view s = name;
  MoeSampleKey key;
  if (!takePrefix(s, kPrefix)) return std::nullopt;
  const auto block = takeNumber(s);
  if (!block || !takePrefix(s, ".")) return std::nullopt;
  key.block = *block;
  if (s == "aux_loss") {
    key.series = MoeSeries::kAuxLoss;
    return key;
  }
  if (takePrefix(s, "routed.e")) {
    key.series = MoeSeries::kRouted;
  } else if (takePrefix(s, "dropped.e")) {
    key.series = MoeSeries::kDropped;
  } else {
    return std::nullopt;
  }
  const auto expert = takeNumber(s);
  if (!expert || !s.empty()) return std::nullopt;
  key.expert = *expert;
  return key;
}

}  // namespace bubblescope::layout
