#include "cli/codec_calibration.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "engine/layout/layout.h"
#include "engine/parallel/codec_benchmark.h"
#include "planning/grad_reduction_cost.h"

namespace bubblescope::cli {

namespace {

// The engine's default gradient bucket, in fp32 elements (the layout's
// bucket_mb). A function: a Layout made during static initialisation would
// read other files' statics before they exist.
int64_t defaultBucketElements() {
  return static_cast<int64_t>(layout::Layout{}.bucketMb * (1 << 20) / 4);
}

struct Measured {
  const char* spec;
  int32_t size;  // the entry's micro-batch size column: PowerSGD's rank, else 0
};

}  // namespace

Result<std::vector<layout::OpCostEntry>> codecCosts(const layout::ModelConfig& model, bool progress,
                                                    int32_t repetitions) {
  constexpr int32_t kGroup = 2;
  const int64_t bucketElements = defaultBucketElements();
  std::vector<std::pair<int64_t, int64_t>> shapes;
  int64_t n = 0;
  for (const layout::MatrixShape& s :
       layout::gradTensors(model, 1, 0, model.numLayers, true, true)) {
    if (!shapes.empty() && n + s.rows * s.cols > bucketElements) break;
    shapes.emplace_back(s.rows, s.cols);
    n += s.rows * s.cols;
  }
  std::vector<layout::OpCostEntry> out;
  for (const Measured& m :
       {Measured{"fp16", 0}, Measured{"bf16", 0}, Measured{"int8", 0}, Measured{"topk:0.1", 0},
        Measured{"powersgd:1", 1}, Measured{"powersgd:4", 4}}) {
    BS_ASSIGN_OR_RETURN(const layout::GradCompressionSpec spec,
                        layout::parseGradCompression(m.spec));
    BS_ASSIGN_OR_RETURN(const engine::CodecCost c,
                        engine::measureCodecCost(spec, shapes, kGroup, repetitions));
    if (progress) {
      std::fprintf(stderr,
                   "calibrate: grad compression %s: %.2f ns per element (%.2f CPU) on %lld "
                   "elements, %.2f (%.2f CPU) of them inside its collectives\n",
                   m.spec, c.wallNsPerElement, c.cpuNsPerElement,
                   static_cast<long long>(c.elements), c.reduceWallNsPerElement,
                   c.reduceCpuNsPerElement);
    }
    const std::string kind = layout::gradCompressionKindName(spec.kind);
    out.push_back({layout::kCodecPart, kind, m.size, 1, c.wallNsPerElement, c.cpuNsPerElement,
                   repetitions});
    out.push_back({layout::kCodecPart, kind + layout::kCodecReduceSuffix, m.size, 1,
                   c.reduceWallNsPerElement, c.reduceCpuNsPerElement, repetitions});
  }
  return out;
}

Status addCodecCosts(layout::Calibration& c, bool progress) {
  BS_ASSIGN_OR_RETURN(auto entries, codecCosts(c.model, progress));
  for (const layout::OpCostEntry& e : entries) {
    std::erase_if(c.ops, [&](const layout::OpCostEntry& o) { return o.sameKey(e); });
    c.ops.push_back(e);
  }
  return Status::ok();
}

}  // namespace bubblescope::cli
