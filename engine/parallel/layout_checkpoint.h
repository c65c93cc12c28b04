// Checkpoints of any layout: every rank's part of the model (its pipeline
// stage's chunks, its tp slices, its ZeRO shards of the parameters and of
// AdamW's m and v) is gathered to one rank and written in the single-process
// format (checkpoint.h), so the checkpoint of a parallel run is the model the
// single-process run on the same global batch would have saved: the same
// names, full shapes, moments and step count, loadable by `train --load`.
//
// How: each chunk's GradientSync gives full (un-ZeRO'd) values (all-gathers
// over dp where sharded), tp slices are reassembled (all-gathers over tp);
// then on the ranks of dp and tp coordinate 0 every pipeline stage but the
// first sends its values to stage 0 (one message over pp), which places them
// by name into a full-shape model of its own and writes the file.
//
// Contract: collective over the groups given (null: not part of the layout);
// every rank of the job calls it at the same point. Only the writing rank
// (dp 0, tp 0, pp 0) touches `path`; `wrote` is set on it alone. Values are
// gathered on the host, whatever the device (GradientSync reads them back).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/checkpoint.h"
#include "engine/parallel/communicator.h"
#include "engine/parallel/gradient_sync.h"

namespace bubblescope::engine {

struct LayoutCheckpointGroups {
  Communicator* dp = nullptr;
  Communicator* tp = nullptr;
  Communicator* pp = nullptr;
  // The rank's backend when the groups move its device buffers (a GPU rank):
  // the host values are staged through it (host_values_transfer.h). Null:
  // host memory.
  Backend* backend = nullptr;
};

// `syncs`: this rank's chunks in chunk order (chunk c is virtual stage
// c·p + stage); `split`: layers per virtual stage (rank_trainer.h's
// pipelineSlots); `meta`: the single-process equivalent's model, step and
// settings.
Status saveLayoutCheckpoint(const std::string& path, const std::vector<GradientSync*>& syncs,
                            const LayoutCheckpointGroups& groups, const std::vector<int32_t>& split,
                            const CheckpointMeta& meta, bool& wrote);

}  // namespace bubblescope::engine
