// measureCodecCost(): what one gradient compression costs this machine per
// gradient element (issue 35: the cost model charged constants measured on
// a busy machine, so compressed layouts were predicted up to 40% slow).
//
// It runs the engine's own compressed reduction of one bucket
// (makeBucketReduction: encode with error feedback, the reduced type's sums,
// decode) over a MirrorCommunicator of `groupSize` ranks, so every byte of
// arithmetic a rank does is real and nothing crosses a link, and the plain
// fp32 all-reduce of the same bucket the same way. The codec is what the
// compressed reduction costs beyond the plain one's share of the bytes it
// still sends (the cost model prices those bytes with the link's fit, which
// already holds the fp32 sums):
//   codec ns per element = (t_compressed - t_plain / ratio) / n, at least 0,
// ratio = the plain all-reduce's bus bytes / the compressed reduction's
// (docs/parallel.md, "What compression costs in the cost model": the same
// formula `bench allreduce` measures over a real link). Of that, the part
// that runs inside the collectives (the reduced type's sums: int8 blocks
// decoded, added and quantised again; halves widened and narrowed), which a
// trace shows inside the collective's span, not around it:
//   reduce ns per element = (t_in_collectives - t_plain / ratio) / n,
// at least 0 and at most the codec's, t_in_collectives the compressed
// round's time inside the mirror's collectives (MirrorCommunicator).
//
// Times are the least over `repetitions` timed rounds after one untimed
// round (the first allocates, and PowerSGD starts its power iteration), in
// wall time and in the thread's CPU time (tracer/clock.h): on a machine
// other work shares, the least and the CPU time are what the code costs.
//
// Gradients are a fixed pseudo-random normal sample (seed 1), shaped as
// `shapes` laid end to end (rows x cols each; cols 1 or rows 1 is a vector,
// the rest are the matrices PowerSGD may factorise, as the engine's flat
// buffer holds a stage's parameters). Errors: an empty bucket, repetitions
// < 1, a group < 2, a spec the reductions refuse, none (nothing to measure).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "common/result.h"
#include "engine/layout/grad_comm.h"

namespace bubblescope::engine {

struct CodecCost {
  int64_t elements = 0;
  double ratio = 0;                                  // plain bus bytes / compressed bus bytes
  double compressedWallNs = 0, compressedCpuNs = 0;  // one reduction of the bucket
  double plainWallNs = 0, plainCpuNs = 0;            // one fp32 all-reduce of it
  double wallNsPerElement = 0, cpuNsPerElement = 0;  // the codec, as above
  double inCollectivesWallNs = 0, inCollectivesCpuNs = 0;  // of one compressed reduction
  // The codec's part inside the collectives, as above.
  double reduceWallNsPerElement = 0, reduceCpuNsPerElement = 0;
  int32_t repetitions = 0;
};

Result<CodecCost> measureCodecCost(const layout::GradCompressionSpec& spec,
                                   const std::vector<std::pair<int64_t, int64_t>>& shapes,
                                   int32_t groupSize, int32_t repetitions);

}  // namespace bubblescope::engine
