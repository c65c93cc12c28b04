#include "cli/backend_option.h"

#include <cstdio>

#include "engine/backend_factory.h"
#include "engine/device_selection.h"
#include "engine/layout/layout.h"

namespace bubblescope::cli {

Result<TrainingDevice> resolveTrainingBackend(const std::string& name,
                                              engine::TrainingScope scope) {
  BS_ASSIGN_OR_RETURN(const layout::Backend requested, layout::parseBackend(name));
  BS_ASSIGN_OR_RETURN(const engine::BackendChoice choice, engine::chooseBackend(requested, scope));
  if (!choice.note.empty()) std::fprintf(stderr, "note: %s\n", choice.note.c_str());
  if (choice.device != engine::Device::kCuda) return TrainingDevice{choice.device, 0};
  BS_ASSIGN_OR_RETURN(
      const engine::DeviceSelection gpu,
      engine::selectDevice({.environment = engine::launcherEnvironmentOfThisProcess(),
                            .visibleDevices = choice.visibleDevices}));
  return TrainingDevice{choice.device, gpu.device};
}

ExitCode backendExitCode(const Status& status) {
  return status.code() == StatusCode::kInvalidArgument ? 2 : 1;
}

}  // namespace bubblescope::cli
