#include "engine/layout/layout.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "engine/layout/global_batch.h"
#include "engine/layout/layout_problems.h"

namespace bubblescope::layout {

const char* backendName(Backend backend) {
  switch (backend) {
    case Backend::kCpu:
      return "cpu";
    case Backend::kCuda:
      return "cuda";
    case Backend::kAuto:
      return "auto";
  }
  return "unknown";
}

Result<Backend> parseBackend(const std::string& name) {
  for (Backend b : {Backend::kCpu, Backend::kCuda, Backend::kAuto}) {
    if (name == backendName(b)) return b;
  }
  return Status::invalidArgument("unknown backend '" + name + "' (known: cpu, cuda, auto)");
}

const char* precisionName(Precision precision) {
  return precision == Precision::kBf16 ? "bf16" : "fp32";
}

Result<Precision> parsePrecision(const std::string& name) {
  for (Precision p : {Precision::kFp32, Precision::kBf16}) {
    if (name == precisionName(p)) return p;
  }
  return Status::invalidArgument("unknown precision '" + name + "' (known: fp32, bf16)");
}

ModelConfig defaultLayoutModel() {
  return modelPreset("tiny").value();
}

int64_t Layout::bucketElementCount(int32_t bytesPerElement) const {
  if (bucketElements) return *bucketElements;
  const double bytes = bucketMb * 1024.0 * 1024.0;
  return std::max<int64_t>(1, static_cast<int64_t>(std::floor(bytes / bytesPerElement)));
}

namespace {

// The shortest text that reads back as `v` ("1.5", "-1", "nan").
std::string shortestText(double v) {
  char text[32];
  const auto [end, ec] = std::to_chars(text, text + sizeof(text), v);
  return std::string(text, ec == std::errc() ? end : text);
}

}  // namespace

namespace detail {
namespace {

// The all-reduce algorithm, the nodes and the emulated inter-node link
// (all_reduce, ranks_per_node, inter_node_gbps, inter_node_latency_us).
std::vector<std::string> nodeProblems(const Layout& l, const std::set<std::string>& unparsed) {
  std::vector<std::string> problems;
  auto add = [&](std::string p) { problems.push_back(std::move(p)); };
  auto have = [&](std::initializer_list<const char*> keys) {
    return std::none_of(keys.begin(), keys.end(),
                        [&](const char* k) { return unparsed.count(k) > 0; });
  };
  auto str = [](auto v) { return std::to_string(v); };
  const int32_t k = l.ranksPerNode;
  const bool emulatedNodes = k >= 1 && have({"ranks_per_node"});
  if (have({"ranks_per_node"}) && k < 0) {
    add("ranks_per_node must be >= 0 (0: the nodes are the hosts), got " + str(k));
  }
  for (const auto& [key, value] : {std::pair{"inter_node_gbps", l.interNodeGbps},
                                   std::pair{"inter_node_latency_us", l.interNodeLatencyUs}}) {
    if (have({key}) && !(value >= 0.0 && std::isfinite(value))) {
      add(std::string(key) + " must be a finite number >= 0, got " + shortestText(value));
    }
  }
  if (emulatedNodes && (!l.hosts.empty() || !l.hostfile.empty())) {
    add("ranks_per_node " + str(k) +
        " emulates nodes on one machine; with hosts or hostfile the nodes are the hosts "
        "(leave ranks_per_node 0)");
  }
  const bool degreesOk = l.dp >= 1 && l.tp >= 1 && l.pp >= 1 && have({"dp", "tp", "pp"});
  if (emulatedNodes && degreesOk) {
    const int64_t group = int64_t{l.tp} * l.pp;
    if (l.worldSize() % k != 0) {
      add("ranks_per_node " + str(k) + " does not divide the world's " + str(l.worldSize()) +
          " ranks (dp " + str(l.dp) + " x tp " + str(l.tp) + " x pp " + str(l.pp) + ")");
    } else if (k % group != 0) {
      add("ranks_per_node " + str(k) + " is not a multiple of tp x pp = " + str(group) +
          " (a node holds whole tp and pp groups, so only dp crosses nodes)");
    }
  }
  const bool link = l.emulatesInterNodeLink() && have({"inter_node_gbps", "inter_node_latency_us"});
  if (link && have({"ranks_per_node"}) && k == 0) {
    add("inter_node_gbps and inter_node_latency_us emulate the link between emulated nodes: "
        "they need ranks_per_node K >= 1");
  }
  const bool hierarchical =
      l.allReduce == AllReduceAlgorithm::kHierarchical && have({"all_reduce"});
  const std::string zero = str(zeroStageNumber(l.zeroStage));
  if (have({"zero_stage"}) && l.zeroStage != ZeroStage::kNone) {
    if (hierarchical) {
      add("all_reduce hierarchical needs zero_stage 0 (ZeRO 1-3 reduce-scatter their buckets), "
          "got zero_stage " +
          zero);
    }
    if (link) {
      add("the emulated inter-node link paces all-reduces only: it needs zero_stage 0, got "
          "zero_stage " +
          zero);
    }
  }
  if (have({"grad_compression"}) && l.gradCompression.compresses()) {
    if (hierarchical) {
      add("all_reduce hierarchical reduces uncompressed buckets, got grad_compression " +
          l.gradCompression.toString());
    }
    if (link && l.gradCompression.kind == GradCompression::kTopK) {
      add("the emulated inter-node link paces all-reduces only, and grad_compression " +
          l.gradCompression.toString() + " all-gathers its sets");
    }
  }
  if (have({"ep"}) && l.ep > 1 && (hierarchical || link)) {
    add("ep " + str(l.ep) +
        " does not combine with all_reduce hierarchical or an emulated inter-node link (the "
        "experts' gradients reduce over their own groups)");
  }
  return problems;
}

}  // namespace

std::vector<std::string> collectProblems(const Layout& l, std::optional<int32_t> worldSize,
                                         const std::set<std::string>& unparsed) {
  std::vector<std::string> problems;
  auto add = [&](std::string p) { problems.push_back(std::move(p)); };
  // A check runs only when every key it reads was parsed: a key that failed to
  // parse already has its own problem and holds a default, not the user's value.
  auto have = [&](std::initializer_list<const char*> keys) {
    return std::none_of(keys.begin(), keys.end(),
                        [&](const char* k) { return unparsed.count(k) > 0; });
  };
  auto str = [](auto v) { return std::to_string(v); };
  auto atLeastOne = [&](const char* key, int64_t v) {
    if (have({key}) && v < 1) add(std::string(key) + " must be >= 1, got " + str(v));
  };
  atLeastOne("dp", l.dp);
  atLeastOne("tp", l.tp);
  atLeastOne("pp", l.pp);
  atLeastOne("ep", l.ep);
  atLeastOne("virtual_chunks", l.virtualChunks);
  atLeastOne("micro_batches", l.microBatches);
  atLeastOne("micro_batch_size", l.microBatchSize);
  atLeastOne("steps", l.steps);
  const bool degreesOk = l.dp >= 1 && l.tp >= 1 && l.pp >= 1 && have({"dp", "tp", "pp"});

  if (degreesOk && l.worldSize() > std::numeric_limits<int32_t>::max()) {
    add("world size dp " + str(l.dp) + " x tp " + str(l.tp) + " x pp " + str(l.pp) + " = " +
        str(l.worldSize()) + " is more ranks than MPI can number (2147483647)");
  } else if (worldSize && degreesOk && *worldSize != l.worldSize()) {
    add("world size " + str(*worldSize) + " does not match dp " + str(l.dp) + " x tp " + str(l.tp) +
        " x pp " + str(l.pp) + " = " + str(l.worldSize()));
  }
  if (l.globalBatch && have({"global_batch", "micro_batch_size", "micro_batches", "dp"})) {
    const int64_t expected = globalBatchSequences(l);
    if (*l.globalBatch != expected) {
      add("global_batch " + str(*l.globalBatch) + " does not equal micro_batch_size " +
          str(l.microBatchSize) + " x micro_batches " + str(l.microBatches) + " x dp " + str(l.dp) +
          " = " + str(expected));
    }
  }

  // Schedule requirements; see schedule.h for their sources.
  if (have({"schedule", "virtual_chunks"})) {
    const bool isInterleaved = l.schedule == ScheduleKind::kInterleaved;
    if (!isInterleaved && l.virtualChunks > 1) {
      add("virtual_chunks " + str(l.virtualChunks) + " needs schedule interleaved, got " +
          scheduleKindName(l.schedule));
    }
    if (isInterleaved && l.virtualChunks == 1) {
      add("schedule interleaved needs virtual_chunks >= 2 (with 1 chunk it is 1f1b)");
    }
  }
  if (have({"schedule", "micro_batches", "pp"}) && l.pp >= 1 && l.microBatches >= 1) {
    if (l.schedule == ScheduleKind::kInterleaved && l.microBatches % l.pp != 0) {
      add("schedule interleaved needs micro_batches divisible by pp (Megatron-LM), got "
          "micro_batches " +
          str(l.microBatches) + ", pp " + str(l.pp));
    }
    if (l.schedule == ScheduleKind::kZeroBubbleH1 && l.microBatches < l.pp) {
      add("schedule zb-h1 needs micro_batches >= pp, got micro_batches " + str(l.microBatches) +
          ", pp " + str(l.pp));
    }
  }

  // Model and how it is cut.
  if (have({"model"})) {
    const Status modelStatus = validate(l.model);
    if (!modelStatus.isOk()) add(modelStatus.message());
    const ModelConfig& m = l.model;
    if (have({"pp", "virtual_chunks"}) && l.pp >= 1 && l.virtualChunks >= 1 &&
        m.numLayers < l.pp * l.virtualChunks) {
      add("the model has " + str(m.numLayers) + " layers, fewer than pp " + str(l.pp) +
          " x virtual_chunks " + str(l.virtualChunks) + " = " + str(l.pp * l.virtualChunks));
    }
    if (have({"tp"}) && l.tp > 1) {
      auto divisible = [&](const char* what, int64_t size) {
        if (size % l.tp != 0) {
          add(std::string(what) + " " + str(size) + " is not divisible by tp " + str(l.tp));
        }
      };
      divisible("heads", m.numHeads);
      divisible("hidden", m.hidden);
      divisible("MLP size", int64_t{m.mlpRatio} * m.hidden);
    }
    if (m.hasMoe() && have({"tp"}) && l.tp > 1) {
      add("mixture of experts (experts " + str(m.experts) + ") does not combine with tp " +
          str(l.tp) + " (use dp and ep)");
    }
    if (have({"ep"}) && l.ep > 1) {
      if (!m.hasMoe()) {
        add("ep " + str(l.ep) + " needs a mixture-of-experts model (experts > 0)");
      } else if (m.experts % l.ep != 0) {
        add("experts " + str(m.experts) + " is not divisible by ep " + str(l.ep));
      }
      if (have({"dp"}) && l.dp >= 1 && l.dp % l.ep != 0) {
        add("dp " + str(l.dp) + " is not divisible by ep " + str(l.ep) +
            " (the experts split over ep ranks of the dp group)");
      }
      if (have({"zero_stage"}) && shardsGradients(l.zeroStage)) {
        add("ep " + str(l.ep) + " supports zero_stage 0 or 1, got " +
            str(zeroStageNumber(l.zeroStage)));
      }
    }
    if (!l.stageLayers.empty() && have({"stage_layers", "pp", "virtual_chunks"})) {
      const int64_t expected = int64_t{l.pp} * l.virtualChunks;
      if (static_cast<int64_t>(l.stageLayers.size()) != expected) {
        add("stage_layers has " + str(l.stageLayers.size()) +
            " entries, expected pp x virtual_chunks = " + str(expected));
      }
      int64_t sum = 0;
      bool positive = true;
      for (int32_t n : l.stageLayers) {
        sum += n;
        positive = positive && n >= 1;
      }
      if (!positive) add("stage_layers entries must be >= 1");
      if (sum != m.numLayers) {
        add("stage_layers sums to " + str(sum) + " but the model has " + str(m.numLayers) +
            " layers");
      }
    }
  }

  if (have({"learning_rate"}) && !(l.learningRate > 0 && std::isfinite(l.learningRate))) {
    add("learning_rate must be positive, got " + str(l.learningRate));
  }
  if (l.bucketElements) {
    if (have({"bucket_elements"}) && *l.bucketElements < 1) {
      add("bucket_elements must be >= 1, got " + str(*l.bucketElements));
    }
  } else if (have({"bucket_mb"}) && !(l.bucketMb > 0 && std::isfinite(l.bucketMb))) {
    add("bucket_mb must be positive, got " + str(l.bucketMb));
  }
  if (l.gradCompression.compresses() && l.zeroStage != ZeroStage::kNone &&
      have({"grad_compression", "zero_stage"})) {
    add("grad_compression " + l.gradCompression.toString() +
        " needs zero_stage 0 (ZeRO 1-3 reduce-scatter their buckets uncompressed), got "
        "zero_stage " +
        str(zeroStageNumber(l.zeroStage)));
  }
  for (std::string& p : nodeProblems(l, unparsed)) add(std::move(p));
  if (!l.hosts.empty() && !l.hostfile.empty()) {
    add("hosts and hostfile are both given; use one");
  }
  for (const std::string& h : l.hosts) {
    if (h.empty()) add("hosts has an empty entry");
  }
  return problems;
}

Status joinProblems(const std::vector<std::string>& problems) {
  if (problems.empty()) return Status::ok();
  std::string msg = "invalid layout: ";
  for (size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
  return Status::invalidArgument(msg);
}

}  // namespace detail

std::vector<std::string> layoutProblems(const Layout& layout, std::optional<int32_t> worldSize) {
  return detail::collectProblems(layout, worldSize, {});
}

Status validate(const Layout& layout, std::optional<int32_t> worldSize) {
  return detail::joinProblems(layoutProblems(layout, worldSize));
}

std::string interNodeLinkLine(const Layout& l) {
  if (!l.emulatesInterNodeLink()) return "";
  return "inter-node link emulated: " + shortestText(l.interNodeGbps) + " Gb/s, " +
         shortestText(l.interNodeLatencyUs) + " us (nodes of " + std::to_string(l.ranksPerNode) +
         " ranks)";
}

Result<Schedule> scheduleFor(const Layout& layout) {
  BS_RETURN_IF_ERROR(validate(layout));
  return makeSchedule(layout.schedule, layout.pp, layout.microBatches, layout.virtualChunks,
                      layout.zeroStage);
}

}  // namespace bubblescope::layout
