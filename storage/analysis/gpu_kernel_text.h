// The GPU kernel sections of `report`'s text and Markdown (docs/analysis.md,
// "GPU kernels"), after the GPU time sections: per rank the kernel time by
// HTA kernel type; the top N kernels of each rank by total time with their
// spread over the ranks; the CUDA launch statistics; the memory copies by
// kind. Empty when no rank has GPU records (gpu_report_text.h says so).
//
// Kernel names longer than kKernelNameWidth characters are cut (the JSON
// keeps them whole); in Markdown a '|' in a name is escaped.
#pragma once

#include <cstdint>
#include <string>

#include "storage/analysis/run_report.h"

namespace bubblescope::analysis {

inline constexpr size_t kKernelNameWidth = 60;

std::string gpuKernelText(const RunReport& report, bool markdown,
                          int32_t topKernels = kDefaultTopKernels);

}  // namespace bubblescope::analysis
