// The application palette. By default Bubblescope follows the system's light
// or dark palette (every widget paints from QPalette, charts re-theme on
// QEvent::PaletteChange); `--palette light|dark` forces Fusion with a light
// or dark palette (screenshots, desktops whose theme Qt cannot read).
#pragma once

namespace bubblescope::gui {

void applyPalette(bool dark);

}  // namespace bubblescope::gui
