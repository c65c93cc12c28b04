// Rewrites the hatch patterns QSvgGenerator writes so that every SVG renderer
// draws them.
//
// QSvgGenerator writes a Qt pattern brush (Qt::BDiagPattern, ...) as a
// <pattern> whose one rect is filled with the colour through a <mask> of the
// pattern's pixels. Renderers without mask support inside patterns
// (ImageMagick's own, some viewers) fill that rect solid: a black or red
// block where a hatch should be. inlinePatternMasks() puts the mask's pixel
// rects into the pattern itself, filled with the colour, and drops the masks:
// the same picture with only <pattern> and <rect>.
#pragma once

#include <QByteArray>

namespace bubblescope::gui {

// The SVG text with every masked pattern rect replaced by the mask's rects in
// the rect's fill; text without such patterns is returned unchanged.
QByteArray inlinePatternMasks(const QByteArray& svg);

}  // namespace bubblescope::gui
