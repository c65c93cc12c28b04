// Training checkpoints: one safetensors file holding every parameter under its
// model name ("h.3.attn.qkv.weight"), the AdamW moments as
// "optimizer.m.<name>" / "optimizer.v.<name>", and in __metadata__ the format,
// the model config (JSON), the step and the trainer's settings (JSON), so
// that a resumed run continues the uninterrupted one exactly.
//
// Devices: the file holds host fp32 values whatever the model trained on, so
// a checkpoint of a GPU run loads on the CPU and back. Tensors in device
// memory are downloaded to write (through the model's Backend, a
// synchronisation point) and uploaded to restore (then synchronised).
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "engine/adamw.h"
#include "engine/gpt_model.h"
#include "engine/safetensors.h"

namespace bubblescope::engine {

inline constexpr const char* kCheckpointFormat = "bubblescope-checkpoint-v1";

struct CheckpointMeta {
  layout::ModelConfig model;
  int64_t step = 0;                // optimizer steps completed
  std::string trainerJson = "{}";  // the trainer's settings (seed, batch, schedule...)
};

// `model` and `optimizer` on any device (their tensors in model.backend()'s memory).
Status writeCheckpoint(const std::string& path, GptModel& model, AdamW& optimizer,
                       const CheckpointMeta& meta);

class Checkpoint {
 public:
  // Reads and validates the file and its metadata.
  static Result<Checkpoint> read(const std::string& path);
  const CheckpointMeta& meta() const { return meta_; }
  const std::string& path() const { return file_.path(); }
  // An error naming both shapes when `model` is not the saved model's shape.
  Status checkModel(const layout::ModelConfig& model) const;
  // Copies every parameter of `model` and its AdamW moments and step count.
  Status restore(GptModel& model, AdamW& optimizer) const;

 private:
  Checkpoint(SafetensorsFile file, CheckpointMeta meta)
      : file_(std::move(file)), meta_(std::move(meta)) {}
  SafetensorsFile file_;
  CheckpointMeta meta_;
};

// "vocab 256, seq_len 32, layers 2, hidden 32, heads 4, mlp_ratio 4"
std::string describeShape(const layout::ModelConfig& config);

}  // namespace bubblescope::engine
