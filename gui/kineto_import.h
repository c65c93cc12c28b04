// File > Import PyTorch traces…: asks for Kineto traces (one per rank) and,
// when no trace file is open, where to store them; imports them as one run
// (storage/import, docs/import.md) under a progress dialog. Interactive only:
// headless modes never call it.
#pragma once

#include <QString>

#include "common/result.h"

class QWidget;

namespace bubblescope::gui {

// The trace file that now holds the imported run; "" when the user cancelled.
Result<QString> importKinetoTraces(QWidget* parent, const QString& openTrace);

}  // namespace bubblescope::gui
