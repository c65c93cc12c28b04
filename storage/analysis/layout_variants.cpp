#include "storage/analysis/layout_variants.h"

#include <algorithm>

#include "planning/planner.h"

namespace bubblescope::analysis {
namespace {

using layout::Layout;
using layout::ScheduleKind;
using layout::ZeroStage;

// The global batch in sequences follows dp × m × b when the layout sets one.
void syncGlobalBatch(Layout& l) {
  if (l.globalBatch) l.globalBatch = int64_t{l.dp} * l.microBatches * l.microBatchSize;
}

// m' micro-batches; b shrinks by m'/m when that divides it (global batch kept).
Layout withMicroBatches(const Layout& l, int32_t m, bool keepGlobalBatch) {
  Layout out = l;
  out.microBatches = m;
  if (keepGlobalBatch && int64_t{l.microBatchSize} * l.microBatches % m == 0) {
    out.microBatchSize = static_cast<int32_t>(int64_t{l.microBatchSize} * l.microBatches / m);
  }
  syncGlobalBatch(out);
  return out;
}

Layout withSchedule(const Layout& l, ScheduleKind kind) {
  Layout out = l;
  out.schedule = kind;
  out.virtualChunks = kind == ScheduleKind::kInterleaved ? 2 : 1;
  out.stageLayers.clear();  // pp × v entries: v changes
  return out;
}

// Keeps the valid variants that differ from l, once each.
std::vector<Layout> keepValid(const Layout& l, const std::vector<Layout>& candidates) {
  std::vector<Layout> out;
  for (const Layout& c : candidates) {
    if (c == l || std::find(out.begin(), out.end(), c) != out.end()) continue;
    if (c.dp < 1 || c.tp < 1 || c.pp < 1 || c.microBatches < 1 || c.microBatchSize < 1) continue;
    if (layout::validate(c, static_cast<int32_t>(l.worldSize())).isOk()) out.push_back(c);
  }
  return out;
}

}  // namespace

Layout withDegrees(const Layout& l, int32_t dp, int32_t tp, int32_t pp) {
  Layout out = l;
  out.dp = dp;
  out.tp = tp;
  out.pp = pp;
  if (int64_t{l.microBatches} * l.dp % dp == 0) {
    out.microBatches = static_cast<int32_t>(int64_t{l.microBatches} * l.dp / dp);
  }
  if (pp != l.pp) out.stageLayers.clear();
  if (pp == 1 && out.schedule == ScheduleKind::kInterleaved) {
    out.schedule = ScheduleKind::kOneFOneB;
    out.virtualChunks = 1;
  }
  if (dp == 1) out.zeroStage = ZeroStage::kNone;
  syncGlobalBatch(out);
  return out;
}

std::vector<Layout> commVariants(const Layout& l, const std::string& dim) {
  std::vector<Layout> c;
  if (dim == "dp" || dim == "zero") {
    Layout overlap = l;
    overlap.overlap = true;
    c.push_back(overlap);
    // The default gradient bucket (25 MiB): tiny buckets pay a collective's
    // latency each.
    if (l.bucketElements || l.bucketMb != Layout{}.bucketMb) {
      Layout bucket = l;
      bucket.bucketElements.reset();
      bucket.bucketMb = Layout{}.bucketMb;
      c.push_back(bucket);
    }
    if (l.zeroStage == ZeroStage::kGradients || l.zeroStage == ZeroStage::kParameters) {
      Layout z = l;
      z.zeroStage = ZeroStage::kOptimizer;
      c.push_back(z);
    }
    // Fewer bytes on the link: plan's compressions (ZeRO 0 only, as `run`
    // requires; validate drops the rest). Each changes the gradients
    // (docs/parallel.md); priced only when the calibration measured its codec.
    if (!l.gradCompression.compresses()) {
      for (const layout::GradCompressionSpec& spec : layout::defaultPlanCompressions()) {
        if (!spec.compresses()) continue;
        Layout compressed = l;
        compressed.gradCompression = spec;
        c.push_back(compressed);
      }
    }
    if (l.dp % 2 == 0) {
      c.push_back(withDegrees(l, l.dp / 2, l.tp, l.pp * 2));
      c.push_back(withDegrees(l, l.dp / 2, l.tp * 2, l.pp));
    }
    c.push_back(withMicroBatches(l, l.microBatches * 2, /*keepGlobalBatch=*/false));
  } else if (dim == "tp" && l.tp % 2 == 0) {
    c.push_back(withDegrees(l, l.dp * 2, l.tp / 2, l.pp));
    c.push_back(withDegrees(l, l.dp, l.tp / 2, l.pp * 2));
  } else if (dim == "pp") {
    if (l.pp % 2 == 0) {
      c.push_back(withDegrees(l, l.dp * 2, l.tp, l.pp / 2));
      c.push_back(withDegrees(l, l.dp, l.tp * 2, l.pp / 2));
    }
    if (l.microBatches % 2 == 0) {
      Layout fewer = l;
      fewer.microBatches = l.microBatches / 2;
      fewer.microBatchSize = l.microBatchSize * 2;
      syncGlobalBatch(fewer);
      c.push_back(fewer);
    }
  }
  return keepValid(l, c);
}

std::vector<Layout> bubbleVariants(const Layout& l) {
  std::vector<Layout> c;
  for (ScheduleKind kind : layout::allScheduleKinds()) {
    if (kind != l.schedule) c.push_back(withSchedule(l, kind));
  }
  c.push_back(withMicroBatches(l, l.microBatches * 2, /*keepGlobalBatch=*/true));
  if (l.pp % 2 == 0) c.push_back(withDegrees(l, l.dp * 2, l.tp, l.pp / 2));
  return keepValid(l, c);
}

std::vector<Layout> microBatchVariants(const Layout& l, int32_t perStage) {
  std::vector<Layout> c;
  const int64_t most = int64_t{perStage} * l.pp;
  for (int64_t m = int64_t{l.microBatches} * 2; m <= std::max<int64_t>(most, l.microBatches * 2);
       m *= 2) {
    c.push_back(withMicroBatches(l, static_cast<int32_t>(m), /*keepGlobalBatch=*/true));
    c.push_back(withMicroBatches(l, static_cast<int32_t>(m), /*keepGlobalBatch=*/false));
  }
  return keepValid(l, c);
}

std::vector<Layout> memoryVariants(const Layout& l) {
  std::vector<Layout> c;
  const int32_t stage = layout::zeroStageNumber(l.zeroStage);
  for (int32_t z = stage; z >= 0; --z) {
    for (bool recompute : {l.recompute, false}) {
      Layout v = l;
      auto zero = layout::zeroStageFromNumber(z);
      if (!zero.isOk()) continue;
      v.zeroStage = *zero;
      v.recompute = recompute;
      c.push_back(v);
    }
  }
  return keepValid(l, c);
}

}  // namespace bubblescope::analysis
