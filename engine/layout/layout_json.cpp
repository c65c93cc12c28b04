// JSON form of a Layout: layoutFromJson / layoutFromString / layoutFromFile / toJson.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "engine/layout/layout.h"
#include "engine/layout/layout_problems.h"
#include "engine/layout/strict_json.h"

namespace bubblescope::layout {
namespace {

using nlohmann::json;

// Levenshtein distance, for "did you mean" on unknown keys.
size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string unknownKeyProblem(const std::string& prefix, const std::string& key,
                              const std::vector<std::string>& known) {
  std::string best;
  size_t bestDistance = std::numeric_limits<size_t>::max();
  for (const std::string& k : known) {
    const size_t d = editDistance(key, k);
    if (d < bestDistance) bestDistance = d, best = k;
  }
  std::string p = "unknown key '" + prefix + key + "'";
  if (bestDistance <= std::max<size_t>(2, key.size() / 3)) {
    p += " (did you mean '" + prefix + best + "'?)";
  }
  return p;
}

bool isCommentKey(const std::string& key) {
  return key == "comment" || key == "_comment";
}

// Parses one layout object, collecting problems instead of stopping at the first.
class LayoutParser {
 public:
  Result<Layout> parse(const json& j, std::optional<int32_t> worldSize) {
    if (!j.is_object()) return Status::invalidArgument("a layout must be a JSON object");
    const auto handlers = makeHandlers();
    std::vector<std::string> known;
    for (const auto& [key, handler] : handlers) known.push_back(key);
    for (const auto& [key, value] : j.items()) {
      if (isCommentKey(key)) continue;
      auto it = handlers.find(key);
      if (it == handlers.end()) {
        problems_.push_back(unknownKeyProblem("", key, known));
        continue;
      }
      if (!it->second(value)) unparsed_.insert(key);
    }
    for (std::string& p : detail::collectProblems(layout_, worldSize, unparsed_)) {
      problems_.push_back(std::move(p));
    }
    BS_RETURN_IF_ERROR(detail::joinProblems(problems_));
    return layout_;
  }

 private:
  using Handler = std::function<bool(const json&)>;

  bool fail(const std::string& problem) {
    problems_.push_back(problem);
    return false;
  }

  Handler intField(const std::string& key, int32_t& out) {
    return [this, key, &out](const json& v) {
      Result<int32_t> value = jsonInteger<int32_t>(key, v);
      if (!value.isOk()) return fail(value.status().message());
      out = *value;
      return true;
    };
  }
  Handler optionalInt64(const std::string& key, std::optional<int64_t>& out) {
    return [this, key, &out](const json& v) {
      if (v.is_null()) return out.reset(), true;
      Result<int64_t> value = jsonInteger<int64_t>(key, v);
      if (!value.isOk()) return fail(value.status().message());
      out = *value;
      return true;
    };
  }
  Handler numberField(const std::string& key, double& out) {
    return [this, key, &out](const json& v) {
      Result<double> value = jsonNumber(key, v);
      if (!value.isOk()) return fail(value.status().message());
      out = *value;
      return true;
    };
  }
  Handler boolField(const std::string& key, bool& out) {
    return [this, key, &out](const json& v) {
      if (!v.is_boolean()) return fail(key + " must be true or false, got " + v.dump());
      out = v.get<bool>();
      return true;
    };
  }
  Handler stringField(const std::string& key, std::string& out) {
    return [this, key, &out](const json& v) {
      if (!v.is_string()) return fail(key + " must be a string, got " + v.dump());
      out = v.get<std::string>();
      return true;
    };
  }

  bool parseModel(const json& v) {
    if (v.is_string()) {
      Result<ModelConfig> preset = modelPreset(v.get<std::string>());
      if (!preset.isOk()) return fail("model: " + preset.status().message());
      layout_.model = preset.value();
      return true;
    }
    if (!v.is_object()) return fail("model must be a preset name or an object, got " + v.dump());
    static const std::vector<std::string> kModelKeys = {
        "preset",    "vocab_size", "seq_len", "layers",          "hidden",    "heads",
        "mlp_ratio", "experts",    "top_k",   "capacity_factor", "moe_every", "aux_loss_coef"};
    json sizes = json::object();
    bool ok = true;
    for (const auto& [key, value] : v.items()) {
      if (isCommentKey(key)) continue;
      if (std::find(kModelKeys.begin(), kModelKeys.end(), key) == kModelKeys.end()) {
        ok = fail(unknownKeyProblem("model.", key, kModelKeys));
        continue;
      }
      sizes[key] = value;
    }
    if (!ok) return false;
    Result<ModelConfig> model = modelConfigFromJson(sizes);
    if (!model.isOk()) return fail(model.status().message());
    layout_.model = model.value();
    return true;
  }

  bool parseStageLayers(const json& v) {
    if (!v.is_array()) return fail("stage_layers must be a list of integers, got " + v.dump());
    std::vector<int32_t> split;
    for (const json& e : v) {
      if (!e.is_number()) return fail("stage_layers must be a list of integers, got " + v.dump());
      Result<int32_t> layers = jsonInteger<int32_t>("stage_layers", e);
      if (!layers.isOk()) return fail(layers.status().message());
      split.push_back(*layers);
    }
    layout_.stageLayers = std::move(split);
    return true;
  }

  bool parseHosts(const json& v) {
    std::vector<std::string> hosts;
    if (v.is_string()) {  // "a,b:2" as mpirun --host takes it
      std::stringstream in(v.get<std::string>());
      for (std::string h; std::getline(in, h, ',');) hosts.push_back(h);
    } else if (v.is_array()) {
      for (const json& e : v) {
        if (!e.is_string()) return fail("hosts must be a list of strings, got " + v.dump());
        hosts.push_back(e.get<std::string>());
      }
    } else {
      return fail("hosts must be a list of strings, got " + v.dump());
    }
    layout_.hosts = std::move(hosts);
    return true;
  }

  std::map<std::string, Handler> makeHandlers() {
    Layout& l = layout_;
    return {
        {"model", [this](const json& v) { return parseModel(v); }},
        {"dp", intField("dp", l.dp)},
        {"tp", intField("tp", l.tp)},
        {"pp", intField("pp", l.pp)},
        {"ep", intField("ep", l.ep)},
        {"zero_stage",
         [this](const json& v) {
           int32_t number = 0;
           if (!intField("zero_stage", number)(v)) return false;
           Result<ZeroStage> stage = zeroStageFromNumber(number);
           if (!stage.isOk()) return fail(stage.status().message());
           layout_.zeroStage = stage.value();
           return true;
         }},
        {"schedule",
         [this](const json& v) {
           if (!v.is_string()) return fail("schedule must be a string, got " + v.dump());
           Result<ScheduleKind> kind = parseScheduleKind(v.get<std::string>());
           if (!kind.isOk()) return fail(kind.status().message());
           layout_.schedule = kind.value();
           return true;
         }},
        {"virtual_chunks", intField("virtual_chunks", l.virtualChunks)},
        {"micro_batches", intField("micro_batches", l.microBatches)},
        {"micro_batch_size", intField("micro_batch_size", l.microBatchSize)},
        {"global_batch", optionalInt64("global_batch", l.globalBatch)},
        {"steps", intField("steps", l.steps)},
        {"seed",
         [this](const json& v) {
           Result<uint64_t> seed = jsonInteger<uint64_t>("seed", v);
           if (!seed.isOk()) return fail(seed.status().message());
           layout_.seed = *seed;
           return true;
         }},
        {"backend",
         [this](const json& v) {
           if (!v.is_string()) return fail("backend must be a string, got " + v.dump());
           Result<Backend> b = parseBackend(v.get<std::string>());
           if (!b.isOk()) return fail(b.status().message());
           layout_.backend = b.value();
           return true;
         }},
        {"precision",
         [this](const json& v) {
           if (!v.is_string()) return fail("precision must be a string, got " + v.dump());
           Result<Precision> p = parsePrecision(v.get<std::string>());
           if (!p.isOk()) return fail(p.status().message());
           layout_.precision = p.value();
           return true;
         }},
        {"overlap", boolField("overlap", l.overlap)},
        {"bucket_mb", numberField("bucket_mb", l.bucketMb)},
        {"bucket_elements", optionalInt64("bucket_elements", l.bucketElements)},
        {"grad_compression",
         [this](const json& v) {
           if (!v.is_string()) return fail("grad_compression must be a string, got " + v.dump());
           Result<GradCompressionSpec> spec = parseGradCompression(v.get<std::string>());
           if (!spec.isOk()) return fail(spec.status().message());
           layout_.gradCompression = spec.value();
           return true;
         }},
        {"all_reduce",
         [this](const json& v) {
           if (!v.is_string()) return fail("all_reduce must be a string, got " + v.dump());
           Result<AllReduceAlgorithm> a = parseAllReduceAlgorithm(v.get<std::string>());
           if (!a.isOk()) return fail(a.status().message());
           layout_.allReduce = a.value();
           return true;
         }},
        {"ranks_per_node", intField("ranks_per_node", l.ranksPerNode)},
        {"inter_node_gbps", numberField("inter_node_gbps", l.interNodeGbps)},
        {"inter_node_latency_us", numberField("inter_node_latency_us", l.interNodeLatencyUs)},
        {"recompute", boolField("recompute", l.recompute)},
        {"stage_layers", [this](const json& v) { return parseStageLayers(v); }},
        {"hosts", [this](const json& v) { return parseHosts(v); }},
        {"hostfile", stringField("hostfile", l.hostfile)},
        {"learning_rate", numberField("learning_rate", l.learningRate)},
        {"data_file", stringField("data_file", l.dataFile)},
    };
  }

  Layout layout_;
  std::vector<std::string> problems_;
  std::set<std::string> unparsed_;
};

}  // namespace

Result<Layout> layoutFromJson(const json& j, std::optional<int32_t> worldSize) {
  return LayoutParser().parse(j, worldSize);
}

Result<Layout> layoutFromString(const std::string& text, std::optional<int32_t> worldSize) {
  BS_ASSIGN_OR_RETURN(const json j, parseStrictJson(text, "layout"));
  return layoutFromJson(j, worldSize);
}

Result<Layout> layoutFromFile(const std::string& path, std::optional<int32_t> worldSize) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::invalidArgument("layout file " + path + " is a directory, not a file");
  }
  std::ifstream in(path);
  if (!in) return Status::notFound("cannot open layout file " + path);
  std::stringstream text;
  text << in.rdbuf();
  Result<Layout> layout = layoutFromString(text.str(), worldSize);
  if (!layout.isOk()) return layout.status().withContext(path);
  return layout;
}

json toJson(const Layout& l) {
  json model = toJson(l.model);
  if (l.model.preset == "custom") model.erase("preset");  // sizes alone mean custom
  json j = {
      {"model", model},
      {"dp", l.dp},
      {"tp", l.tp},
      {"pp", l.pp},
      {"zero_stage", zeroStageNumber(l.zeroStage)},
      {"schedule", scheduleKindName(l.schedule)},
      {"virtual_chunks", l.virtualChunks},
      {"micro_batches", l.microBatches},
      {"micro_batch_size", l.microBatchSize},
      {"global_batch", l.globalBatch ? json(*l.globalBatch) : json(nullptr)},
      {"steps", l.steps},
      {"seed", l.seed},
      {"backend", backendName(l.backend)},
      {"overlap", l.overlap},
      {"bucket_mb", l.bucketMb},
      {"bucket_elements", l.bucketElements ? json(*l.bucketElements) : json(nullptr)},
      {"grad_compression", l.gradCompression.toString()},
      {"all_reduce", allReduceAlgorithmName(l.allReduce)},
      {"ranks_per_node", l.ranksPerNode},
      {"inter_node_gbps", l.interNodeGbps},
      {"inter_node_latency_us", l.interNodeLatencyUs},
      {"recompute", l.recompute},
      {"stage_layers", l.stageLayers},
      {"hosts", l.hosts},
      {"hostfile", l.hostfile},
      {"learning_rate", l.learningRate},
      {"data_file", l.dataFile},
  };
  if (l.ep > 1) j["ep"] = l.ep;  // written only when used (as the MoE model keys)
  if (l.precision != Precision::kFp32) j["precision"] = precisionName(l.precision);
  return j;
}

}  // namespace bubblescope::layout
