#include "gui/layout_problem_fields.h"

#include <array>
#include <string_view>

namespace bubblescope::gui {

QString fieldOfProblem(const std::string& problem) {
  const std::string_view p(problem);
  auto has = [&](std::string_view s) { return p.find(s) != std::string_view::npos; };
  auto startsWith = [&](std::string_view s) { return p.substr(0, s.size()) == s; };
  if (has("is not divisible by tp")) return QStringLiteral("tp");
  if (has("fewer than pp")) return QStringLiteral("pp");
  if (startsWith("world size")) return QStringLiteral("dp");
  if (startsWith("global_batch")) return QStringLiteral("micro_batches");
  if (startsWith("schedule ") && has("needs micro_batches")) return QStringLiteral("micro_batches");
  if (startsWith("schedule ") && has("needs virtual_chunks")) {
    return QStringLiteral("virtual_chunks");
  }
  if (startsWith("invalid model") || startsWith("unknown model")) return QStringLiteral("model");
  // Longer keys first: "micro_batch_size" before "micro_batches".
  static constexpr std::array<std::string_view, 20> kKeys = {"inter_node_latency_us",
                                                             "inter_node_gbps",
                                                             "ranks_per_node",
                                                             "all_reduce",
                                                             "grad_compression",
                                                             "virtual_chunks",
                                                             "micro_batch_size",
                                                             "micro_batches",
                                                             "zero_stage",
                                                             "stage_layers",
                                                             "learning_rate",
                                                             "bucket_elements",
                                                             "bucket_mb",
                                                             "hostfile",
                                                             "hosts",
                                                             "schedule",
                                                             "steps",
                                                             "dp",
                                                             "tp",
                                                             "pp"};
  for (std::string_view key : kKeys) {
    if (startsWith(key) && (p.size() == key.size() || p[key.size()] == ' ')) {
      return QString::fromUtf8(key.data(), static_cast<int>(key.size()));
    }
  }
  return {};
}

}  // namespace bubblescope::gui
