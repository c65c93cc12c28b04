#include "gui/span_palette.h"

#include <array>

namespace bubblescope::gui {

namespace {

using trace_model::EventKind;

struct KindStyle {
  EventKind kind;
  const char* label;
  QRgb rgb;
};

// Legend order. Compute kinds are warm/green, collectives blue/purple,
// point-to-point teal, the wait kind grey, GPU copies brown.
constexpr std::array<KindStyle, trace_model::kEventKindCount> kStyles = {{
    {EventKind::kForward, "forward", 0x4caf50},
    {EventKind::kBackward, "backward", 0xff9800},
    {EventKind::kBackwardInput, "backward (input)", 0xffb74d},
    {EventKind::kBackwardWeight, "backward (weight)", 0xe65100},
    {EventKind::kRecompute, "recompute", 0xcddc39},
    {EventKind::kOptimizer, "optimizer", 0xe53935},
    {EventKind::kKernel, "GPU kernel", 0x8d6e63},
    {EventKind::kAllReduce, "all-reduce", 0x1e88e5},
    {EventKind::kReduceScatter, "reduce-scatter", 0x5e35b1},
    {EventKind::kAllGather, "all-gather", 0x8e24aa},
    {EventKind::kBroadcast, "broadcast", 0x3949ab},
    {EventKind::kReduce, "reduce", 0x0288d1},
    {EventKind::kAllToAll, "all-to-all", 0xc2185b},
    {EventKind::kSend, "send", 0x00897b},
    {EventKind::kRecv, "receive", 0x26c6da},
    {EventKind::kWait, "wait (bubble)", 0x9e9e9e},
    {EventKind::kDataLoad, "data load", 0xfdd835},
    {EventKind::kMemcpy, "memcpy", 0x6d4c41},
    {EventKind::kMemset, "memset", 0xa1887f},
    {EventKind::kOther, "other", 0x78909c},
}};

const KindStyle& styleOf(EventKind kind) {
  for (const KindStyle& s : kStyles) {
    if (s.kind == kind) return s;
  }
  return kStyles.back();
}

}  // namespace

QColor colourOf(trace_model::EventKind kind) {
  return QColor::fromRgb(styleOf(kind).rgb);
}

QString labelOf(trace_model::EventKind kind) {
  return QString::fromUtf8(styleOf(kind).label);
}

std::vector<LegendEntry> legendEntries() {
  std::vector<LegendEntry> entries;
  entries.reserve(kStyles.size());
  for (const KindStyle& s : kStyles) {
    entries.push_back({s.kind, QString::fromUtf8(s.label), QColor::fromRgb(s.rgb)});
  }
  return entries;
}

QColor chunkShade(const QColor& kindColour, int32_t chunk) {
  if (chunk <= 0) return kindColour;
  return kindColour.darker(100 + 45 * ((chunk - 1) % 3 + 1));
}

QColor unindexedColour(const QPalette& palette) {
  const bool dark = palette.color(QPalette::Base).lightness() < 128;
  return dark ? QColor(0x50, 0x50, 0x58) : QColor(0xd4, 0xd6, 0xdb);
}

QColor bubbleHatchColour() {
  return QColor(0xd3, 0x2f, 0x2f);
}

QColor arrowColour(const QPalette& palette) {
  const bool dark = palette.color(QPalette::Base).lightness() < 128;
  return dark ? QColor(0xb0, 0xbe, 0xc5) : QColor(0x37, 0x47, 0x4f);
}

}  // namespace bubblescope::gui
