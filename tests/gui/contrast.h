// WCAG's contrast ratio of two colours, for the tests that check what stands
// out on both palettes.
#pragma once

#include <QColor>
#include <algorithm>
#include <cmath>

namespace bubblescope::testing {

// 1 (the same luminance) to 21 (black on white).
inline double contrastRatio(const QColor& a, const QColor& b) {
  auto luminance = [](const QColor& c) {
    auto lin = [](double v) {
      return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * lin(c.redF()) + 0.7152 * lin(c.greenF()) + 0.0722 * lin(c.blueF());
  };
  const double la = luminance(a), lb = luminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

}  // namespace bubblescope::testing
