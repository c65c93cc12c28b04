// The help page (Help ▸ Concepts and shortcuts): what bubbles, overlap and
// the formulas mean, a sentence each, and every keyboard shortcut.
#pragma once

#include <QString>

namespace bubblescope::gui {

// Rich text (Qt's HTML subset) for a QTextBrowser.
QString helpHtml();

}  // namespace bubblescope::gui
