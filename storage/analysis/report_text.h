// Human-readable run reports: the terminal tables of `bubblescope-cli
// report` and the same content as Markdown (--markdown).
#pragma once

#include <cstdint>
#include <string>

#include "storage/analysis/run_report.h"

namespace bubblescope::analysis {

// One line summing up the layout: "dp2 tp1 pp2 zero1 1f1b m=8 b=4
// params=1.23M" (v=2 only when interleaved); "no layout" when none is known.
std::string layoutSummary(const std::optional<layout::Layout>& layout);

// Sections: header and notes, step time and throughput, ranks, stages
// (bubble measured beside the formula), memory, communication volume,
// stragglers, advice (when the report holds any: advice.h), steps (the
// first 20). After the GPU time, the GPU kernel sections (gpu_kernel_text.h)
// with the top `topKernels` kernels of each rank.
std::string reportToText(const RunReport& report, bool markdown, int32_t topKernels = kDefaultTopKernels);

}  // namespace bubblescope::analysis
