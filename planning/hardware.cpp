#include "planning/hardware.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/layout/embedded_profiles.h"

namespace bubblescope::layout {
namespace {

// Reads the keys of one profile, collecting every problem.
class ProfileReader {
 public:
  explicit ProfileReader(const nlohmann::json& root) : root_(root) {}

  const nlohmann::json* object(const std::string& key) {
    if (!root_.contains(key)) {
      problem(key + " is missing");
      return nullptr;
    }
    if (!root_[key].is_object()) {
      problem(key + " must be an object");
      return nullptr;
    }
    return &root_[key];
  }

  double positive(const nlohmann::json* o, const std::string& path, const std::string& key,
                  bool fraction = false) {
    if (o == nullptr) return 0;
    const std::string name = path.empty() ? key : path + "." + key;
    if (!o->contains(key)) {
      problem(name + " is missing");
      return 0;
    }
    const nlohmann::json& v = (*o)[key];
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>())) {
      problem(name + " must be a positive number");
      return 0;
    }
    const double x = v.get<double>();
    if (fraction && x > 1) problem(name + " must be at most 1, got " + std::to_string(x));
    return x;
  }

  double nonNegative(const nlohmann::json* o, const std::string& path, const std::string& key) {
    if (o == nullptr) return 0;
    const std::string name = path + "." + key;
    if (!o->contains(key)) {
      problem(name + " is missing");
      return 0;
    }
    const nlohmann::json& v = (*o)[key];
    if (!v.is_number() || !(v.get<double>() >= 0) || !std::isfinite(v.get<double>())) {
      problem(name + " must be a non-negative number");
      return 0;
    }
    return v.get<double>();
  }

  int32_t count(const nlohmann::json* o, const std::string& path, const std::string& key) {
    if (o == nullptr) return 0;
    const std::string name = path + "." + key;
    if (!o->contains(key) || !(*o)[key].is_number_integer() || (*o)[key].get<int64_t>() < 1 ||
        (*o)[key].get<int64_t>() > 1000000) {
      problem(name + " must be a positive integer");
      return 0;
    }
    return (*o)[key].get<int32_t>();
  }

  std::string text(const nlohmann::json* o, const std::string& path, const std::string& key) {
    if (o == nullptr) return "";
    const std::string name = path.empty() ? key : path + "." + key;
    if (!o->contains(key) || !(*o)[key].is_string() || (*o)[key].get<std::string>().empty()) {
      problem(name + " must be a non-empty string");
      return "";
    }
    return (*o)[key].get<std::string>();
  }

  void problem(const std::string& p) { problems_ += (problems_.empty() ? "" : "; ") + p; }
  const std::string& problems() const { return problems_; }

 private:
  const nlohmann::json& root_;
  std::string problems_;
};

void checkKnownKeys(ProfileReader& r, const nlohmann::json& o, const std::string& path,
                    std::initializer_list<const char*> known) {
  for (const auto& [key, value] : o.items()) {
    bool found = false;
    for (const char* k : known) found = found || key == k;
    if (!found) r.problem("unknown key " + (path.empty() ? key : path + "." + key));
  }
}

}  // namespace

double HardwareProfile::peakFlops(const std::string& dtype) const {
  const auto it = peakTflops.find(dtype);
  return it == peakTflops.end() ? 0.0 : it->second * 1e12;
}

double HardwareProfile::nicBytesPerGpu() const {
  return gpusPerNode > 0 ? nicsPerNode * nicGbps * 1e9 / 8.0 / gpusPerNode : 0.0;
}

Result<HardwareProfile> hardwareFromJson(const nlohmann::json& j, const std::string& where) {
  const std::string prefix = "hardware profile " + where + ": ";
  if (!j.is_object()) return Status::invalidArgument(prefix + "must be a JSON object");
  ProfileReader r(j);
  HardwareProfile h;
  checkKnownKeys(r, j, "",
                 {"name", "description", "device", "gemm", "memory_bound_efficiency", "node",
                  "network", "collectives", "comment", "sources"});
  h.name = r.text(&j, "", "name");
  if (j.contains("description") && j["description"].is_string()) {
    h.description = j["description"].get<std::string>();
  }
  if (const nlohmann::json* d = r.object("device")) {
    checkKnownKeys(r, *d, "device",
                   {"name", "sms", "peak_tflops", "memory_gib", "memory_bandwidth_gbs"});
    h.deviceName = r.text(d, "device", "name");
    h.sms = r.count(d, "device", "sms");
    h.memoryGiB = r.positive(d, "device", "memory_gib");
    h.memoryBandwidthGBs = r.positive(d, "device", "memory_bandwidth_gbs");
    if (!d->contains("peak_tflops") || !(*d)["peak_tflops"].is_object() ||
        (*d)["peak_tflops"].empty()) {
      r.problem("device.peak_tflops must be an object of dtype: TFLOP/s");
    } else {
      for (const auto& [dtype, v] : (*d)["peak_tflops"].items()) {
        if (dtype != "fp32" && dtype != "tf32" && dtype != "fp16" && dtype != "bf16" &&
            dtype != "fp8") {
          r.problem("device.peak_tflops." + dtype + ": unknown dtype (fp32, tf32, fp16, bf16, fp8)");
          continue;
        }
        h.peakTflops[dtype] = r.positive(&(*d)["peak_tflops"], "device.peak_tflops", dtype);
      }
    }
  }
  if (const nlohmann::json* g = r.object("gemm")) {
    checkKnownKeys(r, *g, "gemm", {"max_efficiency", "tiles", "kernel_overhead_us"});
    h.gemmMaxEfficiency = r.positive(g, "gemm", "max_efficiency", true);
    h.kernelOverheadUs = r.nonNegative(g, "gemm", "kernel_overhead_us");
    const bool ok = g->contains("tiles") && (*g)["tiles"].is_array() && !(*g)["tiles"].empty();
    if (ok) {
      for (const nlohmann::json& t : (*g)["tiles"]) {
        if (!t.is_array() || t.size() != 2 || !t[0].is_number_integer() ||
            !t[1].is_number_integer() || t[0].get<int64_t>() < 1 || t[1].get<int64_t>() < 1 ||
            t[0].get<int64_t>() > 4096 || t[1].get<int64_t>() > 4096) {
          r.problem("gemm.tiles must be [M, N] pairs of positive integers");
          break;
        }
        h.gemmTiles.emplace_back(t[0].get<int32_t>(), t[1].get<int32_t>());
      }
    } else {
      r.problem("gemm.tiles must be a non-empty array of [M, N] tile sizes");
    }
  }
  h.memoryBoundEfficiency = r.positive(&j, "", "memory_bound_efficiency", true);
  if (const nlohmann::json* n = r.object("node")) {
    checkKnownKeys(r, *n, "node", {"name", "gpus", "nvlink_gbs", "nvlink_latency_us"});
    h.nodeName = r.text(n, "node", "name");
    h.gpusPerNode = r.count(n, "node", "gpus");
    h.nvlinkGBs = r.positive(n, "node", "nvlink_gbs");
    h.nvlinkLatencyUs = r.nonNegative(n, "node", "nvlink_latency_us");
  }
  if (const nlohmann::json* n = r.object("network")) {
    checkKnownKeys(r, *n, "network", {"nics", "nic_gbps", "latency_us"});
    h.nicsPerNode = r.count(n, "network", "nics");
    h.nicGbps = r.positive(n, "network", "nic_gbps");
    h.networkLatencyUs = r.nonNegative(n, "network", "latency_us");
  }
  if (const nlohmann::json* c = r.object("collectives")) {
    checkKnownKeys(r, *c, "collectives", {"nvlink_efficiency", "network_efficiency"});
    h.nvlinkEfficiency = r.positive(c, "collectives", "nvlink_efficiency", true);
    h.networkEfficiency = r.positive(c, "collectives", "network_efficiency", true);
  }
  if (!r.problems().empty()) return Status::invalidArgument(prefix + r.problems());
  return h;
}

std::vector<std::string> hardwareProfileNames() {
  std::vector<std::string> names;
  for (const EmbeddedJson& f : embeddedHardwareProfiles()) names.push_back(f.stem);
  return names;
}

Result<HardwareProfile> loadHardware(const std::string& nameOrPath) {
  std::string known;
  for (const EmbeddedJson& f : embeddedHardwareProfiles()) {
    if (f.stem == nameOrPath) {
      const nlohmann::json j = nlohmann::json::parse(f.text, nullptr, false, true);
      return hardwareFromJson(j, f.stem);
    }
    known += (known.empty() ? "" : ", ") + f.stem;
  }
  std::ifstream in(nameOrPath);
  if (!in) {
    return Status::invalidArgument("unknown hardware '" + nameOrPath +
                                   "': not a built-in profile (" + known + ") nor a readable file");
  }
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false, true);
  if (j.is_discarded()) {
    return Status::invalidArgument("hardware profile " + nameOrPath + ": not valid JSON");
  }
  return hardwareFromJson(j, nameOrPath);
}

}  // namespace bubblescope::layout
