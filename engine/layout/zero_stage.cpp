#include "engine/layout/zero_stage.h"

#include <string>

namespace bubblescope::layout {

Result<ZeroStage> zeroStageFromNumber(int64_t number) {
  if (number < 0 || number > 3) {
    return Status::invalidArgument("zero_stage " + std::to_string(number) +
                                   " is unknown (known: 0, 1, 2, 3)");
  }
  return static_cast<ZeroStage>(number);
}

}  // namespace bubblescope::layout
