// RunProgress: what one line of a training run's output says about its
// progress, e.g. "step     3/40 | loss 5.2400 | lr 3.00e-04 | ... | 12345 tok/s".
//
// Contract: pure; a line without "step N/M" is not progress (nullopt). Loss
// and tokens/s are optional within a progress line. A "rank K:" or other
// prefix before "step" is allowed (mpirun tags lines).
#pragma once

#include <QString>
#include <optional>

namespace bubblescope::gui {

struct RunProgress {
  int step = 0;   // as printed (the CLI counts from 1)
  int steps = 0;  // the run's step count
  std::optional<double> loss;
  std::optional<double> tokensPerS;
};

std::optional<RunProgress> parseProgressLine(const QString& line);

// "step 3/40 · loss 5.24 · 12 345 tok/s" (the parts that are known).
QString progressText(const RunProgress& progress);

}  // namespace bubblescope::gui
