// HardwareProfile: one GPU in its usual node and network, as data
// (resources/hardware/*.json; the schema and every number's source are in
// docs/hardware.md). The cluster cost model (cluster_cost.h) prices compute,
// memory traffic and collectives from it.
//
// Pure value type (standard library + JSON). Loading reports every problem
// of a profile in one message naming the file.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace bubblescope::layout {

struct HardwareProfile {
  std::string name;         // "a100-80g": the device in its usual node
  std::string description;  // one line
  // Device.
  std::string deviceName;                  // "A100-SXM4-80GB"
  int32_t sms = 0;                         // streaming multiprocessors (GEMM waves)
  std::map<std::string, double> peakTflops;  // dense peak by dtype: fp32, tf32, fp16, bf16, fp8
  double memoryGiB = 0;                    // HBM capacity per GPU
  double memoryBandwidthGBs = 0;           // HBM bandwidth, 10^9 bytes/s
  // GEMM efficiency by shape: a GEMM reaches maxEfficiency of the dtype's
  // peak on its useful tiles; the kernel picks the tile (M x N) of `tiles`
  // that wastes the least to tile and wave quantization (NVIDIA's Matrix
  // Multiplication Background guide); every kernel adds kernelOverheadUs.
  double gemmMaxEfficiency = 0;
  std::vector<std::pair<int32_t, int32_t>> gemmTiles;
  double kernelOverheadUs = 0;
  // Memory-bound kernels (layer norm, softmax, GeLU, dropout, the
  // optimizer) reach this fraction of the HBM bandwidth.
  double memoryBoundEfficiency = 0;
  // Node.
  std::string nodeName;      // "DGX A100 640GB"
  int32_t gpusPerNode = 0;
  double nvlinkGBs = 0;      // per GPU, per direction, 10^9 bytes/s
  double nvlinkLatencyUs = 0;  // one ring step inside the node
  // Network.
  int32_t nicsPerNode = 0;
  double nicGbps = 0;        // per NIC, 10^9 bit/s
  double networkLatencyUs = 0;  // one ring step or transfer between nodes
  // Collectives: achieved bus bandwidth as a fraction of the link's.
  double nvlinkEfficiency = 0;
  double networkEfficiency = 0;

  // Peak FLOP/s of a dtype; 0 when the profile has none.
  double peakFlops(const std::string& dtype) const;
  double memoryBytes() const { return memoryGiB * 1024.0 * 1024.0 * 1024.0; }
  // The network bytes/s one GPU's share of the node's NICs carries.
  double nicBytesPerGpu() const;

  bool operator==(const HardwareProfile&) const = default;
};

// Parses a profile object (keys in docs/hardware.md); `where` names it in
// errors ("a100-80g", a path). Every problem in one message.
Result<HardwareProfile> hardwareFromJson(const nlohmann::json& j, const std::string& where);
// The names of the built-in profiles (resources/hardware), in file order.
std::vector<std::string> hardwareProfileNames();
// A built-in profile by name, else a JSON file at that path; an unknown
// name that is no file is an error listing the built-in names.
Result<HardwareProfile> loadHardware(const std::string& nameOrPath);

}  // namespace bubblescope::layout
