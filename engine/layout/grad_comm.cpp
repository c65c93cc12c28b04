#include "engine/layout/grad_comm.h"

#include <charconv>

namespace bubblescope::layout {

const char* gradCompressionKindName(GradCompression kind) {
  switch (kind) {
    case GradCompression::kNone:
      return "none";
    case GradCompression::kFp16:
      return "fp16";
    case GradCompression::kBf16:
      return "bf16";
    case GradCompression::kInt8:
      return "int8";
    case GradCompression::kTopK:
      return "topk";
    case GradCompression::kPowerSgd:
      return "powersgd";
  }
  return "none";
}

std::string GradCompressionSpec::toString() const {
  switch (kind) {
    case GradCompression::kNone:
    case GradCompression::kFp16:
    case GradCompression::kBf16:
    case GradCompression::kInt8:
      return gradCompressionKindName(kind);
    case GradCompression::kTopK: {
      char text[32];  // the shortest form that reads back as the same double
      const auto [end, ec] = std::to_chars(text, text + sizeof(text), ratio);
      return "topk:" + std::string(text, ec == std::errc() ? end : text);
    }
    case GradCompression::kPowerSgd:
      return "powersgd:" + std::to_string(rank);
  }
  return "?";
}

Result<GradCompressionSpec> parseGradCompression(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return Status::invalidArgument("grad compression '" + std::string(text) + "' " + why +
                                   " (known: none, fp16, bf16, int8, topk:RATIO, powersgd:RANK)");
  };
  GradCompressionSpec spec;
  const size_t colon = text.find(':');
  const std::string_view head = text.substr(0, colon);
  const std::string_view arg = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  const bool hasArg = colon != std::string_view::npos;
  if (head == "none" || head == "fp16" || head == "bf16" || head == "int8") {
    if (hasArg) return bad("takes no argument");
    spec.kind = head == "none"   ? GradCompression::kNone
                : head == "fp16" ? GradCompression::kFp16
                : head == "bf16" ? GradCompression::kBf16
                                 : GradCompression::kInt8;
    return spec;
  }
  if (head == "topk") {
    double ratio = 0.0;
    const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), ratio);
    if (!hasArg || ec != std::errc() || end != arg.data() + arg.size() || !(ratio > 0.0) ||
        ratio > 1.0) {
      return bad("needs a RATIO in (0, 1]");
    }
    spec.kind = GradCompression::kTopK;
    spec.ratio = ratio;
    return spec;
  }
  if (head == "powersgd") {
    int rank = 0;
    const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), rank);
    if (!hasArg || ec != std::errc() || end != arg.data() + arg.size() || rank < 1) {
      return bad("needs a RANK >= 1");
    }
    spec.kind = GradCompression::kPowerSgd;
    spec.rank = rank;
    return spec;
  }
  return bad("is unknown");
}

const char* allReduceAlgorithmName(AllReduceAlgorithm algorithm) {
  return algorithm == AllReduceAlgorithm::kHierarchical ? "hierarchical" : "flat";
}

Result<AllReduceAlgorithm> parseAllReduceAlgorithm(std::string_view text) {
  for (AllReduceAlgorithm a : {AllReduceAlgorithm::kFlat, AllReduceAlgorithm::kHierarchical}) {
    if (text == allReduceAlgorithmName(a)) return a;
  }
  return Status::invalidArgument("all-reduce algorithm '" + std::string(text) +
                                 "' is unknown (known: flat, hierarchical)");
}

}  // namespace bubblescope::layout
