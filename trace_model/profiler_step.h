// profilerStepNumber: the step a PyTorch profiler annotation names.
// torch.profiler marks each iteration with a CPU span "ProfilerStep#N";
// Holistic Trace Analysis reads N with ProfilerStep\s*#\s*(\d+) at the
// name's start, and so do the Kineto importer (a rank's steps) and the GPU
// time analysis (HTA's last-step cut).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace bubblescope::trace_model {

// "ProfilerStep#12" -> 12, "ProfilerStep # 3" -> 3; nullopt for any other
// name (or more than 9 digits).
std::optional<int32_t> profilerStepNumber(std::string_view name);

}  // namespace bubblescope::trace_model
