// Layout: everything a training run is described by, its JSON form and its
// validation. docs/layout-format.md documents every key.
//
// Pure value type (standard library + JSON). Errors are values: parsing and
// validation report EVERY problem of a layout in one message, problems joined
// by "; ", so a user fixes a file in one round.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/layout/grad_comm.h"
#include "engine/layout/model_config.h"
#include "engine/layout/schedule.h"
#include "engine/layout/zero_stage.h"

namespace bubblescope::layout {

enum class Backend : uint8_t { kCpu = 0, kCuda = 1, kAuto = 2 };
const char* backendName(Backend backend);  // "cpu", "cuda", "auto"
Result<Backend> parseBackend(const std::string& name);

// The matrix products' operands (docs/gpu.md, "Precision"): fp32, or bf16
// operands with fp32 accumulation, master weights, gradients and optimizer
// state (the cuda backend only).
enum class Precision : uint8_t { kFp32 = 0, kBf16 = 1 };
const char* precisionName(Precision precision);  // "fp32", "bf16"
Result<Precision> parsePrecision(const std::string& name);

// The model a layout gets when it names none: the "tiny" preset.
ModelConfig defaultLayoutModel();

struct Layout {
  ModelConfig model = defaultLayoutModel();
  int32_t dp = 1;
  int32_t tp = 1;
  int32_t pp = 1;
  // Expert parallelism: the MoE experts split over ep ranks of the dp group
  // (ep divides dp and the experts; docs/parallel.md). Not a world factor.
  int32_t ep = 1;
  ZeroStage zeroStage = ZeroStage::kNone;  // over the dp group
  ScheduleKind schedule = ScheduleKind::kOneFOneB;
  int32_t virtualChunks = 1;   // v: model chunks per pipeline stage (interleaved only)
  int32_t microBatches = 1;    // m: micro-batches per step = gradient-accumulation steps
  int32_t microBatchSize = 1;  // sequences per micro-batch
  // Sequences per step over all dp ranks; when set it must equal
  // microBatchSize × microBatches × dp (issue 4).
  std::optional<int64_t> globalBatch;
  int32_t steps = 10;
  uint64_t seed = 1337;
  Backend backend = Backend::kCpu;
  Precision precision = Precision::kFp32;  // key "precision", written only when bf16
  bool overlap = true;  // overlap DP gradient buckets with backward
  // Gradient bucket: bucketMb mebibytes (2^20 bytes, as PyTorch DDP's
  // bucket_cap_mb), or exactly bucketElements elements when that is set.
  double bucketMb = 25.0;
  std::optional<int64_t> bucketElements;
  // How each dp gradient bucket is compressed for its reduction (grad_comm.h;
  // anything but none needs zero_stage 0).
  GradCompressionSpec gradCompression;
  // How each dp gradient bucket is all-reduced (grad_comm.h): a flat ring, or
  // hierarchical (reduce-scatter inside each node, all-reduce of the shards
  // across nodes, all-gather inside; zero_stage 0, no compression, no ep).
  AllReduceAlgorithm allReduce = AllReduceAlgorithm::kFlat;
  // Nodes: 0 = the hosts the ranks run on (MPI_COMM_TYPE_SHARED); K >= 1 =
  // emulated nodes of K consecutive world ranks on this machine (K divides
  // the world and is a multiple of tp x pp, so only dp crosses nodes).
  int32_t ranksPerNode = 0;
  // The emulated link between those nodes (K >= 1): every all-reduce message
  // between nodes is paced to interNodeGbps (10^9 bit/s; 0 = not paced) plus
  // interNodeLatencyUs (engine/parallel/link_pacer.h).
  double interNodeGbps = 0.0;
  double interNodeLatencyUs = 0.0;
  bool recompute = false;  // activation checkpointing: keep stage inputs, recompute forward
  // Explicit layers per virtual stage (pp × v entries, virtual-stage order);
  // empty = split by cost (stage_split.h).
  std::vector<int32_t> stageLayers;
  std::vector<std::string> hosts;  // "host" or "host:slots", passed to mpirun
  std::string hostfile;            // or a hostfile path; at most one of the two
  double learningRate = 3e-4;
  std::string dataFile;  // empty = the built-in synthetic corpus

  // In 64 bits: dp x tp x pp of int32 degrees can overflow 32 bits.
  int64_t worldSize() const { return int64_t{dp} * tp * pp; }
  // Gradient-bucket capacity in elements of `bytesPerElement` bytes (>= 1).
  int64_t bucketElementCount(int32_t bytesPerElement) const;
  GradSync gradSync() const { return gradSyncFor(zeroStage); }
  // An inter-node link is emulated (bandwidth or latency set).
  bool emulatesInterNodeLink() const { return interNodeGbps > 0.0 || interNodeLatencyUs > 0.0; }

  bool operator==(const Layout&) const = default;
};

// Every problem of a layout, each a short sentence naming the keys involved.
// `worldSize` is the number of processes actually launched (mpirun -n), when
// known; it must equal dp × tp × pp.
std::vector<std::string> layoutProblems(const Layout& layout,
                                        std::optional<int32_t> worldSize = std::nullopt);
// ok, or InvalidArgument "invalid layout: <problem>; <problem>; ...".
Status validate(const Layout& layout, std::optional<int32_t> worldSize = std::nullopt);

// Parses a layout object (snake_case keys, see docs/layout-format.md) and
// validates it. Unknown keys are errors naming the key; "comment" and
// "_comment" are ignored. Missing keys keep Layout's defaults. The message
// lists parse and validation problems together.
Result<Layout> layoutFromJson(const nlohmann::json& j,
                              std::optional<int32_t> worldSize = std::nullopt);
// The same from JSON text; // and /* */ comments are allowed.
Result<Layout> layoutFromString(const std::string& text,
                                std::optional<int32_t> worldSize = std::nullopt);
// The same from a file; the message names the file.
Result<Layout> layoutFromFile(const std::string& path,
                              std::optional<int32_t> worldSize = std::nullopt);
// Every key, defaults included, so a saved layout says exactly what ran.
// layoutFromJson(toJson(l)) == l for any valid l.
nlohmann::json toJson(const Layout& layout);

// "inter-node link emulated: X Gb/s, Y us (nodes of K ranks)" when the layout
// emulates one (run's header, report, info), else "".
std::string interNodeLinkLine(const Layout& layout);

// The schedule of this layout (kind, pp, micro-batches, chunks, gradient
// collective by ZeRO stage).
Result<Schedule> scheduleFor(const Layout& layout);

}  // namespace bubblescope::layout
